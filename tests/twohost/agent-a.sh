#!/usr/bin/env bash
# Host a of the two-host tests: runs `rdmasweep server` and carries out host b's
# requests (restart the server, kill it, take the link down or drop all its packets, netem), which arrive as
# files DIR/req.N in the checkout both VMs share; DIR/ack.N says one is done.
# Stopped by tools/rxe-lab when b's tests end.
set -uo pipefail
dir=${RDMASWEEP_TWOHOST_DIR:?}
bin=${RDMASWEEP_BIN:?}
dev=${RXE_LAB_NETDEV:?}
server=""
start() { "$bin" server "$@" & server=$!; }
stop() { [[ -z $server ]] || { kill -KILL "$server"; wait "$server"; } 2>/dev/null; server=""; }
trap 'stop; exit 0' TERM
modprobe sch_netem 2>/dev/null
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
    kill) stop ;;
    flap) ip link set "$dev" down; sleep "$args"; ip link set "$dev" up ;;
    blackhole) tc qdisc replace dev "$dev" root netem loss 100%; sleep "$args"; tc qdisc del dev "$dev" root ;;
    netem) read -ra a <<<"$args"; tc qdisc replace dev "$dev" root netem "${a[@]}" ;;
    clear) tc qdisc del dev "$dev" root 2>/dev/null; ip link set "$dev" mtu 1500 ;;
    mtu) ip link set "$dev" mtu "$args" ;;
    bigloss) "$(dirname "$0")/netem-loss.sh" "$dev" "$args" big ;;
    linkstate) "$(dirname "$0")/linkstate.sh" "$dev" "$args" ;;
  esac
  echo "$?" >"$dir/ack.$n"
  n=$((n + 1))
done
