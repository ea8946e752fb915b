# Does a process spinning on the servers' CPU slow siw's bandwidth? With -R perftest's
# server busy-polls its RDMA exchange through the whole run (siw-readlat-perf.*), on the
# CPU where siw's kernel thread sends the READ responses and where the WRITEs' receive
# work may run; rdmasweep's passive target sleeps. Three points of the same-parameters
# table (vs-perftest's flags), each tool as is and rdmasweep with a busy loop at normal
# priority pinned to the servers' CPU (-spin0, standing in for perftest's server).
# Clients on CPU 1, servers on CPU 0; ROUNDS interleaved rounds, the order rotated.
# Run inside the lab: tools/rxe-lab --provider siw -- bash reports/figures/vs-perftest/siw-bw-spin.sh [ROUNDS]
source "$(dirname "$0")/siw-txcpus.sh"
rounds=${1:-5} p=20800
points=("write 64 1 20000" "write 65536 2 1000" "read 4096 1 5000")
perftest() { # OP SIZE QPS N
  local o=() out; [[ $1 == read ]] && o=(-o 128) || o=(-I 0)
  taskset -c 0 timeout 65 ib_$1_bw -d siw0 -R -F -p $p -n $4 -s $2 -q $3 --report_gbits -t 128 -Q 32 "${o[@]}" >/dev/null 2>&1 & sleep 1
  out=$(taskset -c 1 timeout 60 ib_$1_bw -d siw0 -R -F -p $p -n $4 -s $2 -q $3 --report_gbits -t 128 -Q 32 "${o[@]}" $A 2>/dev/null |
    awk -v s=$2 '$1==s{print $4}')
  wait; echo "${out:-none}"
}
rdmasweep() { # OP SIZE QPS N
  local o=(); [[ $1 == read ]] && o=(--outs 128) || o=(-I 0)
  taskset -c 0 timeout 65 $B server --bind 127.0.0.1 --port $p --once -d siw0 >/dev/null 2>&1 & sleep 1
  taskset -c 1 timeout 60 $B client 127.0.0.1 --port $p -d siw0 --no-progress --op $1 --mode bw -q $3 -n $4 -s $2 \
    --warmup 0 --clock tsc --poll-batch 16 -t 128 -Q 32 "${o[@]}" --out /tmp/r.json >/dev/null 2>&1 || { wait; echo none; return; }
  wait
  /usr/bin/python3 -c "import json;print(round(json.load(open('/tmp/r.json'))['benchmarks'][0]['bytes_per_second']*8e-9,4))"
}
variants=(perftest rdmasweep rdmasweep-spin0)
for pt in "${points[@]}"; do
  set -- $pt
  for round in $(seq 1 "$rounds"); do
    for ((i = 0; i < 3; i++)); do
      v=${variants[$(( (i + round) % 3 ))]} spin=
      p=$((p+1))
      [[ $v == *-spin0 ]] && { taskset -c 0 sh -c 'while :; do :; done' & spin=$!; }
      out=$(${v%-spin0} "$@")
      [[ -n $spin ]] && { kill $spin; wait $spin 2>/dev/null; }
      echo "$1/bw/qps:$3/size:$2 round $round $v Gb/s $out"
    done
  done
done
