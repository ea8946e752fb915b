# UD between the two hosts (sourced by driver-b.sh, whose client, ok and fail it uses):
# exact counts on a clean link (every message within the receives posted), every
# message accounted for as received or lost when b's NIC drops 10% of its RoCE packets
# (only those: the control channel's TCP must not be what fails), and a latency
# point whose ping or pong is lost ending at --timeout with the line that says so.

# ud_counts FILE SENT: every point's sent is SENT, received + lost = sent; prints
# "lost L" for the last point, or why not.
ud_counts() {
  python3 - "$1" "$2" <<'PY'
import json, sys
try:
    bs = json.load(open(sys.argv[1]))["benchmarks"]
except Exception as e:
    sys.exit(f"unreadable results: {e}")
if not bs:
    sys.exit("no points")
for b in bs:
    if b.get("error_occurred"):
        sys.exit(f"{b['name']}: {b.get('error_message')}")
    s, r, l = (int(b[k]) for k in ("messages_sent", "messages_received", "messages_lost"))
    if s != int(sys.argv[2]) or r + l != s:
        sys.exit(f"{b['name']}: sent {s} (expected {sys.argv[2]}), received {r}, lost {l}")
print(f"lost {l}")
PY
}

ud_checks() {
  local out dev=$RXE_LAB_NETDEV
  # 420 messages a QP within 4096 receives: nothing can be outrun.
  client udclean --transport ud --mode bw,lat -s 1024 -n 400 --warmup 20 -r 4096 --timeout 20
  if ! out=$(ud_counts "$dir/udclean.json" 420); then fail "UD clean link" "$out"
  elif [[ $out != "lost 0" ]]; then fail "UD clean link" "$out on a clean link"
  else ok "UD clean link: bw and lat, 420 sent and received"; fi

  "$here/netem-loss.sh" "$dev" 10% roce || { fail "UD loss" "cannot set up netem on $dev"; return; }
  client udloss --transport ud -s 1024 -n 480 --warmup 20 -r 4096 --timeout 20
  local rc=$?
  client udlosslat --transport ud --mode lat -s 64 -n 400 --warmup 20 --timeout 3
  local lrc=$?
  tc qdisc del dev "$dev" root 2>/dev/null
  if ((rc != 0)); then fail "UD loss" "client exit $rc: $(tail -n 2 "$dir/udloss.log" | tr '\n' ' ')"
  elif ! out=$(ud_counts "$dir/udloss.json" 500); then fail "UD loss" "$out"
  elif [[ $out == "lost 0" ]]; then fail "UD loss" "nothing lost with 10% of b's packets dropped"
  else ok "UD loss: 500 sent, $out, the rest received"; fi
  if ((lrc == 0)); then fail "UD lost ping" "400 pings with 10% dropped all came back"
  elif ! grep -q "a UD ping or its pong was lost" "$dir/udlosslat.log"; then
    fail "UD lost ping" "exit $lrc: $(tail -n 2 "$dir/udlosslat.log" | tr '\n' ' ')"
  else ok "UD lost ping: the point ended at --timeout saying so"; fi
}
