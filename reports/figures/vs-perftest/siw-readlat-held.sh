# 64 B READ latency on siw0 with the clients on CPU 1 (the table's placement), each tool
# with and without one QP held open on siw0 before it starts (ibv_rc_pingpong's server,
# waiting for a peer that never comes). siw gives each new QP the transmit CPU with the
# fewest QPs (ties to the last), so the held QP, made on CPU 1, moves every QP the tools
# make next to the other CPU than without it. siw's choice for each QP is printed.
source "$(dirname "$0")/siw-txcpus.sh"
p=19300
for r in 1 2 3; do
  for held in no yes; do
    if [[ $held == yes ]]; then
      ibv_rc_pingpong -d siw0 -p $((p + 50)) >/dev/null 2>&1 & hp=$!
      sleep 1
      h="held QP on $(txcpus)"
    else h="nothing held"; fi
    p=$((p+1)); taskset -c 0 ib_read_lat -d siw0 -R -F -p $p -n 3000 -s 64 >/dev/null 2>&1 & sleep 1
    echo "$h | perftest  $(taskset -c 1 ib_read_lat -d siw0 -R -F -p $p -n 3000 -s 64 $A 2>/dev/null | awk '$1==64{print "min",$3,"p50",$5,"p99",$8}') tx-cpus(QP order) $(txcpus)"; wait $!
    p=$((p+1)); taskset -c 0 $B server --bind 127.0.0.1 --port $p --once -d siw0 >/dev/null 2>&1 & sp=$!; sleep 1
    taskset -c 1 $B client 127.0.0.1 --port $p -d siw0 --no-progress --op read --mode lat -q 1 -n 3000 --out /tmp/r.json -s 64 --warmup 0 --clock tsc >/dev/null 2>&1
    wait $sp
    echo "$h | rdmasweep $(/usr/bin/python3 -c "import json;b=json.load(open('/tmp/r.json'))['benchmarks'][0];print('min',round(b['lat_min_us'],2),'p50',round(b['lat_p50_us'],2),'p99',round(b['lat_p99_us'],2))") tx-cpus(QP order) $(txcpus)"
    if [[ $held == yes ]]; then kill $hp; wait $hp 2>/dev/null; sleep 0.5; dmesg -C; fi
  done
done
