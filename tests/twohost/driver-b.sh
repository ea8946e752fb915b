#!/usr/bin/env bash
# Host b of the two-host tests (tools/two-host-test): the client side. Each test
# prints "ok NAME" or "FAIL NAME: why"; the exit status is the number of failures.
# Host a (agent-a.sh) serves and carries out requests: the server restarted or
# killed, its link taken down, netem faults on its NIC.
set -uo pipefail
dir=${RDMASWEEP_TWOHOST_DIR:?}
bin=${RDMASWEEP_BIN:?}
here=$(cd "$(dirname "$0")" && pwd)
a=$RXE_LAB_PEER b=$RXE_LAB_ADDR
check() { python3 "$here/check.py" "$@"; }
# RDMASWEEP_TWOHOST_PROVIDER=siw (tools/two-host-test --provider siw): Soft-iWARP on both
# hosts. The same tests, but those that need what iWARP lacks are skipped and say why.
provider=${RDMASWEEP_TWOHOST_PROVIDER:-rxe}
iwarp=0 tr=() counters=(--counters)
if [[ $provider == siw ]]; then iwarp=1 tr=(--transport iWARP) counters=(); fi
fails=0 req=0
ok() { echo "ok $1"; }
skip() { echo "skip $1 on $provider: $2"; }
fail() { echo "FAIL $1: $2"; fails=$((fails + 1)); link_after_failure; }
# After a failure, once: if a no longer answers ping, the link (or a VM) is dead, not
# rdmasweep; both hosts print their NIC's counters and the kernel's last words.
link_checked=0
link_after_failure() {
  ((link_checked)) && return
  ping -c 2 -W 2 -q "$a" >/dev/null 2>&1 && return
  link_checked=1
  "$here/linkstate.sh" "$RXE_LAB_NETDEV" "$a"
  ask linkstate "$b"
}
# A bounded wait for a condition, polled: never a fixed sleep standing in for one.
wait_for() { local secs=$1; shift; local end=$((SECONDS + secs)); until "$@"; do ((SECONDS < end)) || return 1; sleep 0.1; done; }
# ask WHAT [ARGS]: host a carries it out; returns once it is done.
ask() {
  req=$((req + 1))
  echo "$*" >"$dir/req.tmp" && mv "$dir/req.tmp" "$dir/req.$req"
  wait_for 60 test -e "$dir/ack.$req" || { fail "request '$*'" "host a did not answer within 60 s"; return 1; }
}
# client NAME ARGS...: runs the client against a into $dir/NAME.json, bounded by
# `timeout` so that a hang fails the test instead of the whole job.
client() {
  local name=$1; shift
  timeout -k 5 240 "$bin" client "$a" -o "$dir/$name.json" "$@" >"$dir/$name.log" 2>&1
}
# shellcheck disable=SC2317 # called through wait_for
points_done() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if any(not b.get("error_occurred") for b in d["benchmarks"]) else 1)' "$1" 2>/dev/null; }

wait_for 120 test -e "$dir/ready.a" || { echo "FAIL setup: host a never got ready"; exit 1; }

# 7. --tclass on the wire (run after the faults): b's NIC sorts packets whose IP ToS
# byte is 96 into a band of their own; a WRITE run with --tclass 96 must fill it, one
# without must not.
tclass_packets() {
  tc -s class show dev "$RXE_LAB_NETDEV" | awk '/class prio 1:1 /{getline; print $4; exit}'
}
tclass_on_wire() {
  if ((iwarp)); then skip "tclass on the wire" "--tclass is the RoCE GRH's traffic class; an iWARP connection is TCP's"; return; fi
  local dev=$RXE_LAB_NETDEV before after plain
  modprobe -a sch_prio cls_u32 2>/dev/null
  tc qdisc replace dev "$dev" root handle 1: prio &&
    tc filter replace dev "$dev" parent 1: protocol ip prio 1 u32 match ip tos 0x60 0xff flowid 1:1 ||
    { fail "tclass on the wire" "cannot set up the tc filter"; return; }
  before=$(tclass_packets)
  client tclass0 --op write --mode bw -s 4096 -n 200 --warmup 5 --timeout 20
  plain=$(tclass_packets)
  client tclass96 --op write --mode bw -s 4096 -n 200 --warmup 5 --timeout 20 --tclass 96
  after=$(tclass_packets)
  tc qdisc del dev "$dev" root 2>/dev/null
  if [[ -z $before || -z $after ]]; then fail "tclass on the wire" "no counts from tc"
  elif ((plain != before)); then fail "tclass on the wire" "$((plain - before)) packets with ToS 96 without --tclass"
  elif ((after - plain < 800)); then fail "tclass on the wire" "only $((after - plain)) packets with ToS 96 (800+ expected)"
  else ok "tclass on the wire: $((after - plain)) packets with ToS 96, none without --tclass"; fi
}

