#!/usr/bin/env bash
# lab-state.sh [DEV [PEER]]: one lab host's view, printed once when a lab test fails, so
# a reader can tell a flake of the lab from a fault of rdmasweep: the RDMA ports and
# the counters that move on trouble, the NIC (counters, tx timeouts, qdisc backlog and
# whether anything still moves), rdmasweep's processes with their states, and the
# kernel's last lines. With PEER: whether it answers ping.
dev=${1:-${RXE_LAB_NETDEV:-}} peer=${2:-}
me=$(hostname 2>/dev/null || echo "?")
say() { sed "s/^/lab-state $me: /"; }
for p in /sys/class/infiniband/*/ports/*; do
  [[ -e $p/state ]] || continue
  d=${p#/sys/class/infiniband/}
  c=""
  for n in retry_exceeded_err rcvd_seq_err completer_retry_err send_rnr_err rcvd_rnr_err duplicate_request \
    out_of_sequence ack_deferred sent_pkts rcvd_pkts; do
    [[ -r $p/hw_counters/$n ]] && c+=" $n=$(cat "$p/hw_counters/$n")"
  done
  echo "${d%%/*} port ${p##*/}: $(cut -d' ' -f2 "$p/state") ${c:+counters:$c}"
done | say
if [[ -n $dev && -e /sys/class/net/$dev ]]; then
  st() { cat "/sys/class/net/$dev/statistics/$1"; }
  rx0=$(st rx_packets) tx0=$(st tx_packets)
  echo "$dev: $(cat "/sys/class/net/$dev/operstate") rx $rx0 tx $tx0 drops $(st tx_dropped)/$(st rx_dropped)," \
    "tx timeouts $(cat "/sys/class/net/$dev/queues/tx-0/tx_timeout" 2>/dev/null || echo -)," \
    "qdisc $(tc -s qdisc show dev "$dev" | grep -o 'backlog [^ ]* [^ ]*' | head -n 1)" | say
  if [[ -n $peer ]]; then
    if ping -c 3 -W 2 -q "$peer" >/dev/null 2>&1; then a="answers ping"; else a="does NOT answer ping"; fi
    echo "$peer $a; in those seconds $dev rx +$(($(st rx_packets) - rx0)) tx +$(($(st tx_packets) - tx0))" | say
  fi
fi
ps -eo pid,stat,etimes,pcpu,wchan:20,args --sort=-pcpu |
  awk 'NR == 1 || /rdmasweep|mpirun|ib_[a-z_]+ / && !/awk|lab-state|\[/' | head -n 12 | say
dmesg 2>/dev/null | tail -n 5 | say
