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

# The clang builds of tools/sanitize (Debug, ASan + UBSan, with the tests) and tools/fuzz
# (the libFuzzer targets). tools/test starts both in the background while the lab stages
# run, so that those stages find them built.
ASAN_BUILD=${RDMASWEEP_ASAN_BUILD_DIR:-$ROOT/build-asan}
FUZZ_BUILD=${RDMASWEEP_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}
need_clang() {
  # clang, not gcc: gcc links UBSan as a separate runtime that ignores log_path when
  # ASan is loaded too, so its reports would only reach stderr.
  command -v clang++ >/dev/null || { echo "$1: clang++ not found: apt-get install clang libclang-rt-14-dev" >&2; return 1; }
}
build_sanitized() {
  "$ROOT/tools/bootstrap"
  need_clang sanitize || return 1
  CC=clang CXX=clang++ cmake -S "$ROOT" -B "$ASAN_BUILD" -DCMAKE_BUILD_TYPE=Debug -DRDMASWEEP_SANITIZE=address,undefined -DBUILD_TESTING=ON >/dev/null
  cmake --build "$ASAN_BUILD" -j"$(nproc)" >/dev/null
}
build_fuzz() {
  "$ROOT/tools/bootstrap"
  need_clang fuzz || return 1
  CC=clang CXX=clang++ cmake -S "$ROOT" -B "$FUZZ_BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DRDMASWEEP_FUZZ=ON -DRDMASWEEP_SANITIZE=address,undefined -DBUILD_TESTING=OFF >/dev/null
  cmake --build "$FUZZ_BUILD" -j"$(nproc)" --target fuzz_protocol fuzz_sweep >/dev/null
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
