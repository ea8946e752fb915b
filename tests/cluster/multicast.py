"""The cluster test of multicast without MPI: `rdmasweep server --join GROUP` on b and c,
`rdmasweep client rxe-b,rxe-c --multicast GROUP` on a; each receiver's clock offset
from a's is estimated over the control channel, so one-way latency is measured across
hosts."""
import subprocess

GROUP = "239.255.82.21"


def mcast_client(c):
    name, receivers = "client --multicast to rxe-b and rxe-c", [c.hosts["rxe-b"], c.hosts["rxe-c"]]
    for h in receivers:
        h.run(f"setsid {c.bin} server --join {GROUP} >/tmp/join.log 2>&1 </dev/null &")
    try:
        for h in receivers:
            if not h.wait_for(60, "grep -q listening /tmp/join.log"):
                return c.v.fail(name, f"the server on {h.name} did not start: {h.run('cat /tmp/join.log')[1]}")
        rc = c.run("mcast-client", [c.bin, "client", "rxe-b,rxe-c", "--multicast", GROUP, "--mode", "bw,lat",
                                    "-s", "64,1024", "-n", "50", "--warmup", "5", "--out", c.path("mcast-client.json")])
        wrong = subprocess.run(["timeout", "-k", "5", "60", c.bin, "client", "rxe-b", "--multicast", "239.255.82.22",
                                "-n", "5", "--out", c.path("wrong.json")], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True).stdout.strip()
    finally:
        for h in receivers:
            h.run("pkill -f 'server --join'")
    if rc:
        return c.v.fail(name, f"exit {rc}: {' '.join(c.log('mcast-client').splitlines()[-2:])}")
    held, out = c.check("mcast-client", "--mcast-client", "--hosts", "rxe-a,rxe-b,rxe-c", "--iters", 50)
    if not held:
        return c.v.fail(name, " ".join(out.splitlines()[:5]))
    if f"receives multicast group {GROUP}, not 239.255.82.22" not in wrong or len(wrong.splitlines()) != 1:
        return c.v.fail(name, f"a client of another group was not refused in one line: {wrong}")
    offsets = [line.removeprefix("rdmasweep: ").strip() for line in c.log("mcast-client").splitlines()
               if "clock offset" in line][:2]
    return c.v.ok(f"{name}: every datagram counted on both, one-way latency against estimated offsets; "
                  f"{' '.join(offsets)}")
