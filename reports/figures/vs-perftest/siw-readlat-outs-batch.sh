# 64 B READ latency on siw0: perftest; rdmasweep as vs-perftest runs it; with --outs 1 (one READ in flight
# asked of RDMA-CM, as perftest's ORD/IRD); with --poll-batch 1
B=./build/bench/rdmasweep
A=$(ip -4 -o addr show dev dummy0 | awk '{print $4}' | cut -d/ -f1)
p=19300
for r in 1 2 3 4 5; do
  p=$((p+1)); taskset -c 0 ib_read_lat -d siw0 -R -F -p $p -n 3000 -s 64 >/dev/null 2>&1 & sleep 1
  echo "perftest $(taskset -c 1 ib_read_lat -d siw0 -R -F -p $p -n 3000 -s 64 $A 2>/dev/null | awk '$1==64{print "min",$3,"p50",$5,"p99",$8}')"; wait
  for v in plain outs1 batch1; do
    p=$((p+1)); extra="--poll-batch 16"; [ $v = outs1 ] && extra="--poll-batch 16 --outs 1"; [ $v = batch1 ] && extra="--poll-batch 1"
    taskset -c 0 $B server --bind 127.0.0.1 --port $p --once -d siw0 >/dev/null 2>&1 & sleep 1
    taskset -c 1 $B client 127.0.0.1 --port $p -d siw0 --no-progress --op read --mode lat -q 1 -n 3000 --out /tmp/r.json -s 64 --warmup 0 --clock tsc $extra >/dev/null 2>&1
    wait
    /usr/bin/python3 -c "import json;b=json.load(open('/tmp/r.json'))['benchmarks'][0];print('rdmasweep-$v min',round(b['lat_min_us'],2),'p50',round(b['lat_p50_us'],2),'p99',round(b['lat_p99_us'],2))"
  done
done
