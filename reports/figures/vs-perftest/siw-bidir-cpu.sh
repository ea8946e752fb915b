# 64 KiB WRITE both ways on siw0 (vs-perftest's "same" row: -n 1000 -t 128 -Q 32 -I 0),
# each tool's client pinned to CPU 0 and then CPU 1 (server on the other): does the
# 0.70x of the ten-round table (clients on CPU 1) follow the client's CPU as READ
# latency's gap does? Gb/s: both directions summed, as perftest -b reports.
B=./build/bench/rdmasweep
A=$(ip -4 -o addr show dev dummy0 | awk '{print $4}' | cut -d/ -f1)
p=19300
for r in 1 2 3; do
  for c in 0 1; do
    s=$((1 - c))
    p=$((p+1)); taskset -c $s ib_write_bw -d siw0 -R -F -p $p -n 1000 -s 65536 -q 1 --report_gbits -b -t 128 -Q 32 -I 0 >/dev/null 2>&1 & sleep 1
    echo "client-cpu $c perftest  Gb/s $(taskset -c $c timeout 120 ib_write_bw -d siw0 -R -F -p $p -n 1000 -s 65536 -q 1 --report_gbits -b -t 128 -Q 32 -I 0 $A 2>/dev/null | awk '$1==65536{print $4}')"; wait
    p=$((p+1)); taskset -c $s $B server --bind 127.0.0.1 --port $p --once -d siw0 >/dev/null 2>&1 & sleep 1
    taskset -c $c $B client 127.0.0.1 --port $p -d siw0 --no-progress --op write --mode bw -q 1 -n 1000 --out /tmp/w.json -s 65536 --bidir --warmup 0 --clock tsc --poll-batch 16 -t 128 -Q 32 -I 0 >/dev/null 2>&1
    wait
    echo "client-cpu $c rdmasweep Gb/s $(/usr/bin/python3 -c "import json;b=json.load(open('/tmp/w.json'))['benchmarks'][0];print(round(b['total_bytes_per_second']*8/1e9,4))")"
  done
done
