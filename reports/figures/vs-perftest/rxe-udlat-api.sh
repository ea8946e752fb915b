# 64 B SEND latency on rxe0, UD and RC: perftest as is (the ibv_wr_* API), perftest with
# --use_old_post_send (ibv_post_send, as rdmasweep posts), and rdmasweep; 10 rounds, the
# order rotated each round, servers on CPU 0, clients on CPU 1, 3,000 round trips each.
# Run inside the lab: tools/rxe-lab -- bash reports/figures/vs-perftest/rxe-udlat-api.sh
p=19700; source "$(dirname "$0")/rxe-sendlat-runs.sh"
variants=("UD perftest" "UD perftest-old" "UD rdmasweep" "RC perftest" "RC perftest-old" "RC rdmasweep")
for round in $(seq 1 10); do
  for i in $(seq 0 5); do
    v=${variants[$(( (i + round) % 6 ))]}; t=${v%% *}; tool=${v#* }
    case $tool in
      perftest) out=$(perftest $t "") ;;
      perftest-old) out=$(perftest $t --use_old_post_send) ;;
      rdmasweep) out=$(rdmasweep $t) ;;
    esac
    echo "round $round $t $tool $out"
  done
done
