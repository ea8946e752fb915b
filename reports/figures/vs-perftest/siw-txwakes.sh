# Who does the work of a 64 B READ (or WRITE) latency run on siw0, per tool: for each run
# the context switches of siw's transmit threads (siw_tx/0, siw_tx/1: one voluntary
# switch is one wake-up, one piece of deferred sending), of ksoftirqd/0 and /1, the
# NET_RX softirqs per CPU, and the client's own switches (GNU time: involuntary ones
# are preemptions of its busy poll), each per round trip. Clients on CPU CLIENT_CPU,
# servers on the other, as siw-lat-held.sh runs them (as is: no QPs held).
# Run inside the lab: tools/rxe-lab --provider siw -- bash reports/figures/vs-perftest/siw-txwakes.sh \
#   read|write CLIENT_CPU [ROUNDS]
source "$(dirname "$0")/siw-txcpus.sh"
source "$(dirname "$0")/lat-summary.sh"
op=${1:?read or write} cc=${2:?the clients\' CPU, 0 or 1} rounds=${3:-3}
sc=$((1 - cc)) p=20400 n=3000 inl=()
[[ $op == write ]] && inl=(-I 0)
echo "64 B $op latency, $n round trips, clients on CPU $cc, servers on CPU $sc; counts per round trip"
threads=(siw_tx/0 siw_tx/1 ksoftirqd/0 ksoftirqd/1)
# voluntary+involuntary switches of each thread above, then NET_RX on CPU 0 and 1
counts() {
  local t pid
  for t in "${threads[@]}"; do
    pid=$(pgrep -x "$t" | head -1)
    awk '/^voluntary_ctxt_switches/{v=$2} /^nonvoluntary_ctxt_switches/{n=$2} END{printf "%d %d ", v, n}' "/proc/$pid/status"
  done
  awk '$1=="NET_RX:"{printf "%d %d\n", $2, $3}' /proc/softirqs
}
# the difference of two counts() lines, per round trip, labelled
per_rt() {
  echo "$1 $2" | awk -v n=$n '{
    split("tx0.vol tx0.inv tx1.vol tx1.inv ksi0.vol ksi0.inv ksi1.vol ksi1.inv netrx0 netrx1", l, " ")
    k = NF / 2; for (i = 1; i <= k; i++) printf "%s %.2f ", l[i], ($(i + k) - $i) / n }'
}
client_switches() { awk '/^switches/{printf "client.vol %.2f client.inv %.2f", $2/'$n', $3/'$n'}' /tmp/sw; }
# The runs of siw-lat-held.sh, the client under GNU time for its context switches.
wrap=(/usr/bin/time -f "switches %w %c" -o /tmp/sw)
source "$(dirname "$0")/siw-lat-runs.sh"
for round in $(seq 1 "$rounds"); do
  for tool in perftest rdmasweep; do
    before=$(counts)
    out="$($tool) $(client_switches)"
    after=$(counts)
    echo "round $round RC $tool $out"
    echo "  $(per_rt "$before" "$after")"
    echo "  tx-cpus (QP order): $(txcpus)"
  done
done
