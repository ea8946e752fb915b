# 64 B WRITE latency on rxe0, perftest and rdmasweep as vs-perftest's "same" row
# (servers on CPU 0, clients on CPU 1, 3,000 round trips), ROUNDS interleaved rounds:
# each run's p99 beside what interrupted each CPU meanwhile (/proc/interrupts' rows
# that moved, per CPU, over the client's run) and the context switches of both CPUs.
# Does rdmasweep's higher p99 come with more interruptions?
# Run inside the lab: tools/rxe-lab -- bash reports/figures/vs-perftest/rxe-writelat-irqs.sh [ROUNDS]
source "$(dirname "$0")/lat-summary.sh"
rounds=${1:-6} p=19950
irqs() { awk 'NR>1{n=$1; sub(":","",n); print n, $2, $3}' /proc/interrupts; }
moved() {  # before after
  sort "$1" > /tmp/ia; sort "$2" > /tmp/ib
  join /tmp/ia /tmp/ib | awk '{d0=$4-$2; d1=$5-$3; if (d0||d1) printf " %s:%d/%d", $1, d0, d1}'
}
ctxt() { grep ctxt /proc/stat | awk '{print $2}'; }
pt() {
  p=$((p+1)); taskset -c 0 timeout 60 ib_write_lat -d rxe0 -x 1 -F -p $p -n 3000 -s 64 -I 0 >/dev/null 2>&1 & sleep 1
  irqs > /tmp/i0; c0=$(ctxt)
  out=$(taskset -c 1 timeout 60 ib_write_lat -d rxe0 -x 1 -F -p $p -n 3000 -s 64 -I 0 127.0.0.1 2>/dev/null | pt_summary)
  irqs > /tmp/i1; c1=$(ctxt); wait
  echo "$out ctxt $((c1-c0)) irqs cpu0/cpu1$(moved /tmp/i0 /tmp/i1)"
}
rs() {
  p=$((p+1)); taskset -c 0 timeout 60 $B server --bind 127.0.0.1 --port $p --once -d rxe0 -x 1 >/dev/null 2>&1 & sleep 1
  irqs > /tmp/i0; c0=$(ctxt)
  taskset -c 1 timeout 60 $B client 127.0.0.1 --port $p -d rxe0 -x 1 --no-progress --op write --mode lat -q 1 -n 3000 \
    -s 64 --warmup 0 --clock tsc --poll-batch 16 -I 0 --out /tmp/r.json >/dev/null 2>&1
  irqs > /tmp/i1; c1=$(ctxt); wait
  echo "$(summary) ctxt $((c1-c0)) irqs cpu0/cpu1$(moved /tmp/i0 /tmp/i1)"
}
for round in $(seq 1 "$rounds"); do
  if ((round % 2)); then order=(pt rs); else order=(rs pt); fi
  for t in "${order[@]}"; do echo "round $round $t $($t)"; done
done
