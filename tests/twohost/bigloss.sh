#!/usr/bin/env bash
# bigloss.sh DEV PERCENT: netem drops PERCENT of DEV's outgoing IP packets over 1000
# bytes (RoCE v2 packets carrying about an MTU of payload); smaller packets, such as
# ACKs and small messages, pass untouched. `tc qdisc del dev DEV root` undoes it.
set -euo pipefail
dev=$1 pct=$2
modprobe -a sch_prio sch_netem cls_basic em_cmp 2>/dev/null || true
# prio's default map sends ordinary traffic to band 2 (1:2); the filter sends the big
# packets to band 3 (1:3), the only one with netem.
tc qdisc replace dev "$dev" root handle 1: prio
tc qdisc replace dev "$dev" parent 1:3 handle 30: netem loss "$pct"
tc filter replace dev "$dev" parent 1: protocol ip prio 1 basic match 'cmp(u16 at 2 layer network gt 1000)' flowid 1:3
