# client side: each op's flat-out twin, then paced at 90 % of it; N messages a run (default 20000), REPS repetitions (default 3)
$PIN build/bench/rdmasweep client $RXE_LAB_PEER --op write,send,read --mode bw -s 64 -n ${N:-20000} -Q 1 --rate 90% --repetitions ${REPS:-3} --no-progress --out /tmp/p.json >/dev/null 2>&1
/usr/bin/python3 - <<'P'
import json
for b in json.load(open('/tmp/p.json'))['benchmarks']:
    if b.get('run_type') != 'iteration': continue
    print("%-45s %9.0f msg/s  err %7s  late %6s  qp-full %6s" % (b['name'][:45], b['items_per_second'], '%+.2f%%' % b['pacing_error_pct'] if 'pacing_error_pct' in b else '-', int(b.get('late_posts', -1)), int(b.get('late_posts_queue_full', -1))))
P
