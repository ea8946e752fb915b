#!/bin/sh
# Captures perftest's client output, one file per tool, into this directory: the
# ground truth tests/tools/test_perftest_format.py holds rdmasweep's --format
# perftest against. Run it in the rxe lab from the repository's top:
#   tools/rxe-lab -- tests/tools/data/perftest-4.5/capture.sh
set -eu
dir=$(dirname "$0")
dev=${DEV:-rxe0}
gid=${RXE_LAB_GID:-1}
port=18515
run() {  # NAME TOOL ARGS...: the server in the background, then the client against it
  name=$1 tool=$2
  shift 2
  port=$((port + 1))
  "$tool" -d "$dev" -x "$gid" -p "$port" "$@" >/dev/null 2>&1 &
  srv=$!
  sleep 2
  "$tool" -d "$dev" -x "$gid" -p "$port" "$@" 127.0.0.1 >"$dir/$name.txt" 2>&1
  wait "$srv"
}
run ib_write_bw ib_write_bw -s 4096 -n 200
run ib_write_bw_sizes ib_write_bw -a -n 5
run ib_write_bw_nopeak ib_write_bw -s 4096 -n 200 -N
run ib_read_bw ib_read_bw -s 4096 -n 200
run ib_send_bw ib_send_bw -s 4096 -n 200
run ib_atomic_bw ib_atomic_bw -n 200
run ib_write_lat ib_write_lat -s 64 -n 200
run ib_send_lat ib_send_lat -s 64 -n 200
run ib_read_lat ib_read_lat -s 64 -n 200
