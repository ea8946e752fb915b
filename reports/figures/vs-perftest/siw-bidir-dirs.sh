# 64 KiB WRITE both ways on siw0 (vs-perftest's "same" row: -n 1000 -t 128 -Q 32 -I 0),
# clients on CPU 1, servers on CPU 0, ROUNDS interleaved rounds: perftest -b's figure
# (both directions summed) beside rdmasweep's, with rdmasweep's two directions and
# their windows apart, and siw's transmit CPU of each QP the run made, in the order
# they were made (siw-txcpus.sh). Is its 0.70x in the ten-round table one direction
# or both, and does it follow where siw put the QPs?
# Run inside the lab: tools/rxe-lab --provider siw -- bash reports/figures/vs-perftest/siw-bidir-dirs.sh [ROUNDS]
source "$(dirname "$0")/siw-txcpus.sh"
rounds=${1:-5} p=19500
f=(-n 1000 -s 65536 -q 1 -t 128 -Q 32 -I 0)
perftest() {
  p=$((p+1)); taskset -c 0 timeout 65 ib_write_bw -d siw0 -R -F -p $p --report_gbits -b "${f[@]}" >/dev/null 2>&1 & sleep 1
  echo "perftest  Gb/s $(taskset -c 1 timeout 60 ib_write_bw -d siw0 -R -F -p $p --report_gbits -b "${f[@]}" $A 2>/dev/null |
    awk '$1==65536{print $4}')"
  wait
  echo "  tx cpus $(txcpus)"
}
rdmasweep() {
  p=$((p+1)); taskset -c 0 timeout 65 $B server --bind 127.0.0.1 --port $p --once -d siw0 >/dev/null 2>&1 & sleep 1
  taskset -c 1 timeout 60 $B client 127.0.0.1 --port $p -d siw0 --no-progress --op write --mode bw --bidir --warmup 0 \
    --clock tsc --poll-batch 16 "${f[@]}" --out /tmp/w.json >/dev/null 2>&1
  wait
  /usr/bin/python3 -c "
import json
b = json.load(open('/tmp/w.json'))['benchmarks'][0]
g = lambda k: b[k] * 8e-9
print(f\"rdmasweep Gb/s {g('total_bytes_per_second'):.4f}: client to server {g('bytes_per_second'):.4f} in \"
      f\"{b['seconds'] * 1e3:.1f} ms, server to client {g('reverse_bytes_per_second'):.4f} in \"
      f\"{1e3 * b['reverse_messages'] * 65536 / b['reverse_bytes_per_second']:.1f} ms\")"
  echo "  tx cpus $(txcpus)"
}
for round in $(seq 1 "$rounds"); do
  if ((round % 2)); then order=(perftest rdmasweep); else order=(rdmasweep perftest); fi
  for t in "${order[@]}"; do $t | sed "1s/^/round $round /"; done
done
