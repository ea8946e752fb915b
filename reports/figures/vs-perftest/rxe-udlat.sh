# 64 B UD SEND latency on rxe0: perftest; rdmasweep as vs-perftest runs it; with --poll-batch 1; with -r 16
B=./build/bench/rdmasweep
p=19500
for r in 1 2 3 4 5 6; do
  p=$((p+1)); taskset -c 0 ib_send_lat -d rxe0 -x 1 -F -p $p -n 3000 -s 64 -c UD -I 0 >/dev/null 2>&1 & sleep 1
  echo "perftest $(taskset -c 1 ib_send_lat -d rxe0 -x 1 -F -p $p -n 3000 -s 64 -c UD -I 0 127.0.0.1 2>/dev/null | awk '$1==64{print "min",$3,"p50",$5,"p99",$8}')"; wait
  for v in plain batch1 rx16; do
    p=$((p+1)); extra="--poll-batch 16"; [ $v = batch1 ] && extra="--poll-batch 1"; [ $v = rx16 ] && extra="--poll-batch 16 -r 16"
    taskset -c 0 $B server --bind 127.0.0.1 --port $p --once -d rxe0 -x 1 >/dev/null 2>&1 & sleep 1
    taskset -c 1 $B client 127.0.0.1 --port $p -d rxe0 -x 1 --no-progress --op send --mode lat -q 1 -n 3000 --out /tmp/r.json -s 64 --transport ud --warmup 0 --clock tsc -I 0 $extra >/dev/null 2>&1
    wait
    /usr/bin/python3 -c "import json;b=json.load(open('/tmp/r.json'))['benchmarks'][0];print('rdmasweep-$v min',round(b['lat_min_us'],2),'p50',round(b['lat_p50_us'],2),'p99',round(b['lat_p99_us'],2))"
  done
done
