# Host b's hunt test (sourced by driver-b.sh, whose helpers it uses).
# rdmasweep hunt with a planted anomaly: both NICs drop 10% of the IP packets over
# 1000 bytes (tests/twohost/netem-loss.sh), so every message of an MTU (1024 B) or more
# suffers and smaller ones do not. The hunt must report an anomaly whose minimal
# trigger is 1024 B, with 512 B measured clean, and its command must show it again.
hunt_planted() {
  local out=$dir/hunt cmd
  ask bigloss 10% && "$here/netem-loss.sh" "$RXE_LAB_NETDEV" 10% big || { fail "hunt planted" "cannot plant the loss"; return; }
  timeout -k 5 400 "$bin" hunt "$a" --budget 240s --seed 1 --space "$here/hunt-space.json" --timeout 20 \
    --out "$out" >"$dir/hunt.log" 2>&1
  local rc=$?
  if ((rc)); then fail "hunt planted" "exit $rc: $(tail -n 2 "$dir/hunt.log" | tr '\n' ' ')"
  elif ! cmd=$(python3 "$here/check_hunt.py" "$out" --trigger-size 1024 --below 512 2>"$dir/hunt.check"); then
    fail "hunt planted" "$(tr '\n' ' ' <"$dir/hunt.check")"
  else
    read -ra c <<<"${cmd#rdmasweep }"
    if timeout -k 5 240 "$bin" "${c[@]}" --out "$dir/hunt-repro.json" >"$dir/hunt-repro.log" 2>&1 &&
       python3 "$here/check_hunt.py" --reproduced "$dir/hunt-repro.json" --size 1024; then
      ok "hunt planted: $(grep -m1 '^## Anomaly' "$out/anomalies.md") on $(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print([x["minimal"]["point"] for x in r["anomalies"] if x["minimal"]["config"]["size"] == 1024][0])' "$out/anomalies.json")"
    else fail "hunt planted" "the reproduce command did not show it: $(tail -n 2 "$dir/hunt-repro.log" | tr '\n' ' ')"; fi
  fi
  cat "$out/anomalies.md" 2>/dev/null | head -40
  # RDMASWEEP_HUNT_KEEP=DIR (a path in the shared checkout) keeps the report and runs.
  [[ -z ${RDMASWEEP_HUNT_KEEP:-} ]] || { mkdir -p "$RDMASWEEP_HUNT_KEEP" && cp "$out"/* "$RDMASWEEP_HUNT_KEEP"/; }
  tc qdisc del dev "$RXE_LAB_NETDEV" root 2>/dev/null
  ask clear
}
