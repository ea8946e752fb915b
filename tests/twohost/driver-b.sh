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
fail() { echo "FAIL $1: $2"; fails=$((fails + 1)); show_lab; }
# After the first failure, once: the failing test's client (how long it ran against its
# limit, its log's last lines) and both hosts' view (tests/lab-state.sh: ports and
# counters, the NIC and whether the peer answers, rdmasweep's processes and states, the
# kernel's last lines; a's also the server's last lines), to tell a flake from a fault.
lab_shown=0 last_client="" last_took=0
show_lab() {
  ((lab_shown)) && return
  lab_shown=1
  if [[ -n $last_client ]]; then
    echo "lab-state: client $last_client ran $last_took s (limit 240 s); its last lines:"
    tail -n 4 "$dir/$last_client.log" | sed 's/^/lab-state:   /'
  fi
  "$here/../lab-state.sh" "$RXE_LAB_NETDEV" "$a"
  ask labstate "$b"
}
# A bounded wait for a condition, polled: never a fixed sleep standing in for one.
wait_for() { local secs=$1; shift; local end=$((SECONDS + secs)); until "$@"; do ((SECONDS < end)) || return 1; sleep 0.1; done; }
# ask WHAT [ARGS]: host a carries it out; returns once it is done, with a's status in $answer.
answer=""
ask() {
  req=$((req + 1))
  echo "$*" >"$dir/req.tmp" && mv "$dir/req.tmp" "$dir/req.$req"
  wait_for 60 test -e "$dir/ack.$req" || { fail "request '$*'" "host a did not answer within 60 s"; return 1; }
  read -r answer <"$dir/ack.$req"
}
# Seconds on this host's monotonic clock, the --progress-file's clock.
now() { python3 -c 'import time; print(f"{time.monotonic():.3f}")'; }
# during NAME "FAULT [ARGS]" CLIENT-ARGS...: host a arms FAULT for the moment the
# server reports the traffic of the client's second point, then the client runs (its
# progress in $dir/NAME.progress); returns the client's status. After it, $fired is 0
# when the fault fired, and $took the seconds from the second point's traffic (as the
# client reports it) to the client's end. No poll from outside picks the moment: the
# server's own line does, on the host where the fault is made.
fired=1 took=0
during() {
  local name=$1 fault=$2 rc=0 t2
  shift 2
  fired=1 took=0
  # shellcheck disable=SC2086 # FAULT is a request and its arguments
  ask arm 2 $fault || return 200
  client "$name" --progress-file "$dir/$name.progress" "$@" || rc=$?
  t2=$(awk '/^traffic /{if (++n == 2) {sub("t=", "", $NF); print $NF}}' "$dir/$name.progress")
  took=$(python3 -c 'import sys; print(int(float(sys.argv[1]) - float(sys.argv[2] or sys.argv[1])))' "$(now)" "$t2")
  ask fired
  fired=$answer
  return $rc
}
# client NAME ARGS...: runs the client against a into $dir/NAME.json, bounded by
# `timeout` so that a hang fails the test instead of the whole job.
client() {
  local name=$1 t0=$SECONDS rc=0
  shift
  timeout -k 5 240 "$bin" client "$a" --out "$dir/$name.json" "$@" >"$dir/$name.log" 2>&1 || rc=$?
  last_client=$name last_took=$((SECONDS - t0))
  return $rc
}

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

# 9b. --cm with the client's CM messages to a (REQ, RTU) 300 ms late: the client's QPs
# are connected on its side, and its CONNECT on the control channel reaches the server,
# before the server's last ESTABLISHED: the server keeps it and goes on (it used to
# take any message there for the client giving up).
cm_late_rtu() {
  if ((iwarp)); then skip "--cm with late RTUs" "iWARP's connection is TCP's (the ops test connects it)"; return; fi
  local rc=0 out
  "$here/netem-loss.sh" "$RXE_LAB_NETDEV" "delay 300ms" cm || { fail "--cm with late RTUs" "cannot set up netem"; return; }
  client cmlate --cm --op write,send --qps 4 --size 64 -n 40 --warmup 4 --timeout 20 || rc=$?
  tc qdisc del dev "$RXE_LAB_NETDEV" root 2>/dev/null
  if ((rc)); then fail "--cm with late RTUs" "client exit $rc: $(tail -n 2 "$dir/cmlate.log" | tr '\n' ' ')"
  elif ! out=$(check "$dir/cmlate.json" --complete --iters 40); then fail "--cm with late RTUs" "$out"
  else ok "--cm with late RTUs: the client's CONNECT before the server's ESTABLISHED, kept (2 points, exact counts)"; fi
}

