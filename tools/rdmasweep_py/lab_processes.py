"""The lab tools' processes (tools/combos, tools/mixed-test): an `rdmasweep server`
on a free port of 127.0.0.1, a client run that cannot hang, and a results file read
leniently. Stdlib only."""

import json
import os
import subprocess
import sys
import time


def on_cpus(cpus):
    """A Popen preexec_fn that keeps the child on `cpus` (None when none are given)."""
    return (lambda: os.sched_setaffinity(0, cpus)) if cpus else None


class Server:
    """`rdmasweep server` on a free port of 127.0.0.1, its stderr drained to `log`;
    `env` adds to the environment (e.g. the verbs stand-in's LD_PRELOAD); `cpus`, when
    given, are the only CPUs it may run on."""

    def __init__(self, binary, extra, log, prog, env=None, cpus=None):
        self.log, self.prog = log, prog
        self.f = open(log, "w")
        self.p = subprocess.Popen([binary, "server", "--port", "0", "--bind", "127.0.0.1", *extra],
                                  stdout=subprocess.DEVNULL, stderr=self.f, env={**os.environ, **(env or {})},
                                  preexec_fn=on_cpus(cpus))
        self.port = None
        # The server says its port on stderr once it listens: wait for that line.
        deadline = time.time() + 60
        while time.time() < deadline and self.p.poll() is None and not self.port:
            with open(log) as f:
                for line in f:
                    if "listening on" in line:
                        self.port = line.split("listening on", 1)[1].split(",")[0].rsplit(":", 1)[1].strip()
            time.sleep(0.1)
        if not self.port:
            self.stop()
            print(f"{prog}: server {' '.join(extra)} did not start: {self.tail()}", file=sys.stderr)
            sys.exit(1)

    def alive(self):
        return self.p.poll() is None

    def tail(self):
        with open(self.log) as f:
            lines = f.read().strip().split("\n")
        return lines[-1] if lines else ""

    def stop(self):
        if self.p.poll() is None:
            self.p.terminate()
            try:
                self.p.wait(10)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self.f.close()


def run_client(cmd, hard, env=None):
    """(exit code or None when killed as hung after `hard` seconds, stderr, seconds)."""
    t0 = time.time()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                         env={**os.environ, **(env or {})})
    try:
        _, err = p.communicate(timeout=hard)
        return p.returncode, err, time.time() - t0
    except subprocess.TimeoutExpired:
        p.kill()
        _, err = p.communicate()
        return None, err, time.time() - t0


def load(path):
    """A JSON file's contents, or None when it is missing or not JSON."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None
