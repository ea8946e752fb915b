cd "$(dirname "$0")/../../.."  # the checkout
one() { # bin args...
  local b=$1; shift
  taskset -c 0 $b server --bind 127.0.0.1 --port 18800 --once -d siw0 >/dev/null 2>&1 &
  sleep 0.5
  taskset -c 1 $b client 127.0.0.1 --port 18800 -d siw0 --no-progress --op send --mode bw --warmup 0 --out build/tmp/ab.json "$@" >/dev/null 2>build/tmp/ab.err || { echo "FAIL"; tail -2 build/tmp/ab.err; }
  wait
  python3 -c "import json;b=json.load(open('build/tmp/ab.json'))['benchmarks'][0];print(b['name'], round(b['bytes_per_second']*8/1e9,4), b.get('send_credit','-'))"
}
for r in $(seq 10); do
  for b in rs-B rs-C; do
    echo -n "$b "; one build/tmp/$b -q 4 -s 4096 -n 5000
    echo -n "$b "; one build/tmp/$b -q 1 -s 64 -n 20000
  done
done
