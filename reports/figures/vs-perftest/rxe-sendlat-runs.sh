# Sourced by the rxe 64 B SEND-latency scripts here (rxe-udlat-api.sh, rxe-udlat-repost.sh):
# one run of each tool that prints its min, p50 and p99 (lat-summary.sh).
# The sourcing script sets p, the port before the first run's.
source "$(dirname "${BASH_SOURCE[0]}")/lat-summary.sh"
perftest() {  # TRANSPORT EXTRA
  p=$((p+1)); taskset -c 0 ib_send_lat -d rxe0 -x 1 -F -p $p -n 3000 -s 64 -c $1 -I 0 $2 >/dev/null 2>&1 & sleep 1
  taskset -c 1 ib_send_lat -d rxe0 -x 1 -F -p $p -n 3000 -s 64 -c $1 -I 0 $2 127.0.0.1 2>/dev/null | pt_summary; wait
}
rdmasweep() {  # TRANSPORT
  p=$((p+1)); taskset -c 0 $B server --bind 127.0.0.1 --port $p --once -d rxe0 -x 1 >/dev/null 2>&1 & sleep 1
  taskset -c 1 $B client 127.0.0.1 --port $p -d rxe0 -x 1 --no-progress --op send --mode lat -q 1 -n 3000 -s 64 \
    --transport ${1,,} --warmup 0 --clock tsc --poll-batch 16 -I 0 --out /tmp/r.json >/dev/null 2>&1; wait; summary
}
