# 64 B WRITE or READ latency on siw0, each tool as is and with QPs held open on siw0
# before it starts (ibv_rc_pingpong's servers, waiting for a peer that never comes),
# which steer siw's choice of transmit CPU for the QPs the tools make next (the CPU
# with the fewest QPs, ties to the last: siw-readlat-held.sh). Clients on CPU
# CLIENT_CPU, servers on the other. 15 rounds, the order rotated each round, 3,000
# round trips each, the same-parameters table's flags; after each run, siw's transmit
# CPU for each QP made, in the order made.
# Run inside the lab: tools/rxe-lab --provider siw -- bash reports/figures/vs-perftest/siw-lat-held.sh \
#   write|read CLIENT_CPU [ROUNDS [VARIANT...]]   (below: the variants; 15 rounds of the six)
# Summary: /usr/bin/python3 reports/figures/vs-perftest/rounds-summary.py FILE --pair perftest-held rdmasweep-held --pair perftest-matched rdmasweep-matched
source "$(dirname "$0")/siw-txcpus.sh"
source "$(dirname "$0")/lat-summary.sh"
op=${1:?write or read} cc=${2:?the clients\' CPU, 0 or 1}
sc=$((1 - cc)) p=20300 inl=()
[[ $op == write ]] && inl=(-I 0)
echo "64 B $op latency, clients on CPU $cc, servers on CPU $sc"
# held: one QP held (on CPU 1, siw's tie), so the tools' QPs swap CPUs. matched: three
# held (on 1, 0, 1) and the second let go, so CPU 1 has two more QPs than CPU 0: both of
# rdmasweep's QPs go to CPU 0 (0 0 0 0 0 0), while perftest's measured pair, its third
# and fourth QPs (0 0 1 0), stays on 1 and 0. The name is a mistake kept so the files
# beside it read as they ran: it does not match the tools (siw-qp-pairs.sh); as is and
# held do.
hold() {
  hp=()
  for port in 20297 20298 20299; do
    ibv_rc_pingpong -d siw0 -p $port >/dev/null 2>&1 & hp+=($!)
    sleep 1
    [[ $1 == held ]] && break
  done
  echo "  held QPs on $(txcpus)"
  if [[ $1 == matched ]]; then kill "${hp[1]}"; wait "${hp[1]}" 2>/dev/null; sleep 0.5; echo "  the second let go"; fi
}
unhold() { kill "${hp[@]}" 2>/dev/null; wait "${hp[@]}" 2>/dev/null; sleep 0.5; dmesg -C; }
source "$(dirname "$0")/siw-lat-runs.sh"
# The variants, each TOOL[-held|-matched].
rounds=${3:-15}
variants=("${@:4}")
((${#variants[@]})) || variants=(perftest rdmasweep perftest-held rdmasweep-held perftest-matched rdmasweep-matched)
nv=${#variants[@]}
for round in $(seq 1 "$rounds"); do
  for ((i = 0; i < nv; i++)); do
    v=${variants[$(( (i + round) % nv ))]}
    tool=${v%%-*} place=${v#"$tool"} place=${place#-}
    [[ -n $place ]] && hold "$place"
    out=$($tool)
    echo "round $round RC $v $out"
    echo "  tx-cpus (QP order): $(txcpus)"
    [[ -n $place ]] && unhold
  done
done
