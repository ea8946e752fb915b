#!/usr/bin/env python3
"""Host a of the cluster tests (tools/cluster-test): `rdmasweep mesh` started by mpirun
over ssh on three lab hosts (a, b, c; each its own kernel, rxe0 and address on one
emulated segment), as on a real cluster. Each test prints "ok NAME" or "FAIL NAME: why";
the exit status is 1 when any failed."""
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lab"))
from labhost import Host, Local, Ssh, Verdicts, check_file, run_logged, tail  # noqa: E402

from multicast import mcast_client  # noqa: E402

HOSTS = "rxe-a,rxe-b,rxe-c"
RUN_LIMIT = 300  # s
# mpirun over ssh, MPI kept on TCP (the management network: here the same segment), one
# rank per host in turn (--map-by node).
MPIRUN = ["mpirun", "--allow-run-as-root", "--map-by", "node", "--mca", "pml", "ob1", "--mca", "btl", "self,vader,tcp",
          "--mca", "btl_tcp_if_include", "192.0.2.0/24", "--mca", "oob_tcp_if_include", "192.0.2.0/24"]
# The same settings from the environment, for `rdmasweep mesh --hosts`, which runs mpirun itself.
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "OMPI_MCA_pml": "ob1",
           "OMPI_MCA_btl": "self,vader,tcp", "OMPI_MCA_btl_tcp_if_include": "192.0.2.0/24",
           "OMPI_MCA_oob_tcp_if_include": "192.0.2.0/24"}


class Cluster:
    def __init__(self):
        self.dir, self.bin = os.environ["RDMASWEEP_CLUSTER_DIR"], os.environ["RDMASWEEP_BIN"]
        self.v = Verdicts(self.show_lab)
        self.hosts = {"rxe-a": Host("rxe-a", "192.0.2.1", os.environ.get("RXE_LAB_NETDEV", ""), Local())}
        for i, name in enumerate(("rxe-b", "rxe-c"), start=2):
            self.hosts[name] = Host(name, f"192.0.2.{i}", "", Ssh(name))
        self.took = 0

    def path(self, name):
        return os.path.join(self.dir, name)

    def show_lab(self):
        """After the first failure, once: each host's view (tests/lab-state.sh) and how long
        the failing run took, to tell a flake of the lab from a fault."""
        print(f"lab-state: the failing run took {self.took} s (limit {RUN_LIMIT} s)")
        for h in self.hosts.values():
            print(h.state(), end="", flush=True)

    def run(self, name, argv, env=None):
        """ARGV into NAME.log, bounded; its exit status."""
        t0 = time.monotonic()
        rc = run_logged(argv, self.path(f"{name}.log"), RUN_LIMIT, env)
        self.took = int(time.monotonic() - t0)
        return rc

    def mesh(self, name, hosts, np, *args):
        """mpirun over ssh; results in NAME.json."""
        return self.run(name, [*MPIRUN, "--host", hosts, "-np", str(np), self.bin, "mesh",
                               "--out", self.path(f"{name}.json"), *map(str, args)])

    def launch(self, name, hosts, *args):
        """The same run started by `rdmasweep mesh --hosts`, which asks each host over ssh."""
        return self.run(name, [self.bin, "mesh", "--hosts", hosts, "--out", self.path(f"{name}.json"),
                               *map(str, args)], env={**os.environ, **MPI_ENV})

    def check(self, name, *args):
        return check_file(os.path.join(HERE, "check.py"), self.path(f"{name}.json"), *args)

    def log(self, name):
        return tail(self.path(f"{name}.log"), 10_000)

    def expect(self, run, name, rc, *checks):
        """The run's exit and the check of its results."""
        if rc:
            said = [line for line in self.log(run).splitlines() if "rdmasweep" in line][:2]
            return self.v.fail(name, f"mpirun exit {rc}: {' '.join(said)}")
        held, out = self.check(run, *checks)
        return self.v.ok(name) if held else self.v.fail(name, " ".join(out.splitlines()[:5]))


def patterns(c):
    """Every pattern, one rank per host: exact counts, each rank on its host's device, each
    flow's port counters from the two hosts it touches; two ranks per host."""
    w = ("-s", 4096, "-n", 100, "--warmup", 10)
    c.expect("pairs", "pairs, matching schedule, write and send, 3 hosts",
             c.mesh("pairs", HOSTS, 3, "--pattern", "pairs", "--op", "write,send", *w),
             "--hosts", HOSTS, "--iters", 100, "--counters")
    c.expect("sequential", "pairs, sequential schedule, read, bw and lat, 3 hosts",
             c.mesh("sequential", HOSTS, 3, "--pattern", "pairs", "--schedule", "sequential", "--op", "read",
                    "--mode", "bw,lat", *w),
             "--hosts", HOSTS, "--iters", 100, "--counters")
    c.expect("incast", "incast, write and send, 3 hosts",
             c.mesh("incast", HOSTS, 3, "--pattern", "incast", "--op", "write,send", "-q", 2, *w),
             "--pattern", "incast", "--hosts", HOSTS, "--iters", 100, "--counters")
    c.expect("all-to-all", "all-to-all, write and send, 3 hosts, started by mesh --hosts",
             c.launch("all-to-all", HOSTS, "--pattern", "all-to-all", "--op", "write,send", "-q", 2, *w),
             "--pattern", "all-to-all", "--hosts", HOSTS, "--iters", 100, "--counters")
    c.expect("multicast", "multicast from rxe-a to rxe-b and rxe-c",
             c.mesh("multicast", HOSTS, 3, "--pattern", "multicast", "--mode", "bw,lat", "-s", "64,1024", "-n", 50,
                    "--warmup", 5),
             "--pattern", "multicast", "--hosts", HOSTS, "--iters", 55)
    c.expect("two-a-host", "pairs, two ranks per host (6 ranks)",
             c.mesh("two-a-host", "rxe-a:2,rxe-b:2,rxe-c:2", 6, "--pattern", "pairs", "--op", "write", "-s", 4096,
                    "-n", 50, "--warmup", 5),
             "--hosts", HOSTS, "--ranks", 6, "--iters", 50, "--counters")


