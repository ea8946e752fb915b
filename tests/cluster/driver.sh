#!/usr/bin/env bash
# Host a of the cluster tests (tools/cluster-test): `rdmasweep mesh` started by mpirun
# over ssh on three lab hosts (a, b, c; each its own kernel, rxe0 and address on one
# emulated segment), as on a real cluster. Each test prints "ok NAME" or
# "FAIL NAME: why"; the exit status is the number of failures.
set -uo pipefail
dir=${RDMASWEEP_CLUSTER_DIR:?}
bin=${RDMASWEEP_BIN:?}
here=$(cd "$(dirname "$0")" && pwd)
hosts=rxe-a,rxe-b,rxe-c
fails=0
ok() { echo "ok $1"; }
fail() { echo "FAIL $1: $2"; fails=$((fails + 1)); show_lab; }
# After the first failure, once: each host's view (tests/lab-state.sh: ports and
# counters, the NIC, rdmasweep's processes and states, the kernel's last lines) and
# how long the failing run took, to tell a flake of the lab from a fault.
lab_shown=0 run_took=0
show_lab() {
  ((lab_shown)) && return
  lab_shown=1
  echo "lab-state: the failing run took $run_took s (limit 300 s)"
  local h
  for h in rxe-a rxe-b rxe-c; do timeout 30 ssh -n "$h" "$here/../lab-state.sh"; done
}
check() { python3 "$here/check.py" "$@"; }
# A bounded wait for a condition, polled: never a fixed sleep standing in for one.
wait_for() { local secs=$1; shift; local end=$((SECONDS + secs)); until "$@"; do ((SECONDS < end)) || return 1; sleep 0.1; done; }

# mesh NAME HOSTLIST NP ARGS...: mpirun over ssh, MPI kept on TCP (the management
# network: here the same segment), one rank per host in turn (--map-by node);
# results in $dir/NAME.json, output in $dir/NAME.log.
# shellcheck disable=SC2054 # the commas are Open MPI's lists
mpi=(mpirun --allow-run-as-root --map-by node --mca pml ob1 --mca btl self,vader,tcp
  --mca btl_tcp_if_include 192.0.2.0/24 --mca oob_tcp_if_include 192.0.2.0/24)
mesh() {
  local name=$1 list=$2 np=$3 t0=$SECONDS rc=0
  shift 3
  timeout -k 5 300 "${mpi[@]}" --host "$list" -np "$np" "$bin" mesh --out "$dir/$name.json" "$@" >"$dir/$name.log" 2>&1 || rc=$?
  run_took=$((SECONDS - t0))
  return $rc
}
# launch NAME HOSTLIST ARGS...: the same run started by `rdmasweep mesh --hosts`, which
# asks each host over ssh, then runs mpirun itself; MPI's settings from the environment.
mpi_env=(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader,tcp
  OMPI_MCA_btl_tcp_if_include=192.0.2.0/24 OMPI_MCA_oob_tcp_if_include=192.0.2.0/24)
launch() {
  local name=$1 list=$2
  shift 2
  timeout -k 5 300 env "${mpi_env[@]}" "$bin" mesh --hosts "$list" --out "$dir/$name.json" "$@" >"$dir/$name.log" 2>&1
}
# expect RUN NAME STATUS CHECK-ARGS...: the run's exit and the check of its results
expect() {
  local run=$1 name=$2 rc=$3 out
  shift 3
  if ((rc)); then fail "$name" "mpirun exit $rc: $(grep -m2 'rdmasweep' "$dir/$run.log" | tr '\n' ' ')"
  elif ! out=$(check "$dir/$run.json" "$@" 2>&1); then fail "$name" "$(echo "$out" | head -n 5 | tr '\n' ' ')"
  else ok "$name"; fi
}

