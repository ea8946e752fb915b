#!/usr/bin/env python3
"""Host a of the two-host tests: runs `rdmasweep server` and carries out host b's
requests (tests/lab/labhost.py's Agent): the server restarted or killed, a shell command
(netem, the link, its NIC's counts, its state), or a fault armed for the moment the
server reports a point's traffic. Stopped by tools/rxe-lab when b's tests end."""
import json
import os
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lab"))
from labhost import sh, tail  # noqa: E402

SHARE = os.environ["RDMASWEEP_TWOHOST_DIR"]
BIN = os.environ["RDMASWEEP_BIN"]
# The server's --progress-file, on this VM's own /tmp: a "traffic NAME" line as each
# point's traffic starts, which an armed fault waits for. Its output goes to
# /tmp/server.log, whose last lines a failure shows.
# (RDMASWEEP_AGENT_TMP: another directory than this VM's /tmp, for the tools tests.)
TMP = os.environ.get("RDMASWEEP_AGENT_TMP", "/tmp")
PROGRESS, LOG = os.path.join(TMP, "server.progress"), os.path.join(TMP, "server.log")


class Server:
    def __init__(self):
        self.proc = None

    def start(self, args):
        with open(LOG, "a") as log:
            self.proc = subprocess.Popen([BIN, "server", "--progress-file", PROGRESS, *args],
                                         stdout=log, stderr=subprocess.STDOUT)

    def stop(self):
        if self.proc:
            self.proc.kill()
            self.proc.wait()
            self.proc = None


def traffic_lines():
    try:
        with open(PROGRESS) as f:
            return [line.rstrip("\n") for line in f if line.startswith("traffic ")]
    except OSError:
        return []


class Trigger:
    """`arm N ACTION`: ACTION is done the moment the server reports the traffic of the Nth
    point from now (its N-th "traffic" line from here on), so the fault lands inside that
    point however fast or slow the machine is. `fired`, once the client has ended (no
    line can come after), waits for the armed fault to finish: 0, or 1 when it never fired."""

    def __init__(self, do):
        self.do, self.thread, self.stop = do, None, threading.Event()

    def arm(self, n, action):
        self.at, self.stop = len(traffic_lines()) + n, threading.Event()
        self.thread = threading.Thread(target=self._watch, args=(action,))
        self.thread.start()
        return 0, ""

    def _watch(self, action):
        while not self.stop.is_set():
            lines = traffic_lines()
            if len(lines) >= self.at:
                print(f"agent a: {action} at the server's traffic line {self.at}: {lines[self.at - 1]}", flush=True)
                self.do(action)
                return
            time.sleep(0.02)

    def fired(self):
        if not self.thread:
            return 1, ""
        went = len(traffic_lines()) >= self.at
        if not went:
            self.stop.set()
        self.thread.join()
        self.thread = None
        return (0 if went else 1), ""


def main():
    sys.stdout.reconfigure(line_buffering=True)
    server = Server()

    def do(req):
        op, args = req["op"], req["args"]
        if op == "restart":
            server.stop()
            server.start(args)
            return 0, ""
        if op == "kill":
            server.stop()
            return 0, ""
        if op == "sh":
            return sh(args[0], timeout=600)
        if op == "arm":
            return trigger.arm(int(args[0]), args[1])
        if op == "fired":
            return trigger.fired()
        if op == "serverlog":
            return 0, tail(LOG, int(args[0]))
        return 2, f"agent a: no request '{op}'"

    trigger = Trigger(do)
    signal.signal(signal.SIGTERM, lambda *_: (server.stop(), os._exit(0)))
    sh("modprobe sch_netem")
    open(PROGRESS, "w").close()
    server.start([])
    open(os.path.join(SHARE, "ready.a"), "w").close()
    n = 1
    while True:
        req = os.path.join(SHARE, f"req.{n}")
        while not os.path.exists(req):
            time.sleep(0.1)
        with open(req) as f:
            r = json.load(f)
        print(f"agent a: {r['op']} {' '.join(map(str, r['args']))}"[:200], flush=True)
        status, out = do(r)
        tmp = os.path.join(SHARE, "ack.tmp")
        with open(tmp, "w") as f:
            json.dump({"status": status, "output": out}, f)
        os.rename(tmp, os.path.join(SHARE, f"ack.{n}"))
        n += 1


if __name__ == "__main__":
    main()
