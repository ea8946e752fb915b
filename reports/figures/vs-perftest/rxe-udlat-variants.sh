# 64 B SEND latency on rxe0, RC and UD, perftest beside rdmasweep as is, with every send signaled
# and with one completion a poll; 3 interleaved rounds, servers on CPU 0, clients on CPU 1.
# Run inside the lab: tools/rxe-lab -- bash reports/figures/vs-perftest/rxe-udlat-variants.sh
B=./build/bench/rdmasweep; p=19600
r() { /usr/bin/python3 -c "import json;b=json.load(open('/tmp/r.json'))['benchmarks'][0];print('min',round(b['lat_min_us'],2),'p50',round(b['lat_p50_us'],2),'p99',round(b['lat_p99_us'],2))"; }
for round in 1 2 3; do
 for t in RC UD; do
  p=$((p+1)); taskset -c 0 ib_send_lat -d rxe0 -x 1 -F -p $p -n 3000 -s 64 -c $t -I 0 >/dev/null 2>&1 & sleep 1
  echo "$t perftest            $(taskset -c 1 ib_send_lat -d rxe0 -x 1 -F -p $p -n 3000 -s 64 -c $t -I 0 127.0.0.1 2>/dev/null | awk '$1==64{print "min",$3,"p50",$5,"p99",$8}')"; wait
  for extra in "" "--signal-every 1" "--poll-batch 1"; do
   p=$((p+1)); taskset -c 0 $B server --bind 127.0.0.1 --port $p --once -d rxe0 -x 1 >/dev/null 2>&1 & sleep 1
   taskset -c 1 $B client 127.0.0.1 --port $p -d rxe0 -x 1 --no-progress --op send --mode lat -q 1 -n 3000 -s 64 --transport ${t,,} --warmup 0 --clock tsc -I 0 $extra --out /tmp/r.json >/dev/null 2>&1; wait
   echo "$t rdmasweep ${extra:-(as is)} $(r)"
  done
 done
done
