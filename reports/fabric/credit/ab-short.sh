cd "$(dirname "$0")/../../.."  # the checkout
one() { # bin
  local b=$1
  taskset -c 0 build/tmp/$b server --bind 127.0.0.1 --port 18800 --once -d siw0 >/dev/null 2>&1 &
  sleep 0.5
  taskset -c 1 build/tmp/$b client 127.0.0.1 --port 18800 -d siw0 --no-progress --op send --mode bw -q 1,4 -s 64,4096 -n 200 --warmup 20 --out build/tmp/ab2.json >/dev/null 2>build/tmp/ab2.err || { echo "FAIL"; tail -2 build/tmp/ab2.err; }
  wait
  python3 -c "
import json
for b in json.load(open('build/tmp/ab2.json'))['benchmarks']: print('$b', b['name'], round(b['bytes_per_second']*8/1e9,4), round(b['seconds'],4))"
}
for r in $(seq 5); do one rs-B; one rs-C; done
