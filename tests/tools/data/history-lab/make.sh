#!/bin/bash
# How the files beside this script were made (docs/charts.md, "Results over time"):
#   tools/rxe-lab -- tests/tools/data/history-lab/make.sh
# 16 runs of a small WRITE bandwidth sweep in the rxe lab VM, runs 11 to 16 with two
# CPU hogs beside client and server: a deliberate slowdown for tools/history to find.
# The results land in reports/history-lab/ (gzip them here to update the test data).
set -u
cd "$(git rev-parse --show-toplevel)" || exit 1
out=reports/history-lab
mkdir -p "$out"
for i in $(seq -w 1 16); do
  hogs=()
  if [ "$i" -gt 10 ]; then
    yes >/dev/null & hogs+=($!)
    yes >/dev/null & hogs+=($!)
  fi
  tools/local-sweep --op write --mode bw -q 1,4 -s 4096 -n 300 --warmup 30 --repetitions 5 --no-progress \
    --out "$out/run-$i.json" >/dev/null 2>&1
  echo "run $i: exit $?, ${#hogs[@]} hogs"
  for h in "${hogs[@]}"; do kill "$h"; done
  rm -f "$out/run-$i.hist.json"
done