# 1. Every pattern, one rank per host: exact counts, each rank on its host's device,
# each flow's port counters from the two hosts it touches.
rc=0; mesh pairs $hosts 3 --pattern pairs --op write,send -s 4096 -n 100 --warmup 10 || rc=$?
expect pairs "pairs, matching schedule, write and send, 3 hosts" $rc --hosts $hosts --iters 100 --counters
rc=0; mesh sequential $hosts 3 --pattern pairs --schedule sequential --op read --mode bw,lat -s 4096 -n 100 --warmup 10 || rc=$?
expect sequential "pairs, sequential schedule, read, bw and lat, 3 hosts" $rc --hosts $hosts --iters 100 --counters
rc=0; mesh incast $hosts 3 --pattern incast --op write,send -q 2 -s 4096 -n 100 --warmup 10 || rc=$?
expect incast "incast, write and send, 3 hosts" $rc --pattern incast --hosts $hosts --iters 100 --counters
rc=0; launch all-to-all $hosts --pattern all-to-all --op write,send -q 2 -s 4096 -n 100 --warmup 10 || rc=$?
expect all-to-all "all-to-all, write and send, 3 hosts, started by mesh --hosts" $rc --pattern all-to-all \
  --hosts $hosts --iters 100 --counters
rc=0; mesh multicast $hosts 3 --pattern multicast --mode bw,lat -s 64,1024 -n 50 --warmup 5 || rc=$?
expect multicast "multicast from rxe-a to rxe-b and rxe-c" $rc --pattern multicast --hosts $hosts --iters 55

# 2. Two ranks per host: flows between ranks of one host and across hosts alike.
rc=0; mesh two-a-host rxe-a:2,rxe-b:2,rxe-c:2 6 --pattern pairs --op write -s 4096 -n 50 --warmup 5 || rc=$?
expect two-a-host "pairs, two ranks per host (6 ranks)" $rc --hosts $hosts --ranks 6 --iters 50 --counters

# 3. A slow link: 10 ms of netem delay on rxe-c's NIC. The flows through rxe-c, and only
# those, are the slow ones, found from the results alone.
netdev_c=$(ssh rxe-c "ip -o -4 addr show to 192.0.2.3/32" | awk '{print $2}')
if [[ -z $netdev_c ]] || ! ssh rxe-c tc qdisc add dev "$netdev_c" root netem delay 10ms; then
  fail "a slow link is found" "cannot add netem on rxe-c"
else
  rc=0; mesh slow-link $hosts 3 --pattern pairs --op write --mode bw,lat -s 4096 -n 100 --warmup 10 || rc=$?
  ssh rxe-c tc qdisc del dev "$netdev_c" root
  if ((rc)); then fail "a slow link is found" "mpirun exit $rc"
  elif ! out=$(check "$dir/slow-link.json" --hosts $hosts --iters 100 --slow rxe-c 2>&1); then
    fail "a slow link is found" "$(echo "$out" | tr '\n' ' ')"
  else
    ok "a slow link is found (netem 10 ms on rxe-c): every flow through rxe-c slower than every other"
    printf '   %s\n' "${out//$'\n'/$'\n'   }"
  fi
fi

# 3b. A host that is down at launch (192.0.2.4: no VM has it): `mesh --hosts` says so in
# one line, with ssh's reason, and starts nothing.
unreachable() {
  local rc=0 t0=$SECONDS lines
  launch unreachable rxe-a,rxe-b,192.0.2.4 --pattern pairs -n 10 || rc=$?
  lines=$(grep -c . "$dir/unreachable.log")
  if ((rc != 1)); then fail "a host down at launch is one line" "exit $rc (1 expected): $(head -n 3 "$dir/unreachable.log" | tr '\n' ' ')"
  elif ((lines != 1)) || ! grep -q "^rdmasweep mesh: cannot reach 192.0.2.4 over ssh: ssh: " "$dir/unreachable.log"; then
    fail "a host down at launch is one line" "$lines line(s): $(head -n 3 "$dir/unreachable.log" | tr '\n' ' ')"
  elif [[ -e $dir/unreachable.json ]]; then fail "a host down at launch is one line" "a results file was written: a rank ran"
  else ok "a host down at launch is one line: after $((SECONDS - t0)) s: $(cut -c1-110 "$dir/unreachable.log")"; fi
}
unreachable

