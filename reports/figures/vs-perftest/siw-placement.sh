# The Soft-iWARP rows that differed from perftest in the ten-round table (64 B READ and
# WRITE latency, 64 KiB WRITE both ways), 10 interleaved rounds a tool, with both tools'
# clients on CPU 1 (vs-perftest's placement, the table's) and then on CPU 0.
# Run inside the lab: tools/rxe-lab --provider siw -- bash reports/figures/vs-perftest/siw-placement.sh
for cpus in 0,1 1,0; do
  echo "== servers on CPU ${cpus%,*}, clients on CPU ${cpus#*,}"
  tools/vs-perftest -d siw0 --table same --rounds 10 --timeout 60 --cpus "$cpus" \
    --only '^(read/lat|write/lat)/qps:1/size:64$|^write/bw/qps:1/size:65536/bidir$' \
    --json "reports/figures/vs-perftest/siw-placement-${cpus/,/-}.json"
done