def slow_link(c):
    """100 ms of netem delay on rxe-c's NIC: the flows through rxe-c, and only those, are
    the slow ones, found from the results alone. The delay is far above what a busy host
    gives an emulated round trip (a flow avoiding rxe-c once had a p50 of 20 ms, with
    10 ms of delay on rxe-c: that run failed); the QPs' ACK timeout (1 s) far above both,
    so no flow is retransmitted because of it."""
    name, rxe_c = "a slow link is found", c.hosts["rxe-c"]
    rc, out = rxe_c.run("ip -o -4 addr show to 192.0.2.3/32")
    rxe_c.netdev = out.split()[1] if rc == 0 and out.split() else ""
    if not rxe_c.netdev or not rxe_c.netem("delay 100ms"):
        return c.v.fail(name, "cannot add netem on rxe-c")
    rc = c.mesh("slow-link", HOSTS, 3, "--pattern", "pairs", "--op", "write", "--mode", "bw,lat", "-s", 4096,
                "-n", 30, "--warmup", 5, "--qp-timeout", 18)
    rxe_c.clear()
    if rc:
        return c.v.fail(name, f"mpirun exit {rc}")
    held, out = c.check("slow-link", "--hosts", HOSTS, "--iters", 30, "--slow", "rxe-c")
    if not held:
        return c.v.fail(name, " ".join(out.splitlines()))
    c.v.ok(f"{name} (netem 100 ms on rxe-c): every flow through rxe-c slower than every other")
    print("".join(f"   {line}\n" for line in out.splitlines()), end="")


def unreachable(c):
    """A host that is down at launch (192.0.2.4: no VM has it): `mesh --hosts` says so in
    one line, with ssh's reason, and starts nothing."""
    name, t0 = "a host down at launch is one line", time.monotonic()
    rc = c.launch("unreachable", "rxe-a,rxe-b,192.0.2.4", "--pattern", "pairs", "-n", 10)
    lines = [line for line in c.log("unreachable").splitlines() if line]
    if rc != 1:
        return c.v.fail(name, f"exit {rc} (1 expected): {' '.join(lines[:3])}")
    if len(lines) != 1 or not lines[0].startswith("rdmasweep mesh: cannot reach 192.0.2.4 over ssh: ssh: "):
        return c.v.fail(name, f"{len(lines)} line(s): {' '.join(lines[:3])}")
    if os.path.exists(c.path("unreachable.json")):
        return c.v.fail(name, "a results file was written: a rank ran")
    return c.v.ok(f"{name}: after {int(time.monotonic() - t0)} s: {lines[0][:110]}")


def stopped(c):
    """A rank on another host stopped mid-phase (SIGSTOP): named with its host and the
    flows it took down, the phase's other flows kept, the job ends non-zero. The stop is
    made on rxe-b the moment rank 1 reports a flow's traffic in a phase after the first
    (stop-on-traffic.sh, reading the ranks' --progress-file on that host)."""
    name, progress, rxe_b = "a stopped rank on rxe-b is named", "/tmp/mesh.progress", c.hosts["rxe-b"]
    rxe_b.run(f"rm -f {progress}; setsid {HERE}/stop-on-traffic.sh {progress} 1 >/dev/null 2>&1 </dev/null &")
    rc = c.mesh("stopped", HOSTS, 3, "--pattern", "pairs", "--op", "write", "-s", 4096, "-D", 3, "--warmup", 10,
                "--timeout", 3, "--progress-file", progress)
    pid = rxe_b.run(f"cat {progress}.stopped")[1].strip()
    rxe_b.run("pkill -f stop-on-traffic" + (f"; kill -KILL {pid}" if pid.isdigit() else ""))
    said = [line for line in c.log("stopped").splitlines() if "stopped answering" in line]
    if not pid.isdigit():
        return c.v.fail(name, f"rank 1 was never stopped: it reported no flow after the first phase (exit {rc})")
    if rc == 0:
        return c.v.fail(name, "the job exited 0")
    if rc == 124:
        return c.v.fail(name, f"the job hung (killed after {RUN_LIMIT} s)")
    if not any(re.search(r"rank 1 \(rxe-b\).*stopped answering", line) for line in said):
        lines = [line for line in c.log("stopped").splitlines() if "rdmasweep" in line][:3]
        return c.v.fail(name, f"no line naming rank 1 (rxe-b): {' '.join(lines)}")
    held, out = c.check("stopped", "--hosts", HOSTS, "--stopped", 1)
    if not held:
        return c.v.fail(name, " ".join(out.splitlines()))
    return c.v.ok(f"{name}: with its host; exit {rc}; {said[0][:160]}")


if __name__ == "__main__":
    sys.stdout.reconfigure(line_buffering=True)
    cluster = Cluster()
    for test in (patterns, slow_link, unreachable, stopped, mcast_client):
        test(cluster)
    print(f"cluster tests: {cluster.v.fails} failed")
    sys.exit(1 if cluster.v.fails else 0)
