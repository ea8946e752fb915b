# The lab VM's clock source and what a clock read and a system call cost there, three times.
# gcc -O2 -o build/lab-call-costs reports/figures/vs-perftest/lab-call-costs.c
# tools/rxe-lab -- bash reports/figures/vs-perftest/lab-call-costs.sh
cat /sys/devices/system/clocksource/clocksource0/current_clocksource
for i in 1 2 3; do ./build/lab-call-costs; done
