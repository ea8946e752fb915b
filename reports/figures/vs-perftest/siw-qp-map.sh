# Which of each tool's QPs siw places where, and which ones are connected: siw's transmit CPU for
# every QP made (in order) and every state change asked of a QP (siw_verbs_modify_qp; QP ids count up
# from 1 in the order QPs are made), for one 64 B READ-latency run of each tool, clients on CPU 1.
# Its verbs-level state changes miss what the iWARP connection manager does: a QP that only
# reaches INIT here may be connected; siw-qp-pairs.sh shows which QPs are.
source reports/figures/vs-perftest/siw-txcpus.sh
echo 'module siw func siw_verbs_modify_qp +p' > /sys/kernel/debug/dynamic_debug/control
dmesg -C
taskset -c 0 ib_read_lat -d siw0 -R -F -p 19501 -n 3000 -s 64 >/dev/null 2>&1 & sleep 1
taskset -c 1 ib_read_lat -d siw0 -R -F -p 19501 -n 3000 -s 64 $A 2>&1 | awk '$1==64{print "perftest p50",$5}'; wait
dmesg | grep -oE "tx cpu [0-9]+|QP\[[0-9]+\] siw_verbs_modify_qp: desired IB QP state: [A-Z_]+" | uniq
dmesg -C
taskset -c 0 $B server --bind 127.0.0.1 --port 19502 --once -d siw0 >/dev/null 2>&1 & sleep 1
taskset -c 1 $B client 127.0.0.1 --port 19502 -d siw0 --no-progress --op read --mode lat -q 1 -n 3000 --out /tmp/r.json -s 64 --warmup 0 --clock tsc -v 2>&1 | grep -i "qp" | head -5; wait
dmesg | grep -oE "tx cpu [0-9]+|QP\[[0-9]+\] siw_verbs_modify_qp: desired IB QP state: [A-Z_]+" | uniq