# 5b. The link down for 3 s ridden out, or not, by the QPs' transport retries: with
# --qp-timeout 19 (a retry after 2.1 s) and --retry-count 6 the QPs retransmit across the
# gap: exit 0, every point kept, none failed, the retransmits counted. With the default
# timeout (67 ms) the same 6 retries are spent within half a second: the point fails
# with "transport retry counter exceeded". (Not --retry-count 7: rxe retries forever
# at 7, the InfiniBand spec's "infinite" for RNR retries, which it applies to both.)
# The cut starts as the server reports the second point's traffic (during, above): it
# lands while that point's WRITEs flow, on any machine. They flow for 10 s: the agent's
# own reaction (a poll, ip link in an emulated VM) took over 1 s on a busy host once,
# when the points lasted 1 s and the cut fell between them.
# TCP segments this host has retransmitted (every connection's).
tcp_retrans() { awk '/^Tcp:/ && ++n == 2 {print $13}' /proc/net/snmp; }
ridden_out() {
  # shellcheck disable=SC2054 # the commas are --size's list
  local rc=0 out r0 sweep=(--op write --mode bw --qps 2 -D 10 --size 1k,32k --timeout 20)
  # siw errors every QP of a device whose interface goes down (siw_netdev_down), so on
  # siw the link is cut in the network instead: TCP retransmits across the gap, and
  # there is no QP retry knob to set. (The linkdown test shows the interface case.)
  if ((iwarp)); then
    r0=$(tcp_retrans)
    during ridden "blackhole 3" "${sweep[@]}" || rc=$?
    if ((fired)); then fail "link down ridden out" "the cut never fired (exit $rc): the server reported no second point"
    elif ((rc)); then fail "link down ridden out" "client exit $rc: $(grep -m1 -i 'error\|fail' "$dir/ridden.log" | cut -c1-160)"
    elif ! out=$(check "$dir/ridden.json" --complete --kept 2); then fail "link down ridden out" "$out"
    elif (($(tcp_retrans) == r0)); then fail "link down ridden out" "no TCP segment retransmitted: the cut missed the traffic"
    else ok "link down ridden out: 3 s of every packet dropped, ridden out by iWARP's TCP with no knob ($(($(tcp_retrans) - r0)) TCP retransmits, 2 points, exit 0)"; fi
    return
  fi
  during ridden "flap 3" "${sweep[@]}" --qp-timeout 19 --retry-count 6 || rc=$?
  if ((fired)); then fail "link down ridden out" "the cut never fired (exit $rc): the server reported no second point"
  elif ((rc)); then fail "link down ridden out" "client exit $rc: $(grep -m1 -i 'error\|fail' "$dir/ridden.log" | cut -c1-160)"
  elif ! out=$(check "$dir/ridden.json" --complete --kept 2 --retransmits); then fail "link down ridden out" "$out"
  else ok "link down ridden out: 3 s with --qp-timeout 19 --retry-count 6 (2 points, exit 0)"; fi
  rc=0
  ask restart
  during notridden "flap 3" "${sweep[@]}" --retry-count 6 || rc=$?
  if ((fired)); then fail "link down not ridden out" "the cut never fired (exit $rc): the server reported no second point"
  elif ((rc == 0)); then fail "link down not ridden out" "client exit 0 with the default --qp-timeout 14 across 3 s down"
  elif ! grep -q "transport retry counter exceeded" "$dir/notridden.json"; then
    fail "link down not ridden out" "exit $rc, but no point failed on its retries: $(grep -m1 -i 'error\|fail' "$dir/notridden.log" | cut -c1-160)"
  elif ! check "$dir/notridden.json" --kept 1 >/dev/null; then fail "link down not ridden out" "completed points lost"
  else ok "link down not ridden out: 3 s with the default --qp-timeout 14 (retry counter exceeded, exit $rc)"; fi
}

# 5. Mid-test faults on a: the server killed, the link down for 3 s, as the server
# reports the second point's traffic. The client must say so within --timeout (plus the
# time to notice), keep the points done before, and never hang; the sweep is a series
# of 1 s duration points.
midtest() {
  local name=$1 rc=0
  shift
  during "$name" "$*" --op write --mode bw --qps 2 -D 1 --size 1k,2k,4k,8k,16k,32k --timeout 3 || rc=$?
  if ((fired)); then fail "$name" "the fault never fired (exit $rc): the server reported no second point"
  elif ((rc == 124 || rc == 137)); then fail "$name" "client still running 240 s after the fault"
  elif ! check "$dir/$name.json" --kept 1 >/dev/null; then fail "$name" "completed points lost: $(check "$dir/$name.json" --kept 1)"
  elif ((rc == 0)) && [[ $1 == kill ]]; then fail "$name" "client exited 0 although the server was killed"
  elif ((took > 60)); then fail "$name" "client took $took s after the fault"
  else ok "$name (client exit $rc after $took s: $(grep -m1 -i 'error\|fail\|lost\|closed' "$dir/$name.log" | cut -c1-120))"; fi
}
midtests() {
  midtest killed kill
  ask restart
  midtest linkdown flap 3
  ask restart
}

# 8. (last) rdmasweep hunt with a planted anomaly.
source "$here/hunt-b.sh"
# 9. UD (tests/twohost/ud.sh).
source "$here/ud.sh"
# RDMASWEEP_TWOHOST_ONLY=hunt, =tclass, =ud, =cm, =midtest or =ridden runs that test alone.
case ${RDMASWEEP_TWOHOST_ONLY:-} in
  hunt | tclass | ud | cm | midtest | ridden)
    case $RDMASWEEP_TWOHOST_ONLY in
      hunt) hunt_planted ;; tclass) tclass_on_wire ;; ud) ud_checks ;; cm) cm_across; cm_late_rtu ;; ridden) ridden_out ;;
      midtest) midtests ;;
    esac
    echo "two-host tests: $fails failure(s)"
    exit $((fails > 0))
    ;;
esac

# Each test prints "ok NAME[: details]" or "FAIL NAME: why" (or "skip NAME on ...": the
# same NAME either way, before the first ": " or " (", which tools/test --repeat counts by).
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
cm_late_rtu

# 3. doctor against the server on a.
if timeout 120 "$bin" doctor "$a" >"$dir/doctor.log" 2>&1; then ok "doctor $a"
else fail "doctor $a" "$(tail -n 3 "$dir/doctor.log")"; fi

# 4. A server bound to a's NIC address.
ask restart --bind "$a"
expect bind "server --bind $a" "--complete --iters 20" --op write --mode lat -n 20 --warmup 2 --size 64 --timeout 20
ask restart

midtests
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
