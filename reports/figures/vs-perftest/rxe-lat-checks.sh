# 64 B WRITE and UD SEND latency on rxe0: perftest, rdmasweep, and rdmasweep built
# with its loops' look outside (IdleWatch::check: the stop flag, the control channel,
# the clock) once every 2^20 polls instead of every 4096 (binary $V, both ends), ROUNDS
# interleaved rounds, the order rotated each round, servers on CPU 0, clients on CPU 1,
# 3,000 round trips each, as vs-perftest's "same" rows. Is the p99 gap those looks?
# V: rdmasweep built with `polls_ & 4095` changed to `polls_ & 1048575` in IdleWatch
# (core/engine/loop_common.hpp), copied inside the repository (here build-var/, ignored).
# Run inside the lab: V=build-var/rdmasweep-rare-checks tools/rxe-lab -- bash reports/figures/vs-perftest/rxe-lat-checks.sh [ROUNDS]
source "$(dirname "$0")/lat-summary.sh"
rounds=${1:-8} p=19800
pt() {  # OP TRANSPORT
  local t=ib_${1}_lat extra=(); [ "$1" = send ] && extra=(-r 2 -c $2)
  p=$((p+1)); taskset -c 0 timeout 60 $t -d rxe0 -x 1 -F -p $p -n 3000 -s 64 -I 0 "${extra[@]}" >/dev/null 2>&1 & sleep 1
  taskset -c 1 timeout 60 $t -d rxe0 -x 1 -F -p $p -n 3000 -s 64 -I 0 "${extra[@]}" 127.0.0.1 2>/dev/null | pt_summary; wait
}
rs() {  # BINARY OP TRANSPORT
  local extra=(); [ "$2" = send ] && extra=(-r 2 --transport ${3,,})
  p=$((p+1)); taskset -c 0 timeout 60 $1 server --bind 127.0.0.1 --port $p --once -d rxe0 -x 1 >/dev/null 2>&1 & sleep 1
  taskset -c 1 timeout 60 $1 client 127.0.0.1 --port $p -d rxe0 -x 1 --no-progress --op $2 --mode lat -q 1 -n 3000 -s 64 \
    "${extra[@]}" --warmup 0 --clock tsc --poll-batch 16 -I 0 --out /tmp/r.json >/dev/null 2>&1; wait; summary
}
for point in "write RC" "send UD"; do
  set -- $point
  for round in $(seq 1 "$rounds"); do
    tools=(perftest rdmasweep rare-checks)
    for i in 0 1 2; do
      tool=${tools[$(( (i + round) % 3 ))]}
      case $tool in
        perftest) out=$(pt $1 $2) ;;
        rdmasweep) out=$(rs $B $1 $2) ;;
        rare-checks) out=$(rs $V $1 $2) ;;
      esac
      echo "$1 $2 round $round $tool $out"
    done
  done
done
