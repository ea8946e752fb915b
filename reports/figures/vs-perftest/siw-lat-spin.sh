# 64 B READ or WRITE latency on siw0 with and without a busy loop on the servers' CPU.
# With -R (RDMA-CM, which iWARP needs) perftest exchanges its setup and its closing
# messages over RDMA and busy-polls for them, so its server spins on its CPU for the
# whole test; rdmasweep's passive READ target sleeps until DONE. siw answers a READ
# from a kernel thread on the responder QP's transmit CPU: woken on a CPU that spins it
# runs at once, on an idle one only after that CPU leaves its halt. Variants TOOL[-spin]:
# -spin adds `nice -n 19` busy loop pinned to the servers' CPU (which any woken thread
# preempts); rdmasweep-target is rdmasweep with --target-spin (its own server busy-polls
# while it waits for DONE, as perftest's does). Clients on CPU CLIENT_CPU, servers on the other; the order rotated each
# round; 3,000 round trips each, as siw-lat-held.sh.
# Run inside the lab: tools/rxe-lab --provider siw -- bash reports/figures/vs-perftest/siw-lat-spin.sh \
#   read|write CLIENT_CPU [ROUNDS [VARIANT...]]
# Summary: /usr/bin/python3 reports/figures/vs-perftest/rounds-summary.py FILE --pair rdmasweep perftest \
#   --pair rdmasweep-spin perftest-spin --pair rdmasweep-spin perftest
source "$(dirname "$0")/siw-txcpus.sh"
source "$(dirname "$0")/lat-summary.sh"
op=${1:?read or write} cc=${2:?the clients\' CPU, 0 or 1}
sc=$((1 - cc)) p=20600 inl=()
[[ $op == write ]] && inl=(-I 0)
echo "64 B $op latency, clients on CPU $cc, servers on CPU $sc"
source "$(dirname "$0")/siw-lat-runs.sh"
rounds=${3:-10}
variants=("${@:4}")
((${#variants[@]})) || variants=(perftest rdmasweep perftest-spin rdmasweep-spin)
nv=${#variants[@]}
for round in $(seq 1 "$rounds"); do
  for ((i = 0; i < nv; i++)); do
    v=${variants[$(( (i + round) % nv ))]}
    tool=${v%%-*} spin=
    [[ $v == *-spin ]] && { taskset -c $sc nice -n 19 sh -c 'while :; do :; done' & spin=$!; }
    if [[ $v == rdmasweep-target ]]; then out=$(rdmasweep --target-spin); else out=$($tool); fi
    [[ -n $spin ]] && { kill $spin; wait $spin 2>/dev/null; }
    echo "round $round RC $v $out"
  done
  dmesg -C
done
