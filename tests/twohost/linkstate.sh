#!/usr/bin/env bash
# linkstate.sh DEV PEER: one host's view of the emulated link, printed when a test
# finds the peer unreachable. A dead link fails every later test the same way; this
# tells a stalled NIC (counters frozen, "transmit queue timed out", packets stuck in
# the qdisc) from rdmasweep's own fault.
dev=$1 peer=$2
me=$(hostname 2>/dev/null || echo "?")
st() { cat "/sys/class/net/$dev/statistics/$1"; }
netrx() { awk '/NET_RX/{for (i = 2; i <= NF; i++) s += $i; print s}' /proc/softirqs; }
if ping -c 3 -W 2 -q "$peer" >/dev/null 2>&1; then said="answers ping"; else said="does NOT answer ping"; fi
echo "linkstate $me: $peer $said; $dev rx $(st rx_packets) tx $(st tx_packets)," \
  "tx timeouts $(cat "/sys/class/net/$dev/queues/tx-0/tx_timeout" 2>/dev/null)," \
  "virtio_net napi_tx=$(cat /sys/module/virtio_net/parameters/napi_tx 2>/dev/null)"
echo "linkstate $me: qdisc $(tc -s qdisc show dev "$dev" | grep -o 'backlog [^ ]* [^ ]*' | head -n 1)"
rx0=$(st rx_packets) tx0=$(st tx_packets) s0=$(netrx)
sleep 3 # is anything still moving?
echo "linkstate $me: in 3 s: rx +$(($(st rx_packets) - rx0)) tx +$(($(st tx_packets) - tx0)) NET_RX softirqs +$(($(netrx) - s0))"
ps -eo pid,stat,pcpu,wchan:24,comm --sort=-pcpu | awk 'NR > 1 && NR <= 4' | sed "s/^/linkstate $me: busiest: /"
dmesg 2>/dev/null | tail -n 4 | sed "s/^/linkstate $me: dmesg: /"
