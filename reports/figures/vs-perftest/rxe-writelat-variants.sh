# 64 B WRITE latency on rxe0: what moves rdmasweep's p99 (1.15x perftest's over 30
# rounds, rxe-writelat-30)? perftest as in vs-perftest's "same" row; rdmasweep as there;
# rdmasweep with each WRITE signaled and polled before the next ping (-t 1 -Q 1, as
# ib_write_lat's send queue of 1); rdmasweep with each WRITE signaled, its send queue
# as in the table (-Q 1); and, with LOCAL=1, rdmasweep run from a copy of its binary in
# the guest's own /tmp (its code paged in from memory, not from the shared directory)
# in place of -Q 1. Names after ROUNDS pick other variants: those above, and warm100 and
# warm1000 (rdmasweep with 100 or 1,000 round trips of warm-up). ROUNDS rounds,
# the order rotated each round, servers on CPU 0, clients on CPU 1, 3,000 round trips.
# Run inside the lab: tools/rxe-lab -- bash reports/figures/vs-perftest/rxe-writelat-variants.sh [ROUNDS [VARIANT...]]
source "$(dirname "$0")/lat-summary.sh"
rounds=${1:-10} p=20100
cp $B /tmp/rdmasweep-local
perftest() {
  p=$((p+1)); taskset -c 0 timeout 60 ib_write_lat -d rxe0 -x 1 -F -p $p -n 3000 -s 64 -I 0 >/dev/null 2>&1 & sleep 1
  taskset -c 1 timeout 60 ib_write_lat -d rxe0 -x 1 -F -p $p -n 3000 -s 64 -I 0 127.0.0.1 2>/dev/null | pt_summary; wait
}
rdmasweep() {  # BINARY [WARM-UP] EXTRA-FLAGS
  local b=$1 warm=0; shift
  [[ "${1:-}" =~ ^[0-9]+$ ]] && { warm=$1; shift; }
  p=$((p+1)); taskset -c 0 timeout 60 $b server --bind 127.0.0.1 --port $p --once -d rxe0 -x 1 >/dev/null 2>&1 & sleep 1
  taskset -c 1 timeout 60 $b client 127.0.0.1 --port $p -d rxe0 -x 1 --no-progress --op write --mode lat -q 1 -n 3000 \
    -s 64 --warmup $warm --clock tsc --poll-batch 16 -I 0 "$@" --out /tmp/r.json >/dev/null 2>/tmp/r.err ||
    { echo "failed: $(cat /tmp/r.err)"; wait; return; }
  wait; summary
}
variants=(perftest rdmasweep t1Q1 Q1)
[ "${LOCAL:-0}" = 1 ] && variants[3]=local-copy
[ $# -gt 1 ] && variants=("${@:2}")
nv=${#variants[@]}
for round in $(seq 1 "$rounds"); do
  for i in $(seq 0 $((nv - 1))); do
    v=${variants[$(( (i + round) % nv ))]}
    case $v in
      perftest) out=$(perftest) ;;
      rdmasweep) out=$(rdmasweep $B) ;;
      t1Q1) out=$(rdmasweep $B -t 1 -Q 1) ;;
      Q1) out=$(rdmasweep $B -Q 1) ;;
      local-copy) out=$(rdmasweep /tmp/rdmasweep-local) ;;
      warm100) out=$(rdmasweep $B 100) ;;
      warm1000) out=$(rdmasweep $B 1000) ;;
    esac
    echo "round $round $v $out"
  done
done
