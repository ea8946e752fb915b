# UD between the two hosts (sourced by driver-b.sh, whose client, ok and fail it uses):
# exact counts on a clean link (every message within the receives posted; a busy host's
# emulated link drops frames, which the two NICs' counts show, and only those may go), every
# message accounted for as received or lost when b's NIC drops 10% of its RoCE packets
# (only those: the control channel's TCP must not be what fails), and a latency
# point whose ping or pong is lost ending at --timeout with the line that says so.

# ud_counts FILE SENT [DROPPED]: every point's sent is SENT, received + lost = sent;
# prints "lost L", every point's losses summed, or why not (on stdout either way).
# DROPPED: frames the link itself dropped meanwhile, which may take messages and a
# latency ping with them (a point that ended on its lost ping counts one).
ud_counts() {
  python3 - "$1" "$2" "${3:-0}" <<'PY' 2>&1
import json, sys
try:
    bs = json.load(open(sys.argv[1]))["benchmarks"]
except Exception as e:
    sys.exit(f"unreadable results: {e}")
if not bs:
    sys.exit("no points")
dropped, lost = int(sys.argv[3]), 0
for b in bs:
    if b.get("error_occurred") and not (dropped and "a UD ping or its pong was lost" in b.get("error_message", "")):
        sys.exit(f"{b['name']}: {b.get('error_message')}")
    if b.get("error_occurred"):
        lost += 1
        continue
    s, r, l = (int(b[k]) for k in ("messages_sent", "messages_received", "messages_lost"))
    if s != int(sys.argv[2]) or r + l != s:
        sys.exit(f"{b['name']}: sent {s} (expected {sys.argv[2]}), received {r}, lost {l}")
    lost += l
print(f"lost {lost}")
PY
}

# link_frames: $frames becomes "a_rx a_tx b_rx b_tx", the two NICs' frame counts now
# (set, not printed: ask counts its requests, which a subshell would lose).
frames=""
link_frames() {
  local s=/sys/class/net/$RXE_LAB_NETDEV/statistics
  ask netcount || return 1
  frames="$(cat "$dir/netcount.$req") $(cat "$s/rx_packets") $(cat "$s/tx_packets")"
}
# link_dropped BEFORE AFTER: "N b->a X a->b Y": frames one host sent that the other never
# received (N both ways). The emulated link (qemu's UDP sockets on the host's loopback)
# drops some when the host is busy (981 of 11800 of a WRITE run's once); no guest sees
# them go, the two NICs' counts do (read a moment apart: about one frame of skew).
link_dropped() {
  local b0 a1 ba ab
  read -ra b0 <<<"$1"
  read -ra a1 <<<"$2"
  ba=$(((a1[3] - b0[3]) - (a1[0] - b0[0]))) ab=$(((a1[1] - b0[1]) - (a1[2] - b0[2])))
  ((ba > 0)) || ba=0  # the skew, the other way
  ((ab > 0)) || ab=0
  echo "$((ba + ab)) b->a $ba a->b $ab"
}

ud_checks() {
  local out dev=$RXE_LAB_NETDEV f0 f1 dropped link
  # 420 messages a QP within 4096 receives: nothing can be outrun. A message is lost
  # only where the link dropped frames (a busy host's emulated link does): at most one
  # each, and a latency point may then end on a lost ping.
  link_frames && f0=$frames
  client udclean --transport ud --mode bw,lat -s 1024 -n 400 --warmup 20 -r 4096 --timeout 20
  link_frames && f1=$frames
  link=$(link_dropped "$f0" "$f1")
  dropped=${link%% *}
  if ! out=$(ud_counts "$dir/udclean.json" 420 "$dropped"); then fail "UD clean link" "$out"
  elif ((dropped == 0)) && [[ $out != "lost 0" ]]; then fail "UD clean link" "$out on a clean link (no frame dropped)"
  elif ((dropped > 0)) && ((${out#lost } > dropped)); then fail "UD clean link" "$out, more than the $dropped frames the link dropped"
  elif ((dropped > 0)); then ok "UD clean link: bw and lat, 420 sent, $out, the link itself dropped frames (${link#* }: a busy host)"
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
