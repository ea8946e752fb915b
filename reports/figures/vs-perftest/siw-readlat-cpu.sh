# 64 B READ latency on siw0, each tool's client pinned to CPU 0 and then CPU 1 (server on
# the other), with siw's choice of transmit CPU for every QP from its debug messages:
# does the gap follow where siw sends the READ responses from, relative to the poller?
source "$(dirname "$0")/siw-txcpus.sh"
p=19200
for r in 1 2 3; do
  for c in 0 1; do
    s=$((1 - c))
    p=$((p+1)); taskset -c $s ib_read_lat -d siw0 -R -F -p $p -n 3000 -s 64 >/dev/null 2>&1 & sleep 1
    echo "client-cpu $c perftest  $(taskset -c $c ib_read_lat -d siw0 -R -F -p $p -n 3000 -s 64 $A 2>/dev/null | awk '$1==64{print "min",$3,"p50",$5,"p99",$8}') tx-cpus(QP order) $(txcpus)"; wait
    p=$((p+1)); taskset -c $s $B server --bind 127.0.0.1 --port $p --once -d siw0 >/dev/null 2>&1 & sleep 1
    taskset -c $c $B client 127.0.0.1 --port $p -d siw0 --no-progress --op read --mode lat -q 1 -n 3000 --out /tmp/r.json -s 64 --warmup 0 --clock tsc >/dev/null 2>&1
    wait
    echo "client-cpu $c rdmasweep $(/usr/bin/python3 -c "import json;b=json.load(open('/tmp/r.json'))['benchmarks'][0];print('min',round(b['lat_min_us'],2),'p50',round(b['lat_p50_us'],2),'p99',round(b['lat_p99_us'],2))") tx-cpus(QP order) $(txcpus)"
  done
done
