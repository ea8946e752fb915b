#!/bin/bash
# history-sweep.sh NAME RUNS [HOGS_FROM]: the sweep behind the history tests' lab data,
# run by each data directory's make.sh inside the lab VM. RUNS runs of WRITE bandwidth,
# 1 and 4 QPs of 4 KiB, 5 repetitions, the same build and options each time, into
# reports/NAME/run-NN.json; from run HOGS_FROM on, two CPU hogs beside client and
# server. One script, so the histories it makes are of one sweep.
set -u
[ $# -ge 2 ] || { echo "usage: $0 NAME RUNS [HOGS_FROM]" >&2; exit 2; }
name=$1 runs=$2 hogs_from=${3:-0}
cd "$(git rev-parse --show-toplevel)" || exit 1
out=reports/$name
mkdir -p "$out"
for i in $(seq -f %02g 1 "$runs"); do
  hogs=()
  if [ "$hogs_from" -gt 0 ] && [ "$((10#$i))" -ge "$hogs_from" ]; then
    yes >/dev/null & hogs+=($!)
    yes >/dev/null & hogs+=($!)
  fi
  tools/local-sweep --op write --mode bw -q 1,4 -s 4096 -n 300 --warmup 30 --repetitions 5 --no-progress \
    --out "$out/run-$i.json" >/dev/null 2>&1
  echo "run $i: exit $?, ${#hogs[@]} hogs"
  for h in "${hogs[@]}"; do kill "$h"; done
  rm -f "$out/run-$i.hist.json"
done
