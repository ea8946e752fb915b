# Which of each tool's QPs carry a 64 B READ-latency run on siw0, and which transmit CPU
# siw gave each (perftest's client prints the QP numbers it measures with): one long
# run of each tool (clients on CPU 1, servers on CPU 0), and while it runs,
# `rdma resource show cm_id` (each RDMA-CM id's state, QP number and process: the
# connected QPs) and `rdma resource show qp` (every QP and its process); siw numbers
# its QPs from 1 in the order they are made, and txcpus prints each one's transmit CPU
# in that order.
# Run inside the lab: tools/rxe-lab --provider siw -- bash reports/figures/vs-perftest/siw-qp-pairs.sh
source "$(dirname "$0")/siw-txcpus.sh"
# Waits (up to 60 s) until PROCESS has two connected RDMA-CM ids (its client's and its
# server's), then shows the CM ids and QPs.
show_when_running() {
  for _ in $(seq 600); do
    (($(rdma resource show cm_id 2>/dev/null | grep "state CONNECT" | grep -c "comm $1") >= 2)) && break
    sleep 0.1
  done
  rdma resource show cm_id | grep -v LISTEN
  rdma resource show qp
}
echo "== perftest (ib_read_lat -R)"
taskset -c 0 timeout 120 ib_read_lat -d siw0 -R -F -p 19601 -n 200000 -s 64 >/dev/null 2>&1 &
sleep 1
taskset -c 1 timeout 120 ib_read_lat -d siw0 -R -F -p 19601 -n 200000 -s 64 $A >/tmp/pt.out 2>&1 &
show_when_running ib_read_lat
echo "tx cpus (QP order): $(txcpus)"
wait
echo "perftest client's own lines on the QPs it measures with:"
grep -E "address:" /tmp/pt.out
echo "== rdmasweep"
taskset -c 0 timeout 120 $B server --bind 127.0.0.1 --port 19602 --once -d siw0 >/dev/null 2>&1 &
sleep 1
taskset -c 1 timeout 120 $B client 127.0.0.1 --port 19602 -d siw0 --no-progress --op read --mode lat -q 1 \
  -n 200000 -s 64 --warmup 0 --clock tsc --poll-batch 16 --out /tmp/r.json >/dev/null 2>&1 &
show_when_running rdmasweep
echo "tx cpus (QP order): $(txcpus)"
wait
