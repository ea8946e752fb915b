# 64 KiB WRITE both ways on siw0 with rdmasweep alone, the "same" row's flags, clients
# on CPU 1 and servers on CPU 0 (as siw-bidir-modes.sh), RUNS runs, each sampling its
# client's direction every 20 ms (--interval 0.02): does a slow run slow down from its
# first messages or part way through? Per run: the rate (both directions, Gb/s),
# siw's transmit threads' CPU time (ms), and the client's rate in each 20 ms (Gb/s).
# Run inside the lab: tools/rxe-lab --provider siw -- bash reports/figures/vs-perftest/siw-bidir-timeline.sh [RUNS]
B=./build/bench/rdmasweep
runs=${1:-12} p=19900
f=(-n 1000 -s 65536 -q 1 -t 128 -Q 32 -I 0)
tick=$((1000 / $(getconf CLK_TCK)))
txms() { for n in 0 1; do awk -v t=$tick '{printf "%d ", ($14+$15)*t}' "/proc/$(pgrep -x "siw_tx/$n")/stat"; done; }
for run in $(seq 1 "$runs"); do
  p=$((p+1)); taskset -c 0 timeout 65 $B server --bind 127.0.0.1 --port $p --once -d siw0 >/dev/null 2>&1 & sleep 1
  read -ra t0 <<<"$(txms)"
  taskset -c 1 timeout 60 $B client 127.0.0.1 --port $p -d siw0 --no-progress --op write --mode bw --bidir --warmup 0 \
    --clock tsc --poll-batch 16 "${f[@]}" --interval 0.02 --out /tmp/t.json >/dev/null 2>&1
  wait
  read -ra t1 <<<"$(txms)"
  /usr/bin/python3 - "$run" $((t1[0] - t0[0])) $((t1[1] - t0[1])) <<'PY'
import glob, json, sys
run, tx0, tx1 = sys.argv[1:]
b = json.load(open('/tmp/t.json'))['benchmarks'][0]
def find(o):
    if isinstance(o, dict):
        if 'timeline' in o: return o['timeline']
        o = list(o.values())
    if isinstance(o, list):
        for v in o:
            t = find(v)
            if t: return t
tl = find(json.load(open('/tmp/t.hist.json')))
tl = tl[0] if isinstance(tl, list) else tl
t, m = [0] + tl['t_s'], [0] + tl['messages']
rates = [(m[i + 1] - m[i]) * 65536 * 8e-9 / (t[i + 1] - t[i]) for i in range(len(t) - 1)]
print(f"run {run} Gb/s {b['total_bytes_per_second'] * 8e-9:.3f} siw_tx/0 {tx0} siw_tx/1 {tx1} ms")
print("  client Gb/s per 20 ms: " + " ".join(f"{r:.2f}" for r in rates))
PY
  rm -f /tmp/t.hist.json
done
