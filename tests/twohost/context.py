"""The two-host tests' lab as host b's driver sees it: host a (through its agent) and
this host, the client run against a, the results checked, a fault made during a point.
tools/two-host-test sets the environment; tools/rxe-lab adds RXE_LAB_*."""
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lab"))
from labhost import Agent, Host, Local, Verdicts, check_file, run_logged, tail  # noqa: E402

CLIENT_LIMIT = 240  # s: a hang fails its test instead of the whole job


class TwoHost:
    def __init__(self):
        self.dir = os.environ["RDMASWEEP_TWOHOST_DIR"]
        self.bin = os.environ["RDMASWEEP_BIN"]
        # siw (tools/two-host-test --provider siw): the same tests, but those that need
        # what iWARP lacks are skipped and say why.
        self.provider = os.environ.get("RDMASWEEP_TWOHOST_PROVIDER", "rxe")
        self.iwarp = self.provider == "siw"
        self.v = Verdicts(self.show_lab)
        self.agent = Agent(self.dir, self.v)
        # Host a's NIC by the name a's own environment gives it.
        self.a = Host("rxe-a", os.environ["RXE_LAB_PEER"], "$RXE_LAB_NETDEV", self.agent)
        self.b = Host("rxe-b", os.environ["RXE_LAB_ADDR"], os.environ["RXE_LAB_NETDEV"], Local())
        self.last_client, self.last_took = "", 0

    def path(self, name):
        return os.path.join(self.dir, name)

    def log(self, name):
        """A client's output, NAME.log."""
        return tail(self.path(f"{name}.log"), 10_000)

    def first_error(self, name, width=160):
        for line in self.log(name).splitlines():
            low = line.lower()
            if any(w in low for w in ("error", "fail")):
                return line[:width]
        return ""

    def ask(self, op, *args):
        """OP on host a; its status (None when a never answered)."""
        return self.agent.ask(op, *args)[0]

    def client(self, name, *args):
        """`rdmasweep client a` into NAME.json, its output in NAME.log; its exit status."""
        t0 = time.monotonic()
        rc = run_logged([self.bin, "client", self.a.addr, "--out", self.path(f"{name}.json"), *args],
                        self.path(f"{name}.log"), CLIENT_LIMIT)
        self.last_client, self.last_took = name, int(time.monotonic() - t0)
        return rc

    def check(self, name, *args):
        """(holds, output) of check.py on NAME.json (or a path)."""
        return check_file(os.path.join(HERE, "check.py"), name if os.path.sep in name else self.path(f"{name}.json"),
                          *args)

    def context(self, name):
        with open(self.path(f"{name}.json")) as f:
            return json.load(f)["context"]

    def during(self, name, action, *args):
        """Host a arms ACTION (a request) for the moment the server reports the traffic of
        the client's second point, then the client runs (its progress in NAME.progress).
        (exit status, fired, took): fired when the fault went, took the seconds from the
        second point's traffic (as the client reports it) to the client's end. No poll from
        outside picks the moment: the server's own line does, on the host making the fault."""
        if self.agent.ask("arm", 2, action)[0] != 0:
            return 200, False, 0
        progress = self.path(f"{name}.progress")
        rc = self.client(name, "--progress-file", progress, *args)
        end = time.monotonic()  # the progress file's clock
        t2 = end
        with open(progress) as f:
            traffic = [line.split() for line in f if line.startswith("traffic ")]
        if len(traffic) >= 2:
            t2 = float(traffic[1][-1].removeprefix("t="))
        return rc, self.agent.ask("fired")[0] == 0, int(end - t2)

    def skip(self, name, why):
        self.v.skip(name, self.provider, why)

    def show_lab(self):
        """After the first failure, once: the failing test's client (how long it ran against
        its limit, its log's last lines) and both hosts' view (tests/lab-state.sh; a's also
        the server's last lines), to tell a flake from a fault."""
        if self.last_client:
            print(f"lab-state: client {self.last_client} ran {self.last_took} s (limit {CLIENT_LIMIT} s); its last lines:")
            for line in tail(self.path(f"{self.last_client}.log"), 4).splitlines():
                print(f"lab-state:   {line}")
        print(self.b.state(self.a.addr), end="")
        print(self.a.state(self.b.addr, extra="tail -n 6 /tmp/server.log | sed 's/^/server: /'"), end="", flush=True)
