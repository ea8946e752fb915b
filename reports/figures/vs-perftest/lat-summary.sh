# Sourced by the 64 B latency lab scripts here: each tool's min, p50 and p99 in µs on
# one line ("min X p50 Y p99 Z", what rounds-summary.py reads), from rdmasweep's
# results (/tmp/r.json) and from perftest's output on stdin; and rdmasweep's binary (B).
B=./build/bench/rdmasweep
summary() { /usr/bin/python3 -c "import json;b=json.load(open('/tmp/r.json'))['benchmarks'][0];print('min',round(b['lat_min_us'],2),'p50',round(b['lat_p50_us'],2),'p99',round(b['lat_p99_us'],2))"; }
pt_summary() { awk '$1==64{print "min",$3,"p50",$5,"p99",$8}'; }
