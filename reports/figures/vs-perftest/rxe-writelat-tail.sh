# 64 B WRITE latency on rxe0, perftest (-H: every round trip's one-way time) and
# rdmasweep (its histogram, each sample at its bucket's middle), ROUNDS interleaved rounds, servers on CPU 0, clients on
# CPU 1, 3,000 round trips each, vs-perftest's "same" row: how many samples of each
# run lie above each threshold. Where does rdmasweep's p99 (30th worst) come from?
# Run inside the lab: tools/rxe-lab -- bash reports/figures/vs-perftest/rxe-writelat-tail.sh [ROUNDS]
B=./build/bench/rdmasweep
rounds=${1:-6} p=19900
above() {  # one-way µs on stdin, one a line
  /usr/bin/python3 -c "
import sys
v = sorted(float(x) for x in sys.stdin.read().split())
print('n', len(v), 'p50 %.2f' % v[len(v) // 2], 'p99 %.2f' % v[int(len(v) * 0.99)], 'above',
      ' '.join('%g:%d' % (t, sum(x > t for x in v)) for t in (12, 13, 15, 20, 25, 30, 40, 60)))"
}
pt() {
  p=$((p+1)); taskset -c 0 timeout 60 ib_write_lat -d rxe0 -x 1 -F -p $p -n 3000 -s 64 -I 0 >/dev/null 2>&1 & sleep 1
  taskset -c 1 timeout 60 ib_write_lat -d rxe0 -x 1 -F -p $p -n 3000 -s 64 -I 0 -H 127.0.0.1 2>/dev/null |
    awk -F', ' 'NF==2 && $1 ~ /^[0-9]+$/ {print $2}' | above; wait
}
rs() {
  p=$((p+1)); taskset -c 0 timeout 60 $B server --bind 127.0.0.1 --port $p --once -d rxe0 -x 1 >/dev/null 2>&1 & sleep 1
  taskset -c 1 timeout 60 $B client 127.0.0.1 --port $p -d rxe0 -x 1 --no-progress --op write --mode lat -q 1 -n 3000 \
    -s 64 --warmup 0 --clock tsc --poll-batch 16 -I 0 --out /tmp/r.json >/dev/null 2>&1; wait
  /usr/bin/python3 -c "
import json
h = next(iter(json.load(open('/tmp/r.hist.json'))['points'].values()))['histogram']
for lo, hi, n in h['buckets']:
    for _ in range(n): print((lo + hi) / 2e3)" | above
}
for round in $(seq 1 "$rounds"); do
  if ((round % 2)); then order=(pt rs); else order=(rs pt); fi
  for t in "${order[@]}"; do echo "round $round $t $($t)"; done
done