# 9. --cm: every op, 1 and 4 QPs, two sizes on the same QPs, connected by RDMA-CM
# across the link (a's address resolved and routed from b), with exact counts.
cm_across() {
  if ((iwarp)); then skip "--cm across the link" "every iWARP run connects by RDMA-CM: the ops test checks the connection"; return; fi
  local rc=0 out
  client cm --cm --op send,write,read --mode bw,lat --qps 1,4 --size 64,4096 -n 40 --warmup 4 --timeout 20 || rc=$?
  if ((rc)); then fail "--cm across the link" "client exit $rc: $(tail -n 2 "$dir/cm.log" | tr '\n' ' ')"
  elif ! out=$(check "$dir/cm.json" --complete --iters 40 --client "rxe-b,$b" --server "rxe-a,$a"); then
    fail "--cm across the link" "$out"
  elif ! python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["context"]["connection"]; sys.exit(0 if c["method"] == "rdma_cm" and c["address"] == sys.argv[2] and c["gid"] == "::ffff:" + sys.argv[3] else 1)' \
    "$dir/cm.json" "$a" "$b"; then
    fail "--cm across the link" "the context's connection is not rdma_cm to $a from ::ffff:$b"
  else ok "--cm across the link (24 points, exact counts)"; fi
}

# 5b. The link down for 3 s ridden out, or not, by the QPs' transport retries: with
# --qp-timeout 19 (a retry after 2.1 s) and --retry-count 6 the QPs retransmit across the
# gap: exit 0, every point kept, none failed, the retransmits counted. With the default
# timeout (67 ms) the same 6 retries are spent within half a second: the point fails
# with "transport retry counter exceeded". (Not --retry-count 7: rxe retries forever
# at 7, the InfiniBand spec's "infinite" for RNR retries, which it applies to both.)
# Packets b's RDMA device has sent (rxe's port counter; empty where there is none).
rdma_sent() { cat /sys/class/infiniband/*/ports/1/hw_counters/sent_pkts 2>/dev/null | head -n 1; }
# shellcheck disable=SC2317 # called through wait_for
rdma_sent_past() { local n; n=$(rdma_sent); ((n > $1)); }
# across_flap NAME FAULT [CLIENT ARGS]: a sweep with a's link out for 3 s in the middle:
# FAULT flap takes a's interface down, blackhole drops every packet it sends. Once a
# point is done, the fault waits for the next point's WRITEs to flow (where the device
# counts them): cut between points, only the control channel's TCP would see it.
# Points of 3 s: seeing a point done and the next one's WRITEs flow takes up to a
# second in the VM, and with 1 s points the cut could land after the point's
# traffic, where the default --qp-timeout's half second of retries never runs out.
across_flap() {
  local name=$1 fault=$2 pid sent
  shift 2
  client "$name" --op write --mode bw --qps 2 -D 3 --size 1k,2k,4k,8k,16k,32k --timeout 20 "$@" &
  pid=$!
  if ! wait_for 120 points_done "$dir/$name.json"; then wait $pid; return 200; fi
  sent=$(rdma_sent)
  [[ -z $sent ]] || wait_for 30 rdma_sent_past "$((sent + 20))"
  ask "$fault" 3
  wait $pid
}
ridden_out() {
  local rc=0 out
  # siw errors every QP of a device whose interface goes down (siw_netdev_down), so on
  # siw the link is cut in the network instead: TCP retransmits across the gap, and
  # there is no QP retry knob to set. (The linkdown test shows the interface case.)
  if ((iwarp)); then
    across_flap ridden blackhole || rc=$?
    if ((rc == 200)); then fail "link down ridden out" "no point completed before the fault"
    elif ((rc)); then fail "link down ridden out" "client exit $rc: $(grep -m1 -i 'error\|fail' "$dir/ridden.log" | cut -c1-160)"
    elif ! out=$(check "$dir/ridden.json" --complete --kept 6); then fail "link down ridden out" "$out"
    else ok "3 s of every packet dropped ridden out by iWARP's TCP with no knob (6 points, exit 0)"; fi
    return
  fi
  across_flap ridden flap --qp-timeout 19 --retry-count 6 || rc=$?
  if ((rc == 200)); then fail "link down ridden out" "no point completed before the fault"
  elif ((rc)); then fail "link down ridden out" "client exit $rc: $(grep -m1 -i 'error\|fail' "$dir/ridden.log" | cut -c1-160)"
  elif ! out=$(check "$dir/ridden.json" --complete --kept 6 --retransmits); then fail "link down ridden out" "$out"
  else ok "link down 3 s ridden out with --qp-timeout 19 --retry-count 6 (6 points, exit 0)"; fi
  rc=0
  ask restart
  across_flap notridden flap --retry-count 6 || rc=$?
  if ((rc == 0)); then fail "link down not ridden out" "client exit 0 with the default --qp-timeout 14 across 3 s down"
  elif ! grep -q "transport retry counter exceeded" "$dir/notridden.json"; then
    fail "link down not ridden out" "exit $rc, but no point failed on its retries: $(grep -m1 -i 'error\|fail' "$dir/notridden.log" | cut -c1-160)"
  elif ! check "$dir/notridden.json" --kept 1 >/dev/null; then fail "link down not ridden out" "completed points lost"
  else ok "link down 3 s not ridden out with the default --qp-timeout 14 (retry counter exceeded, exit $rc)"; fi
}

# 8. (last) rdmasweep hunt with a planted anomaly.
source "$here/hunt-b.sh"
# 9. UD (tests/twohost/ud.sh).
source "$here/ud.sh"
# RDMASWEEP_TWOHOST_ONLY=hunt, =tclass, =ud, =cm or =ridden runs that test alone.
case ${RDMASWEEP_TWOHOST_ONLY:-} in
  hunt | tclass | ud | cm | ridden)
    case $RDMASWEEP_TWOHOST_ONLY in
      hunt) hunt_planted ;; tclass) tclass_on_wire ;; ud) ud_checks ;; cm) cm_across ;; ridden) ridden_out ;;
    esac
    echo "two-host tests: $fails failure(s)"
    exit $((fails > 0))
    ;;
esac

# expect NAME LABEL "CHECKS" CLIENT-ARGS...: a client run, then check.py on its results.
expect() {
  local name=$1 label=$2 c out rc=0
  read -ra c <<<"$3"
  shift 3
  client "$name" "$@" || rc=$?
  if ((rc)); then fail "$label" "client exit $rc: $(tail -n 2 "$dir/$name.log" | tr '\n' ' ')"
  elif out=$(check "$dir/$name.json" "${c[@]}"); then ok "$label"
  else fail "$label" "$out"; fi
}

# 1. Every op and mode with 1, 4 and 16 QPs: exact counts, both sides and their GIDs
# named. 2. the quick sweep, also with both sides' port counter deltas in every point.
ops_qps=1,4,16
expect ops "ops x modes x qps $ops_qps" "--complete --iters 40 --client rxe-b,$b --server rxe-a,$a ${tr[*]}" \
  --op send,write,read --mode bw,lat --qps "$ops_qps" --size 4096 -n 40 --warmup 4 --timeout 20

expect quick "configs/quick.json" "--complete --iters 200 --client rxe-b,$b --server rxe-a,$a ${counters[*]} ${tr[*]}" \
  --config "$here/../../configs/quick.json" --timeout 20

cm_across

# 3. doctor against the server on a.
if timeout 120 "$bin" doctor "$a" >"$dir/doctor.log" 2>&1; then ok "doctor $a"
else fail "doctor $a" "$(tail -n 3 "$dir/doctor.log")"; fi

# 4. A server bound to a's NIC address.
ask restart --bind "$a"
expect bind "server --bind $a" "--complete --iters 20" --op write --mode lat -n 20 --warmup 2 --size 64 --timeout 20
ask restart

# 5. Mid-test faults on a: the server killed, the link down for 3 s. The client must
# say so within --timeout (plus the time to notice), keep the points done before,
# and never hang; the sweep is a series of 1 s duration points.
midtest() {
  local name=$1; shift
  client "$name" --op write --mode bw --qps 2 -D 1 --size 1k,2k,4k,8k,16k,32k --timeout 3 &
  local pid=$! t0
  if ! wait_for 120 points_done "$dir/$name.json"; then fail "$name" "no point completed before the fault"; wait $pid; return; fi
  t0=$SECONDS
  ask "$@"
  wait $pid; local rc=$? took=$((SECONDS - t0))
  if ((rc == 124 || rc == 137)); then fail "$name" "client still running 240 s after the fault"
  elif ! check "$dir/$name.json" --kept 1 >/dev/null; then fail "$name" "completed points lost: $(check "$dir/$name.json" --kept 1)"
  elif ((rc == 0)) && [[ $1 == kill ]]; then fail "$name" "client exited 0 although the server was killed"
  elif ((took > 60)); then fail "$name" "client took $took s after the fault"
  else ok "$name (client exit $rc after $took s: $(grep -m1 -i 'error\|fail\|lost\|closed' "$dir/$name.log" | cut -c1-120))"; fi
}
midtest killed kill
ask restart
midtest linkdown flap 3
ask restart
ridden_out

# 6. netem on a's NIC: each run completes with exact counts or fails in one line
# within --timeout; never a hang, never a wrong count. The table goes to the log.
# fault NAME "CHECKS" REQUEST...: a's NIC made faulty by REQUEST, then a run.
fault() {
  local name=$1 c
  read -ra c <<<"$2"
  shift 2
  ask clear && ask "$@" || return
  client "$name" --op write,send --mode bw,lat --size 4096 -n 100 --warmup 5 --timeout 5
  local rc=$?
  ((iwarp)) && c=()  # no port counters on siw: nothing to count retransmits with
  if ((rc == 124 || rc == 137)); then fail "netem $name" "client hung"
  elif ((rc == 0)) && check "$dir/$name.json" --complete --iters 100 "${counters[@]}" "${c[@]}" --console "$dir/$name.log" --summary "$name"; then ok "netem $name"
  elif ((rc != 0)) && check "$dir/$name.json" --iters 100 --summary "$name"; then ok "netem $name (failed cleanly: $(grep -m1 -i 'error\|fail' "$dir/$name.log" | cut -c1-120))"
  else fail "netem $name" "wrong counts, missing counters or unreadable results (exit $rc)"; fi
}
fault none "" netem delay 0ms
fault loss1 "--retransmits" netem loss 1%
fault loss5 "--retransmits" netem loss 5%
fault delay5ms "" netem delay 5ms 1ms
fault reorder "" netem delay 1ms reorder 25% 50%
fault duplicate "" netem duplicate 5%
fault mtu "" mtu 600
ask clear

# 7. --tclass on the wire (tclass_on_wire, above).
tclass_on_wire

# 9. (before the hunt, which runs last) UD: exact counts on the clean link, losses
# counted, a lost ping said so.
if ((iwarp)); then skip "UD" "iWARP has no UD QPs"; else ud_checks; fi

if ((iwarp)); then
  skip "hunt planted" "its planted loss hits packets over one MTU, as rxe cuts messages; TCP segments its stream otherwise"
else hunt_planted; fi
echo "two-host tests ($provider): $fails failure(s)"
exit $((fails > 0))
