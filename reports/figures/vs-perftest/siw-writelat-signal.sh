# 64 B WRITE latency on siw0: does signaling explain rdmasweep's p99? ib_write_lat runs a
# send queue of 1 (DEF_TX_LAT), so every WRITE is signaled and it polls each one's
# completion before it looks for the next pong. The same-parameters table passes
# neither tool -t or -Q at latency points, so rdmasweep ran its defaults there: a send
# queue of 128, one WRITE in 32 signaled. Variants: perftest as in the table, rdmasweep
# as in the table, rdmasweep -Q 1 (every WRITE signaled), rdmasweep -t 1 -Q 1 (and each
# completion polled before the next ping, as perftest). 10 rounds, the order rotated each
# round, servers on CPU 0, clients on CPU 1, 3,000 round trips each.
# Run inside the lab: tools/rxe-lab --provider siw -- bash reports/figures/vs-perftest/siw-writelat-signal.sh
source "$(dirname "$0")/lat-summary.sh"
p=19900
A=$(ip -4 -o addr show dev dummy0 | awk '{print $4}' | cut -d/ -f1)
perftest() {
  p=$((p+1)); taskset -c 0 ib_write_lat -d siw0 -R -F -p $p -n 3000 -s 64 -I 0 >/dev/null 2>&1 & sleep 1
  taskset -c 1 ib_write_lat -d siw0 -R -F -p $p -n 3000 -s 64 -I 0 $A 2>/dev/null | pt_summary; wait
}
rdmasweep() {  # EXTRA FLAGS
  p=$((p+1)); taskset -c 0 $B server --bind 127.0.0.1 --port $p --once -d siw0 >/dev/null 2>&1 & sleep 1
  taskset -c 1 $B client 127.0.0.1 --port $p -d siw0 --no-progress --op write --mode lat -q 1 -n 3000 -s 64 \
    --warmup 0 --clock tsc --poll-batch 16 -I 0 "$@" --out /tmp/r.json >/dev/null 2>/tmp/r.err || { echo "failed: $(cat /tmp/r.err)"; wait; return; }
  wait
  summary
}
variants=(perftest rdmasweep rdmasweep-Q1 rdmasweep-t1Q1)
for round in $(seq 1 10); do
  for i in 0 1 2 3; do
    v=${variants[$(( (i + round) % 4 ))]}
    case $v in
      perftest) out=$(perftest) ;;
      rdmasweep) out=$(rdmasweep) ;;
      rdmasweep-Q1) out=$(rdmasweep -Q 1) ;;
      rdmasweep-t1Q1) out=$(rdmasweep -t 1 -Q 1) ;;
    esac
    echo "round $round RC $v $out"
  done
done
