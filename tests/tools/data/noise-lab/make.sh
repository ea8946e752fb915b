#!/bin/bash
# How the files beside this script were made (docs/charts.md, "The lab's noise"):
#   tools/rxe-lab -- tests/tools/data/noise-lab/make.sh
# 40 runs of the history-lab sweep (WRITE bandwidth, 1 and 4 QPs of 4 KiB, 5
# repetitions) in the rxe lab VM, the same build each time and nothing else running:
# the noise that tests/tools/test_history.py plants its steps in.
# The results land in reports/noise-lab/ (gzip them here to update the test data).
set -u
cd "$(git rev-parse --show-toplevel)" || exit 1
out=reports/noise-lab
mkdir -p "$out"
for i in $(seq -w 1 40); do
  tools/local-sweep --op write --mode bw -q 1,4 -s 4096 -n 300 --warmup 30 --repetitions 5 --no-progress \
    --out "$out/run-$i.json" >/dev/null 2>&1
  echo "run $i: exit $?"
  rm -f "$out/run-$i.hist.json"
done
