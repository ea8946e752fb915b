#!/bin/bash
# How the files beside this script were made (docs/charts.md, "A slowdown at a known run"):
#   tools/rxe-lab -- tests/tools/data/mtu-lab/make.sh
# 24 runs of the CI sweep as tools/ci-perf runs it (WRITE bandwidth and SEND latency,
# 1 and 4 QPs, 64 B and 4 KiB, 5 repetitions) in the rxe lab VM, the same build and
# the same options each time. From run 17 on, the lab's netdev has an MTU of 1000
# instead of 1500, so rxe's active MTU is 512 instead of 1024: a deliberate slowdown
# of the 4 KiB points (8 packets a message instead of 4) that leaves the 64 B points
# as they were, and changes no point's name (the run's context records its mtu).
# The results land in reports/mtu-lab/ (gzip them here to update the test data).
set -u
cd "$(git rev-parse --show-toplevel)" || exit 1
[ -n "${RXE_LAB_NETDEV:-}" ] || { echo "make.sh: run it in the lab: tools/rxe-lab -- $0" >&2; exit 2; }
out=reports/mtu-lab
mkdir -p "$out"
for i in $(seq -w 1 24); do
  if [ "$i" -eq 17 ]; then
    ip link set dev "$RXE_LAB_NETDEV" mtu 1000 || exit 1
  fi
  tools/local-sweep --config configs/ci-perf.json '--benchmark_filter=^(write/bw|send/lat)/' --no-progress \
    --label run="$i" --out "$out/run-$i.json" >/dev/null 2>&1
  echo "run $i: exit $?, netdev mtu $(cat "/sys/class/net/$RXE_LAB_NETDEV/mtu")," \
    "active mtu $(sed -n 's/.*"mtu": *\([0-9]*\).*/\1/p' "$out/run-$i.json" | head -1)"
  rm -f "$out/run-$i.hist.json"
done
