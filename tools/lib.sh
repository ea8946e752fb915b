# Shared by the tools/ scripts: build once, and run a command where an RDMA device is.
# shellcheck shell=bash

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${RDMASWEEP_BUILD_DIR:-$ROOT/build}
RDMASWEEP=$BUILD/bench/rdmasweep

build() {
  "$ROOT/tools/bootstrap"
  cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRDMASWEEP_WERROR=ON >/dev/null
  cmake --build "$BUILD" -j"$(nproc)" >/dev/null
}

# A local RDMA device with an ACTIVE port (real NIC, or rxe already set up).
has_device() {
  local s
  for s in /sys/class/infiniband/*/ports/*/state; do
    [ -e "$s" ] && grep -q ACTIVE "$s" && return 0
  done
  return 1
}

# Runs "$@" on a local device, or inside the rxe lab VM when this host has none.
on_rdma() {
  if has_device; then
    "$@"
  else
    echo "no local RDMA device: running inside tools/rxe-lab (Soft-RoCE in a VM, slow but real)" >&2
    local rc=0
    "$ROOT/tools/rxe-lab" -- "$@" || rc=$?
    if [ "$rc" -eq 125 ]; then
      # 125 is the lab's own failure (the VM did not come up), not the command's: once more.
      echo "rxe-lab failed to start the VM; retrying once" >&2
      rc=0
      "$ROOT/tools/rxe-lab" -- "$@" || rc=$?
    fi
    return "$rc"
  fi
}

# A Python 3 that can import matplotlib (a python3 first on PATH, e.g. a venv, often
# cannot see Debian's python3-matplotlib).
python_with_matplotlib() {
  local p
  for p in /usr/bin/python3 python3; do
    command -v "$p" >/dev/null && "$p" -c "import matplotlib" 2>/dev/null && { echo "$p"; return 0; }
  done
  echo "no Python 3 with matplotlib: apt-get install python3-matplotlib" >&2
  return 1
}
