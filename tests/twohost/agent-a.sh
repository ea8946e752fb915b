#!/usr/bin/env bash
# Host a of the two-host tests: runs `rdmasweep server` and carries out host b's
# requests (restart the server, kill it, take the link down or drop all its packets, netem,
# its NIC's frame counts;
# a fault armed for the moment the server reports a point's traffic), which arrive as
# files DIR/req.N in the checkout both VMs share; DIR/ack.N says one is done, with its status.
# Stopped by tools/rxe-lab when b's tests end.
set -uo pipefail
dir=${RDMASWEEP_TWOHOST_DIR:?}
bin=${RDMASWEEP_BIN:?}
dev=${RXE_LAB_NETDEV:?}
server=""
# The server's --progress-file, on this VM's own /tmp: a "traffic NAME" line as each
# point's traffic starts, which an armed fault waits for (arm, below).
progress=/tmp/server.progress
# Its output goes to /tmp/server.log, whose last lines a failure shows (labstate).
start() { "$bin" server --progress-file "$progress" "$@" >>/tmp/server.log 2>&1 & server=$!; }
stop() { [[ -z $server ]] || { kill -KILL "$server"; wait "$server"; } 2>/dev/null; server=""; }
traffic_lines() { awk '/^traffic /{n++} END{print n+0}' "$progress"; }
# act WHAT [ARGS]: a fault on this host, now.
act() {
  local what=$1 args=${2:-}
  case $what in
    kill) stop ;;
    flap) ip link set "$dev" down; sleep "$args"; ip link set "$dev" up ;;
    blackhole) tc qdisc replace dev "$dev" root netem loss 100%; sleep "$args"; tc qdisc del dev "$dev" root ;;
  esac
}
# arm N WHAT [ARGS]: WHAT is done the moment the server reports the traffic of the Nth
# point from now (its N-th "traffic" line from here on), so the fault lands inside that
# point however fast or slow the machine is. `fired`, once the client has ended (no
# line can come after), waits for the armed fault to finish and answers 0, or answers
# 1 when it never fired.
watcher="" fire_at=0
arm() {
  local n=$1
  shift
  fire_at=$(($(traffic_lines) + n))
  (
    until (($(traffic_lines) >= fire_at)); do sleep 0.02; done
    echo "agent a: $* at the server's traffic line $fire_at: $(grep '^traffic ' "$progress" | sed -n "${fire_at}p")"
    act "$@"
  ) &
  watcher=$!
}
fired() {
  [[ -n $watcher ]] || return 1
  local rc=0
  if (($(traffic_lines) >= fire_at)); then wait "$watcher"; else kill "$watcher"; wait "$watcher"; rc=1; fi 2>/dev/null
  watcher=""
  return $rc
}
trap 'stop; exit 0' TERM
modprobe sch_netem 2>/dev/null
: >"$progress"
start
touch "$dir/ready.a"
n=1
while :; do
  req=$dir/req.$n
  while [[ ! -e $req ]]; do sleep 0.1; done
  read -r what args <"$req"
  echo "agent a: $what $args"
  case $what in
    restart) stop; read -ra a <<<"$args"; start "${a[@]}" ;;
    kill | flap | blackhole) act "$what" "$args" ;;
    arm) read -ra a <<<"$args"; arm "${a[@]}" ;;
    fired) fired ;;
    netem) read -ra a <<<"$args"; tc qdisc replace dev "$dev" root netem "${a[@]}" ;;
    clear) tc qdisc del dev "$dev" root 2>/dev/null; ip link set "$dev" mtu 1500 ;;
    mtu) ip link set "$dev" mtu "$args" ;;
    # A file of its own each time: the shared checkout's cache on b keeps a rewritten one stale.
    netcount) cat /sys/class/net/"$dev"/statistics/{rx,tx}_packets | paste -sd ' ' >"$dir/netcount.$n" ;;
    bigloss) "$(dirname "$0")/netem-loss.sh" "$dev" "$args" big ;;
    labstate)
      "$(dirname "$0")/../lab-state.sh" "$dev" "$args"
      tail -n 6 /tmp/server.log | sed "s/^/lab-state $(hostname): server: /" ;;
  esac
  echo "$?" >"$dir/ack.$n"
  n=$((n + 1))
done
