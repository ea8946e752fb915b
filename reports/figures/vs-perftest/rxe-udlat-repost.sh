# 64 B SEND latency on rxe0, UD and RC: does perftest repost its receives? ib_send_lat
# pre-posts rx_depth receives and reposts one after each receive only while
# rcnt + rx_depth <= iters. Over UD (and UC) its rx_depth is the iteration count
# (perftest_parameters.c, force_dependecies), so in a 3,000-round-trip run it never
# reposts; over RC it is 512, so its last 512 round trips repost nothing. rdmasweep
# reposts after every receive. Variants: perftest as is, perftest -r 2 (reposts after
# every receive but the last two, as rdmasweep does), and rdmasweep. 15 rounds, the
# order rotated each round, servers on CPU 0, clients on CPU 1, 3,000 round trips each.
# Run inside the lab: tools/rxe-lab -- bash reports/figures/vs-perftest/rxe-udlat-repost.sh
B=./build/bench/rdmasweep; p=19800
r() { /usr/bin/python3 -c "import json;b=json.load(open('/tmp/r.json'))['benchmarks'][0];print('min',round(b['lat_min_us'],2),'p50',round(b['lat_p50_us'],2),'p99',round(b['lat_p99_us'],2))"; }
perftest() {  # TRANSPORT EXTRA
  p=$((p+1)); taskset -c 0 ib_send_lat -d rxe0 -x 1 -F -p $p -n 3000 -s 64 -c $1 -I 0 $2 >/dev/null 2>&1 & sleep 1
  taskset -c 1 ib_send_lat -d rxe0 -x 1 -F -p $p -n 3000 -s 64 -c $1 -I 0 $2 127.0.0.1 2>/dev/null | awk '$1==64{print "min",$3,"p50",$5,"p99",$8}'; wait
}
rdmasweep() {  # TRANSPORT
  p=$((p+1)); taskset -c 0 $B server --bind 127.0.0.1 --port $p --once -d rxe0 -x 1 >/dev/null 2>&1 & sleep 1
  taskset -c 1 $B client 127.0.0.1 --port $p -d rxe0 -x 1 --no-progress --op send --mode lat -q 1 -n 3000 -s 64 \
    --transport ${1,,} --warmup 0 --clock tsc --poll-batch 16 -I 0 --out /tmp/r.json >/dev/null 2>&1; wait; r
}
variants=("UD perftest" "UD perftest-r2" "UD rdmasweep" "RC perftest" "RC perftest-r2" "RC rdmasweep")
for round in $(seq 1 15); do
  for i in $(seq 0 5); do
    v=${variants[$(( (i + round) % 6 ))]}; t=${v%% *}; tool=${v#* }
    case $tool in
      perftest) out=$(perftest $t "") ;;
      perftest-r2) out=$(perftest $t "-r 2") ;;
      rdmasweep) out=$(rdmasweep $t) ;;
    esac
    echo "round $round $t $tool $out"
  done
done
