# 4 KiB SEND both ways on rxe0 (vs-perftest's "same" row: -n 5000 -t 128 -Q 32 -r 512
# -I 0), servers on CPU 0, clients on CPU 1, ROUNDS interleaved rounds: perftest -b's
# figure (both directions summed) beside rdmasweep's, with rdmasweep's two directions,
# their windows and both ends' CPU apart; then one run of each under `perf record`
# (both CPUs, cpu-clock), each CPU's time by command and by symbol.
# Run inside the lab: tools/rxe-lab -- bash reports/figures/vs-perftest/rxe-send-bidir.sh [ROUNDS [noperf]]
B=./build/bench/rdmasweep
rounds=${1:-6} p=19600
f=(-d rxe0 -x 1 -n 5000 -s 4096 -q 1 -t 128 -Q 32 -r 512 -I 0)
perftest() {
  p=$((p+1)); taskset -c 0 timeout 65 ib_send_bw -F -p $p --report_gbits -b "${f[@]}" >/dev/null 2>&1 & sleep 1
  echo "perftest  Gb/s $($pre taskset -c 1 timeout 60 ib_send_bw -F -p $p --report_gbits -b "${f[@]}" 127.0.0.1 2>/dev/null |
    awk '$1==4096{print $4}')"
  wait
}
rdmasweep() {
  p=$((p+1)); taskset -c 0 timeout 65 $B server --bind 127.0.0.1 --port $p --once -d rxe0 -x 1 >/dev/null 2>&1 & sleep 1
  $pre taskset -c 1 timeout 60 $B client 127.0.0.1 --port $p --no-progress --op send --mode bw --bidir --warmup 0 \
    --clock tsc --poll-batch 16 "${f[@]}" "$@" --out /tmp/w.json >/dev/null 2>&1
  wait
  /usr/bin/python3 -c "
import json
b = json.load(open('/tmp/w.json'))['benchmarks'][0]
g = lambda k: b[k] * 8e-9
print(f\"rdmasweep Gb/s {g('total_bytes_per_second'):.4f}: client to server {g('bytes_per_second'):.4f} in \"
      f\"{b['seconds'] * 1e3:.1f} ms, server to client {g('reverse_bytes_per_second'):.4f} in \"
      f\"{1e3 * b['reverse_messages'] * 4096 / b['reverse_bytes_per_second']:.1f} ms; CPU s client \"
      f\"{b['cpu_seconds']:.3f} server {b['server_cpu_seconds']:.3f}\")"
}
# rxe0's hw counters that move only on trouble (RNR, retransmission, sequence), both
# ends summed: what changed since the last call, non-zero only.
hc=/sys/class/infiniband/rxe0/ports/1/hw_counters
snap() { for c in rcvd_rnr_err send_rnr_err retry_exceeded_err retry_rnr_exceeded_err completer_retry_err rcvd_seq_err duplicate_request out_of_seq_request; do
  [ -r $hc/$c ] && echo "$c $(cat $hc/$c)"; done; }
trouble() { snap > /tmp/hc.now; join /tmp/hc.was /tmp/hc.now | awk '$3!=$2{printf " %s +%d", $1, $3-$2}'; mv /tmp/hc.now /tmp/hc.was; echo; }
snap > /tmp/hc.was
pre=
for round in $(seq 1 "$rounds"); do
  if ((round % 2)); then order=(perftest rdmasweep); else order=(rdmasweep perftest); fi
  for t in "${order[@]}"; do echo "round $round $($t)$(trouble)"; done
done
share() {
  perf report -i "/tmp/$1.data" --stdio --sort cpu,comm 2>/dev/null | grep -v '^#' | grep -v '^$' | head -8
  perf report -i "/tmp/$1.data" --stdio --sort cpu,sym 2>/dev/null | grep -v '^#' | grep -v '^$' | head -30
}
[ "${2:-}" = noperf ] && exit 0
pre="perf record -q -o /tmp/pt.data -C 0,1 -e cpu-clock -F 4000 --"; perftest; share pt
pre="perf record -q -o /tmp/rs.data -C 0,1 -e cpu-clock -F 4000 --"; rdmasweep; share rs
