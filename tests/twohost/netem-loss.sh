#!/usr/bin/env bash
# netem-loss.sh DEV PERCENT|"NETEM ARGS" WHICH: netem drops PERCENT (or does NETEM ARGS,
# e.g. "delay 300ms") of DEV's outgoing IP packets of one kind, and only those; the rest
# pass untouched. `tc qdisc del dev DEV root` undoes it.
#   big   packets over 1000 bytes (RoCE v2 packets carrying about an MTU of payload);
#         ACKs and small messages pass.
#   roce  RoCE v2 packets (UDP to port 4791); the control channel's TCP passes, so a
#         test of lost RDMA packets cannot fail on a lost SYN instead.
#   cm    RoCE v2 packets to QP 1 (the BTH's destination QP): RDMA-CM's MADs (REQ, RTU)
set -euo pipefail
dev=$1 pct=$2 which=$3
case $which in
  big) match='cmp(u16 at 2 layer network gt 1000)' ;;
  # rxe sends IP headers without options: the UDP destination port is at byte 22.
  roce) match='cmp(u8 at 9 layer network eq 17) and cmp(u16 at 22 layer network eq 4791)' ;;
  # The BTH follows the UDP header (byte 28); its destination QP is its bytes 5 to 7.
  cm) match='cmp(u8 at 9 layer network eq 17) and cmp(u16 at 22 layer network eq 4791) and cmp(u32 at 32 layer network mask 0x00ffffff eq 1)' ;;
  *) echo "netem-loss.sh: WHICH must be big, roce or cm, not '$which'" >&2; exit 2 ;;
esac
modprobe -a sch_prio sch_netem cls_basic em_cmp 2>/dev/null || true
# prio's default map sends ordinary traffic to band 2 (1:2); the filter sends the chosen
# packets to band 3 (1:3), the only one with netem.
tc qdisc replace dev "$dev" root handle 1: prio
if [[ $pct =~ ^[0-9.]+%?$ ]]; then args=(loss "$pct"); else read -ra args <<<"$pct"; fi
tc qdisc replace dev "$dev" parent 1:3 handle 30: netem "${args[@]}"
tc filter replace dev "$dev" parent 1: protocol ip prio 1 basic match "$match" flowid 1:3
