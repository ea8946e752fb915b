#!/bin/bash
# How the files beside this script were made (docs/charts.md, "Two devices, two histories"):
#   tools/rxe-lab --provider siw -- tests/tools/data/siw-lab/make.sh
# 8 runs of the noise-lab sweep (WRITE bandwidth, 1 and 4 QPs of 4 KiB, 5
# repetitions) on Soft-iWARP (siw0) in the lab VM: the same host, peer and sweep as
# tests/tools/data/noise-lab, another device. The results land in reports/siw-lab/
# (gzip them here to update the test data).
set -u
cd "$(git rev-parse --show-toplevel)" || exit 1
out=reports/siw-lab
mkdir -p "$out"
for i in 01 02 03 04 05 06 07 08; do
  tools/local-sweep --op write --mode bw -q 1,4 -s 4096 -n 300 --warmup 30 --repetitions 5 --no-progress \
    --out "$out/run-$i.json" >/dev/null 2>&1
  echo "run $i: exit $?"
  rm -f "$out/run-$i.hist.json"
done
