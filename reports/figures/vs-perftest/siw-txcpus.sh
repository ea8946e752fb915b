# Sourced by the siw READ-latency scripts here: rdmasweep's binary (B), siw0's address
# (A), and txcpus, which prints siw's transmit CPU for each QP made since it last ran
# (siw_get_tx_cpu's debug messages), in the order they were made.
B=./build/bench/rdmasweep
A=$(ip -4 -o addr show dev dummy0 | awk '{print $4}' | cut -d/ -f1)
mount -t debugfs none /sys/kernel/debug 2>/dev/null
echo 'module siw func siw_get_tx_cpu +p' > /sys/kernel/debug/dynamic_debug/control 2>/dev/null || echo "no dynamic debug: tx CPUs not shown"
txcpus() { dmesg | grep -o 'tx cpu [0-9-]*' | awk '{printf "%s ", $3}'; dmesg -C; }
dmesg -C
