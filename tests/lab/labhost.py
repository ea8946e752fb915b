"""What a lab test driver needs of the lab's hosts (tools/rxe-lab), stdlib only.

A `Host` is one lab VM as a test sees it: run a command there (and wait for one to
succeed), make a fault on its NIC, read its NIC's frame counts, print its state. It reaches the host through a `Via`:
`Local` (the host the driver runs on), `Ssh` (a cluster host, sshd in each VM) or
`Agent` (two-host host a, which has no sshd: requests as files in the checkout both VMs
share, carried out by tests/twohost/agent_a.py). `Verdicts` is the test record: each
test prints "ok NAME[: details]", "FAIL NAME: why" or "skip NAME on PROVIDER: why"
(tools/test --repeat counts by NAME), and the first failure shows the lab once.
"""
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
LAB_STATE = os.path.join(HERE, "..", "lab-state.sh")
NETEM_ON = os.path.join(HERE, "..", "twohost", "netem-loss.sh")


def wait_for(secs, ready, every=0.1):
    """A bounded wait for a condition, polled: never a fixed sleep standing in for one."""
    end = time.monotonic() + secs
    while not ready():
        if time.monotonic() >= end:
            return False
        time.sleep(every)
    return True


def sh(cmd, timeout=None):
    """(status, output) of a shell command line here; output is stdout and stderr."""
    try:
        p = subprocess.run(["bash", "-c", cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=timeout)
        return p.returncode, p.stdout
    except subprocess.TimeoutExpired as e:
        return 124, e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")


def run_logged(argv, log, limit, env=None):
    """ARGV's exit status, its output in the file LOG, bounded by `timeout` so that a hang
    fails its test instead of the whole job (124 or 137 then)."""
    with open(log, "w") as f:
        return subprocess.run(["timeout", "-k", "5", str(limit), *map(str, argv)], stdout=f,
                              stderr=subprocess.STDOUT, env=env).returncode


def check_file(script, path, *args):
    """(holds, output) of a results checker (check.py) on PATH."""
    p = subprocess.run([sys.executable, script, path, *map(str, args)], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    return p.returncode == 0, p.stdout.strip()


def tail(path, n):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError as e:
        return f"({e.strerror}: {path})"


def one_line(text, n=2):
    """The last N lines of TEXT on one line: what a FAIL line quotes."""
    return " ".join(text.strip().splitlines()[-n:])


class Local:
    def sh(self, cmd, timeout=60):
        return sh(cmd, timeout)


class Ssh:
    def __init__(self, name):
        self.name = name

    def sh(self, cmd, timeout=60):
        return sh(f"ssh -n {self.name} {quote(cmd)}", timeout)


class Agent:
    """Host a of the two-host tests: a request is a file DIR/req.N (JSON), written whole
    by a rename; a's answer is DIR/ack.N, its status and output. A file of its own each
    time: the shared checkout's cache on the other VM keeps a rewritten one stale."""

    def __init__(self, share, verdicts):
        self.share, self.verdicts, self.n = share, verdicts, 0

    def ask(self, op, *args, timeout=60):
        """(status, output) of OP on host a, once it is done; (None, why) when a never answers."""
        self.n += 1
        tmp, req = os.path.join(self.share, "req.tmp"), os.path.join(self.share, f"req.{self.n}")
        with open(tmp, "w") as f:
            json.dump({"op": op, "args": list(args)}, f)
        os.rename(tmp, req)
        ack = os.path.join(self.share, f"ack.{self.n}")
        if not wait_for(timeout, lambda: os.path.exists(ack)):
            self.verdicts.fail(f"request {op} {' '.join(map(str, args))}", f"host a did not answer within {timeout} s")
            return None, "no answer"
        with open(ack) as f:
            answer = json.load(f)
        return answer["status"], answer["output"]

    def sh(self, cmd, timeout=60):
        status, out = self.ask("sh", cmd, timeout=timeout + 5)
        return (125 if status is None else status), out


def quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


class Host:
    def __init__(self, name, addr, netdev, via):
        self.name, self.addr, self.netdev, self.via = name, addr, netdev, via

    def run(self, cmd, timeout=60):
        """(status, output) of a shell command line on this host."""
        return self.via.sh(cmd, timeout)

    def wait_for(self, secs, cmd):
        """True once CMD succeeds on this host, polled for at most SECS."""
        return wait_for(secs, lambda: self.run(cmd)[0] == 0)

    def netem(self, args):
        """netem ARGS on all that leaves this host's NIC."""
        return self.run(f"tc qdisc replace dev {self.netdev} root netem {args}")[0] == 0

    def netem_on(self, which, args):
        """netem ARGS (or a loss percentage) on one kind of packet only (netem-loss.sh)."""
        return self.run(f"{NETEM_ON} {self.netdev} {quote(args)} {which}")[0] == 0

    def mtu(self, n):
        return self.run(f"ip link set {self.netdev} mtu {n}")[0] == 0

    def clear(self):
        """No qdisc, the MTU back to 1500: the NIC as the lab made it."""
        return self.run(f"tc qdisc del dev {self.netdev} root 2>/dev/null; ip link set {self.netdev} mtu 1500")[0] == 0

    def flap_cmd(self, secs):
        return f"ip link set {self.netdev} down; sleep {secs}; ip link set {self.netdev} up"

    def blackhole_cmd(self, secs):
        return f"tc qdisc replace dev {self.netdev} root netem loss 100%; sleep {secs}; tc qdisc del dev {self.netdev} root"

    def frames(self):
        """(received, sent): the NIC's frame counts now, or None."""
        s = f"/sys/class/net/{self.netdev}/statistics"
        rc, out = self.run(f"cat {s}/rx_packets {s}/tx_packets")
        return tuple(int(x) for x in out.split()) if rc == 0 and len(out.split()) == 2 else None

    def state(self, peer="", extra=""):
        """This host's view for a failure (tests/lab-state.sh), EXTRA a command whose lines join it."""
        cmd = f"{LAB_STATE} {self.netdev} {peer}"
        if extra:
            cmd += f"; {extra} | sed \"s/^/lab-state $(hostname): /\""
        return self.run(cmd, timeout=60)[1]


class Verdicts:
    """The tests' verdicts. `show_lab` prints the lab's state after the first failure, once."""

    def __init__(self, show_lab=None):
        self.fails, self.show_lab, self.shown = 0, show_lab, False

    def ok(self, name):
        print(f"ok {name}", flush=True)
        return True

    def skip(self, name, provider, why):
        print(f"skip {name} on {provider}: {why}", flush=True)

    def fail(self, name, why):
        print(f"FAIL {name}: {why}", flush=True)
        self.fails += 1
        if self.show_lab and not self.shown:
            self.shown = True
            self.show_lab()
        return False
