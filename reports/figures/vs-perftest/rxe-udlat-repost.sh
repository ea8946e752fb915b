# 64 B SEND latency on rxe0, UD and RC: does perftest repost its receives? ib_send_lat
# pre-posts rx_depth receives and reposts one after each receive only while
# rcnt + rx_depth <= iters. Over UD (and UC) its rx_depth is the iteration count
# (perftest_parameters.c, force_dependecies), so in a 3,000-round-trip run it never
# reposts; over RC it is 512, so its last 512 round trips repost nothing. rdmasweep
# reposts after every receive. Variants: perftest as is, perftest -r 2 (reposts after
# every receive but the last two, as rdmasweep does), and rdmasweep. 15 rounds, the
# order rotated each round, servers on CPU 0, clients on CPU 1, 3,000 round trips each.
# Run inside the lab: tools/rxe-lab -- bash reports/figures/vs-perftest/rxe-udlat-repost.sh
p=19800; source "$(dirname "$0")/rxe-sendlat-runs.sh"
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
