# Where each CPU's time goes during one 64 B READ-latency run of each tool on siw0
# (clients on CPU 1, servers on CPU 0, as vs-perftest runs them): `perf record` of
# both CPUs (cpu-clock, 4 kHz) around the client, then each CPU's share by command.
# perftest with -R exchanges its closing messages over RDMA and busy-polls for them,
# so its server (ib_read_lat on CPU 0) spins through the client's whole run; rdmasweep's
# server waits for DONE in poll(2), and CPU 0 idles (swapper) between siw's responses.
# Run inside the lab: tools/rxe-lab --provider siw -- bash reports/figures/vs-perftest/siw-readlat-perf.sh
source "$(dirname "$0")/siw-txcpus.sh"
source "$(dirname "$0")/lat-summary.sh"
rec() { perf record -q -o "/tmp/$1.data" -C 0,1 -e cpu-clock -F 4000 -- "${@:2}"; }
share() { perf report -i "/tmp/$1.data" --stdio --sort cpu,comm 2>/dev/null | grep -v '^#' | grep -v '^$' | head -8; }
taskset -c 0 ib_read_lat -d siw0 -R -F -p 20701 -n 3000 -s 64 >/dev/null 2>&1 & sleep 1
echo "perftest $(rec pt taskset -c 1 ib_read_lat -d siw0 -R -F -p 20701 -n 3000 -s 64 $A 2>/dev/null | pt_summary)"; wait
share pt
taskset -c 0 $B server --bind 127.0.0.1 --port 20702 --once -d siw0 >/dev/null 2>&1 & sleep 1
rec rs taskset -c 1 $B client 127.0.0.1 --port 20702 -d siw0 --no-progress --op read --mode lat -q 1 -n 3000 -s 64 \
  --warmup 0 --clock tsc --poll-batch 16 --out /tmp/r.json >/dev/null 2>&1; wait
echo "rdmasweep $(summary)"
share rs
