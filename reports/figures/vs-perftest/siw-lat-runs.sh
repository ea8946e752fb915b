# Sourced by siw-lat-held.sh and siw-lat-spin.sh: one 64 B latency run of each tool on
# siw0 (n round trips, 3,000 unless set; the same-parameters table's flags), its server
# pinned to CPU $sc and its client to $cc, printing "min X p50 Y p99 Z" (lat-summary.sh).
# Uses op (write|read), inl (-I 0 for WRITE), A and B (siw-txcpus.sh), p, the last port
# used, and wrap: words put before the client's command (siw-txwakes.sh: GNU time).
# A run that has not ended after 60 s is killed (perftest's READ latency client hangs
# now and then on siw) and prints no figures, which the summary leaves out.
perftest() {
  p=$((p+1)); taskset -c $sc timeout 65 ib_${op}_lat -d siw0 -R -F -p $p -n ${n:-3000} -s 64 "${inl[@]}" >/dev/null 2>&1 & sleep 1
  local out
  out=$(taskset -c $cc timeout 60 "${wrap[@]}" ib_${op}_lat -d siw0 -R -F -p $p -n ${n:-3000} -s 64 "${inl[@]}" $A 2>/dev/null | pt_summary)
  wait
  echo "${out:-no result (killed after 60 s, or failed)}"
}
rdmasweep() {  # [EXTRA-CLIENT-FLAGS]
  p=$((p+1)); taskset -c $sc timeout 65 $B server --bind 127.0.0.1 --port $p --once -d siw0 >/dev/null 2>&1 & sleep 1
  taskset -c $cc timeout 60 "${wrap[@]}" $B client 127.0.0.1 --port $p -d siw0 --no-progress --op $op --mode lat -q 1 -n ${n:-3000} -s 64 \
    --warmup 0 --clock tsc --poll-batch 16 "${inl[@]}" "$@" --out /tmp/r.json >/dev/null 2>/tmp/r.err || { echo "failed: $(cat /tmp/r.err)"; wait; return; }
  wait
  summary
}
