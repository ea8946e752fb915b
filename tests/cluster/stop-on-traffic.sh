#!/usr/bin/env bash
# stop-on-traffic.sh PROGRESS RANK: waits (up to 300 s) for mesh rank RANK to report, in
# its --progress-file PROGRESS on this host, a flow's traffic in a phase after the first,
# then stops that rank (SIGSTOP) and writes its pid to PROGRESS.stopped. The stop lands
# inside a phase where the rank has a flow, whatever the machine's speed, and the first
# phase's flows have their results. Run it (detached) before the mesh starts.
set -u
progress=$1 rank=$2 end=$((SECONDS + 300)) pid=""
rm -f "$progress.stopped"
while ((SECONDS < end)); do
  pid=$(awk -v r="rank=$rank" '$1 == "traffic" && $2 !~ /\/phase:0$/ && $4 == r {sub("pid=", "", $3); print $3; exit}' \
    "$progress" 2>/dev/null)
  [[ -n $pid ]] && break
  sleep 0.02
done
[[ -n $pid ]] || exit 1
kill -STOP "$pid" && echo "$pid" >"$progress.stopped"