# 4. A rank on another host stopped mid-phase (SIGSTOP): named with its host and the
# flows it took down, the phase's other flows kept, the job ends non-zero. The stop is
# made on rxe-b the moment rank 1 reports a flow's traffic in a phase after the first
# (stop-on-traffic.sh, reading the ranks' --progress-file on that host).
stopped() {
  local rc=0 out pid progress=/tmp/mesh.progress
  rm -f "$dir/stopped.json"
  ssh -n rxe-b "rm -f $progress; setsid $here/stop-on-traffic.sh $progress 1 >/dev/null 2>&1 </dev/null &"
  mesh stopped $hosts 3 --pattern pairs --op write -s 4096 -D 3 --warmup 10 --timeout 3 --progress-file $progress || rc=$?
  pid=$(ssh -n rxe-b cat "$progress.stopped" 2>/dev/null)
  ssh -n rxe-b "pkill -f stop-on-traffic; ${pid:+kill -KILL $pid}"
  if [[ -z $pid ]]; then fail "a stopped rank on rxe-b is named" "rank 1 was never stopped: it reported no flow after the first phase (exit $rc)"
  elif ((rc == 0)); then fail "a stopped rank on rxe-b is named" "the job exited 0"
  elif ((rc == 124)); then fail "a stopped rank on rxe-b is named" "the job hung (killed after 300 s)"
  elif ! grep -q "rank 1 (rxe-b).*stopped answering" "$dir/stopped.log"; then
    fail "a stopped rank on rxe-b is named" "no line naming rank 1 (rxe-b): $(grep -m3 rdmasweep "$dir/stopped.log" | tr '\n' ' ')"
  elif ! out=$(check "$dir/stopped.json" --hosts $hosts --stopped 1 2>&1); then
    fail "a stopped rank on rxe-b is named" "$(echo "$out" | tr '\n' ' ')"
  else ok "a stopped rank on rxe-b is named: with its host; exit $rc; $(grep -m1 'stopped answering' "$dir/stopped.log" | cut -c1-160)"; fi
}
stopped

# 5. Multicast without MPI: `rdmasweep server --join GROUP` on b and c, `rdmasweep
# client rxe-b,rxe-c --multicast GROUP` on a; each receiver's clock offset from a's is
# estimated over the control channel, so one-way latency is measured across hosts.
mcast_client() {
  local group=239.255.82.21 h rc=0 out
  for h in rxe-b rxe-c; do
    ssh -n "$h" "setsid $bin server --join $group >/tmp/join.log 2>&1 </dev/null &"
  done
  for h in rxe-b rxe-c; do
    # shellcheck disable=SC2317 # called through wait_for
    listening() { ssh -n "$h" grep -q listening /tmp/join.log; }
    wait_for 60 listening || { fail "client --multicast to rxe-b and rxe-c" "the server on $h did not start: $(ssh -n "$h" cat /tmp/join.log)"; return; }
  done
  timeout -k 5 120 "$bin" client rxe-b,rxe-c --multicast $group --mode bw,lat -s 64,1024 -n 50 --warmup 5 \
    --out "$dir/mcast-client.json" >"$dir/mcast-client.log" 2>&1 || rc=$?
  local wrong
  wrong=$(timeout -k 5 60 "$bin" client rxe-b --multicast 239.255.82.22 -n 5 --out "$dir/wrong.json" 2>&1)
  for h in rxe-b rxe-c; do ssh -n "$h" "pkill -f 'server --join'"; done
  if ((rc)); then fail "client --multicast to rxe-b and rxe-c" "exit $rc: $(tail -n 2 "$dir/mcast-client.log" | tr '\n' ' ')"
  elif ! out=$(check "$dir/mcast-client.json" --mcast-client --hosts rxe-a,rxe-b,rxe-c --iters 50 2>&1); then
    fail "client --multicast to rxe-b and rxe-c" "$(echo "$out" | head -n 5 | tr '\n' ' ')"
  elif [[ $wrong != *"receives multicast group $group, not 239.255.82.22"* || $(wc -l <<<"$wrong") != 1 ]]; then
    fail "client --multicast to rxe-b and rxe-c" "a client of another group was not refused in one line: $wrong"
  else ok "client --multicast to rxe-b and rxe-c: every datagram counted on both, one-way latency against estimated offsets; $(grep -m2 'clock offset' "$dir/mcast-client.log" | sed 's/^rdmasweep: *//' | tr '\n' ' ')"; fi
}
mcast_client

echo "cluster tests: $fails failed"
exit "$fails"
