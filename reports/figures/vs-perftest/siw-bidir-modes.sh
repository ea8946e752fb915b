# 64 KiB WRITE both ways on siw0, the "same" row's flags (-n 1000 -t 128 -Q 32 -I 0),
# clients on CPU 1, servers on CPU 0, ROUNDS interleaved rounds, as siw-bidir-dirs.sh.
# Around each run: each CPU's time by kind (/proc/stat: user, system, softirq, idle, in
# ms), the CPU time of siw's transmit threads (siw_tx/0, siw_tx/1) and TCP's counters
# (nstat), and siw's transmit CPU of each QP made (siw-txcpus.sh). What does a slow
# round spend its time on that a fast one does not? RUNS, if given, replaces the
# rounds with exactly these runs in this order (p: perftest, r: rdmasweep, a path:
# rdmasweep built otherwise; "r r p p").
# Run inside the lab: tools/rxe-lab --provider siw -- bash reports/figures/vs-perftest/siw-bidir-modes.sh [ROUNDS [RUNS]]
# The other builds in siw-bidir-modes-variants.txt and -spin.txt are this tree with one
# line changed each, built in a copy (cmake --build COPY --target rdmasweep) and the
# binary copied into build/:
#   rdmasweep-nohb  core/control/protocol.hpp: kTickEvery{3600000} (no TICK in a run)
#   rdmasweep-late  core/point/point_protocol.cpp, follow(): the server sleeps 20 ms
#                   (std::this_thread::sleep_for) before its direction, f.lead(cpu)
#   rdmasweep-spin  core/point/point_protocol.cpp, lead_connection(): the client waits
#                   for READY spinning, expect(link, MsgType::Ready, timeout, true)
source "$(dirname "$0")/siw-txcpus.sh"
rounds=${1:-8} runs=${2:-} p=19700
f=(-n 1000 -s 65536 -q 1 -t 128 -Q 32 -I 0)
tick=$((1000 / $(getconf CLK_TCK)))
# cpuN user system softirq idle (ms), then siw_tx/0 and siw_tx/1 (ms)
snap() {
  awk -v t=$tick '/^cpu[0-9]/{printf "%s %d %d %d %d ", $1, ($2+$3)*t, $4*t, ($7+$8)*t, ($5+$6)*t}' /proc/stat
  for n in 0 1; do
    pid=$(pgrep -x "siw_tx/$n")
    awk -v t=$tick '{printf "%d ", ($14+$15)*t}' "/proc/$pid/stat"
  done
}
delta() {  # before after: per field difference, labelled
  read -ra a <<<"$1"; read -ra b <<<"$2"
  printf '  cpu0 usr %d sys %d sirq %d idle %d | cpu1 usr %d sys %d sirq %d idle %d | siw_tx/0 %d siw_tx/1 %d ms\n' \
    $((b[1]-a[1])) $((b[2]-a[2])) $((b[3]-a[3])) $((b[4]-a[4])) $((b[6]-a[6])) $((b[7]-a[7])) $((b[8]-a[8])) $((b[9]-a[9])) \
    $((b[10]-a[10])) $((b[11]-a[11]))
}
tcp() { nstat -s | awk '$1~/^(TcpOutSegs|TcpRetransSegs|TcpExtDelayedACKs|TcpExtTCPPureAcks|TcpExtTCPHPAcks|TcpExtTCPBacklogCoalesce|TcpExtTCPRcvCoalesce|TcpExtTCPAutoCorking|TcpExtTCPWantZeroWindowAdv|TcpExtTCPToZeroWindowAdv|TcpExtTCPFromZeroWindowAdv|TcpExtTCPRcvQDrop|TcpExtPruneCalled|TcpExtTCPOFOQueue|TcpExtTCPMemoryPressures)$/{sub(/^Tcp(Ext)?(TCP)?/,"",$1); printf "%s %s ", $1, $2}'; echo; }
nstat -n
perftest() {
  p=$((p+1)); taskset -c 0 timeout 65 ib_write_bw -d siw0 -R -F -p $p --report_gbits -b "${f[@]}" >/dev/null 2>&1 & sleep 1
  nstat -n; s0=$(snap)
  g=$(taskset -c 1 timeout 60 ib_write_bw -d siw0 -R -F -p $p --report_gbits -b "${f[@]}" $A 2>/dev/null | awk '$1==65536{print $4}')
  wait; s1=$(snap)
  echo "perftest  Gb/s $g"; delta "$s0" "$s1"; echo "  tcp $(tcp)"; echo "  tx cpus $(txcpus)"
}
rdmasweep() {
  local B=${1:-$B}
  p=$((p+1)); taskset -c 0 timeout 65 $B server --bind 127.0.0.1 --port $p --once -d siw0 >/dev/null 2>&1 & sleep 1
  nstat -n; s0=$(snap)
  taskset -c 1 timeout 60 $B client 127.0.0.1 --port $p -d siw0 --no-progress --op write --mode bw --bidir --warmup 0 \
    --clock tsc --poll-batch 16 "${f[@]}" --out /tmp/w.json >/dev/null 2>&1
  wait; s1=$(snap)
  echo "${1:-rdmasweep} Gb/s $(/usr/bin/python3 -c "import json; print(round(json.load(open('/tmp/w.json'))['benchmarks'][0]['total_bytes_per_second'] * 8e-9, 4))")"
  delta "$s0" "$s1"; echo "  tcp $(tcp)"; echo "  tx cpus $(txcpus)"
}
if [[ -n $runs ]]; then
  n=0
  for t in $runs; do
    n=$((n+1))
    case $t in p) run=(perftest) ;; r) run=(rdmasweep) ;; *) [[ -x $t ]] || { echo "no tool '$t'" >&2; exit 2; }; run=(rdmasweep "$t") ;; esac
    "${run[@]}" | sed "1s/^/run $n /"
  done
  exit
fi
for round in $(seq 1 "$rounds"); do
  if ((round % 2)); then order=(perftest rdmasweep); else order=(rdmasweep perftest); fi
  for t in "${order[@]}"; do $t | sed "1s/^/round $round /"; done
done
