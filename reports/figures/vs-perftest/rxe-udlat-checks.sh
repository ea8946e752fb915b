# 64 B SEND latency on rxe0, UD and RC: perftest, rdmasweep as is, and rdmasweep whose loops look
# outside (stop flag, control channel, idle clock) every 2^20 polls instead of every 4096; 10 rounds,
# the order rotated each round, servers on CPU 0, clients on CPU 1, 3,000 round trips each.
# First, on the host, the variant build (the same commit, two masks raised):
#   git worktree add /tmp/rare HEAD
#   sed -i "s/\& 4095) == 0/\& 1048575) == 0/" /tmp/rare/core/engine/loop_common.hpp
#   cmake -S /tmp/rare -B /tmp/rare/build -DCMAKE_BUILD_TYPE=RelWithDebInfo
#   cmake --build /tmp/rare/build -j2 --target rdmasweep && cp /tmp/rare/build/bench/rdmasweep build/rdmasweep-rarecheck
# Then: tools/rxe-lab -- bash reports/figures/vs-perftest/rxe-udlat-checks.sh
p=19800
r() { /usr/bin/python3 -c "import json;b=json.load(open('/tmp/r.json'))['benchmarks'][0];print('min',round(b['lat_min_us'],2),'p50',round(b['lat_p50_us'],2),'p99',round(b['lat_p99_us'],2))"; }
perftest() {
  p=$((p+1)); taskset -c 0 ib_send_lat -d rxe0 -x 1 -F -p $p -n 3000 -s 64 -c $1 -I 0 >/dev/null 2>&1 & sleep 1
  taskset -c 1 ib_send_lat -d rxe0 -x 1 -F -p $p -n 3000 -s 64 -c $1 -I 0 127.0.0.1 2>/dev/null | awk '$1==64{print "min",$3,"p50",$5,"p99",$8}'; wait
}
sweep() {  # BINARY TRANSPORT
  p=$((p+1)); taskset -c 0 $1 server --bind 127.0.0.1 --port $p --once -d rxe0 -x 1 >/dev/null 2>&1 & sleep 1
  taskset -c 1 $1 client 127.0.0.1 --port $p -d rxe0 -x 1 --no-progress --op send --mode lat -q 1 -n 3000 -s 64 \
    --transport ${2,,} --warmup 0 --clock tsc --poll-batch 16 -I 0 --out /tmp/r.json >/dev/null 2>&1; wait; r
}
variants=("UD perftest" "UD rdmasweep" "UD rarecheck" "RC perftest" "RC rdmasweep" "RC rarecheck")
for round in $(seq 1 ${ROUNDS:-10}); do
  for i in $(seq 0 5); do
    v=${variants[$(( (i + round) % 6 ))]}; t=${v%% *}; tool=${v#* }
    case $tool in
      perftest) out=$(perftest $t) ;;
      rdmasweep) out=$(sweep ./build/bench/rdmasweep $t) ;;
      rarecheck) out=$(sweep ./build/rdmasweep-rarecheck $t) ;;
    esac
    echo "round $round $t $tool $out"
  done
done
