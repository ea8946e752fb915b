"""Two-host tests of what goes on the wire: the RoCE traffic class, RDMA-CM across the
link (and with its messages late), UD's counts on a clean and a lossy link."""
import json

from labhost import one_line, run_logged


def tclass_packets(host):
    """Packets in band 1:1 of HOST's NIC: those whose IP ToS byte is 96."""
    rc, out = host.run(f"tc -s class show dev {host.netdev}")
    lines = out.splitlines()
    for i, line in enumerate(lines[:-1]):
        if line.startswith("class prio 1:1 "):
            return int(lines[i + 1].split()[3])
    return None


def tclass_on_wire(lab):
    """--tclass on the wire (run after the faults): b's NIC sorts packets whose IP ToS
    byte is 96 into a band of their own; a WRITE run with --tclass 96 must fill it, one
    without must not."""
    v, name, b = lab.v, "tclass on the wire", lab.b
    if lab.iwarp:
        return lab.skip(name, "--tclass is the RoCE GRH's traffic class; an iWARP connection is TCP's")
    b.run("modprobe -a sch_prio cls_u32")
    rc, _ = b.run(f"tc qdisc replace dev {b.netdev} root handle 1: prio && tc filter replace dev {b.netdev} "
                  "parent 1: protocol ip prio 1 u32 match ip tos 0x60 0xff flowid 1:1")
    if rc:
        return v.fail(name, "cannot set up the tc filter")
    run = ("--op", "write", "--mode", "bw", "-s", 4096, "-n", 200, "--warmup", 5, "--timeout", 20)
    before = tclass_packets(b)
    lab.client("tclass0", *run)
    plain = tclass_packets(b)
    lab.client("tclass96", *run, "--tclass", 96)
    after = tclass_packets(b)
    b.clear()
    if None in (before, plain, after):
        return v.fail(name, "no counts from tc")
    if plain != before:
        return v.fail(name, f"{plain - before} packets with ToS 96 without --tclass")
    if after - plain < 800:
        return v.fail(name, f"only {after - plain} packets with ToS 96 (800+ expected)")
    return v.ok(f"{name}: {after - plain} packets with ToS 96, none without --tclass")


def cm_across(lab):
    """--cm: every op, 1 and 4 QPs, two sizes on the same QPs, connected by RDMA-CM across
    the link (a's address resolved and routed from b), with exact counts."""
    v, name, a, b = lab.v, "--cm across the link", lab.a.addr, lab.b.addr
    if lab.iwarp:
        return lab.skip(name, "every iWARP run connects by RDMA-CM: the ops test checks the connection")
    rc = lab.client("cm", "--cm", "--op", "send,write,read", "--mode", "bw,lat", "--qps", "1,4", "--size", "64,4096",
                    "-n", 40, "--warmup", 4, "--timeout", 20)
    if rc:
        return v.fail(name, f"client exit {rc}: {one_line(lab.log('cm'))}")
    held, out = lab.check("cm", "--complete", "--iters", 40, "--client", f"rxe-b,{b}", "--server", f"rxe-a,{a}")
    if not held:
        return v.fail(name, out)
    c = lab.context("cm")["connection"]
    if (c["method"], c["address"], c["gid"]) != ("rdma_cm", a, "::ffff:" + b):
        return v.fail(name, f"the context's connection is not rdma_cm to {a} from ::ffff:{b}")
    return v.ok(f"{name} (24 points, exact counts)")


def cm_late_rtu(lab):
    """--cm with the client's CM messages to a (REQ, RTU) 300 ms late: the client's QPs are
    connected on its side, and its CONNECT on the control channel reaches the server,
    before the server's last ESTABLISHED: the server keeps it and goes on (it used to take
    any message there for the client giving up)."""
    v, name = lab.v, "--cm with late RTUs"
    if lab.iwarp:
        return lab.skip(name, "iWARP's connection is TCP's (the ops test connects it)")
    if not lab.b.netem_on("cm", "delay 300ms"):
        return v.fail(name, "cannot set up netem")
    rc = lab.client("cmlate", "--cm", "--op", "write,send", "--qps", 4, "--size", 64, "-n", 40, "--warmup", 4,
                    "--timeout", 20)
    lab.b.clear()
    if rc:
        return v.fail(name, f"client exit {rc}: {one_line(lab.log('cmlate'))}")
    held, out = lab.check("cmlate", "--complete", "--iters", 40)
    if not held:
        return v.fail(name, out)
    return v.ok(f"{name}: the client's CONNECT before the server's ESTABLISHED, kept (2 points, exact counts)")


def ud_counts(path, sent, dropped=0):
    """(lost, None): every point's sent is SENT, received + lost = sent, every point's
    losses summed; or (None, why). DROPPED: frames the link itself dropped meanwhile,
    which may take messages and a latency ping with them (a point that ended on its lost
    ping counts one)."""
    try:
        with open(path) as f:
            points = json.load(f)["benchmarks"]
    except (OSError, ValueError, KeyError) as e:
        return None, f"unreadable results: {e}"
    if not points:
        return None, "no points"
    lost = 0
    for p in points:
        if p.get("error_occurred"):
            if not (dropped and "a UD ping or its pong was lost" in p.get("error_message", "")):
                return None, f"{p['name']}: {p.get('error_message')}"
            lost += 1
            continue
        s, r, m = (int(p[k]) for k in ("messages_sent", "messages_received", "messages_lost"))
        if s != sent or r + m != s:
            return None, f"{p['name']}: sent {s} (expected {sent}), received {r}, lost {m}"
        lost += m
    return lost, None


def link_dropped(a0, b0, a1, b1):
    """(b->a, a->b): frames one host sent that the other never received between two reads
    of both NICs' (received, sent). The emulated link (qemu's UDP sockets on the host's
    loopback) drops some when the host is busy (981 of 11800 of a WRITE run's once); no
    guest sees them go, the two NICs' counts do (read a moment apart: about one frame of
    skew, which may go either way)."""
    ba = (b1[1] - b0[1]) - (a1[0] - a0[0])
    ab = (a1[1] - a0[1]) - (b1[0] - b0[0])
    return max(ba, 0), max(ab, 0)


def ud_clean(lab):
    """420 messages a QP within 4096 receives: nothing can be outrun. A message is lost
    only where the link dropped frames (a busy host's emulated link does): at most one
    each, and a latency point may then end on a lost ping."""
    v, name = lab.v, "UD clean link"
    a0, b0 = lab.a.frames(), lab.b.frames()
    lab.client("udclean", "--transport", "ud", "--mode", "bw,lat", "-s", 1024, "-n", 400, "--warmup", 20,
               "-r", 4096, "--timeout", 20)
    a1, b1 = lab.a.frames(), lab.b.frames()
    if None in (a0, b0, a1, b1):
        return v.fail(name, "no frame counts from the NICs")
    ba, ab = link_dropped(a0, b0, a1, b1)
    dropped = ba + ab
    lost, why = ud_counts(lab.path("udclean.json"), 420, dropped)
    if why:
        return v.fail(name, why)
    if dropped == 0 and lost:
        return v.fail(name, f"lost {lost} on a clean link (no frame dropped)")
    if lost > dropped:
        return v.fail(name, f"lost {lost}, more than the {dropped} frames the link dropped")
    if dropped:
        return v.ok(f"{name}: bw and lat, 420 sent, lost {lost}, the link itself dropped frames "
                    f"(b->a {ba} a->b {ab}: a busy host)")
    return v.ok(f"{name}: bw and lat, 420 sent and received")


def ud_loss(lab):
    """Every message accounted for as received or lost when b's NIC drops 10% of its RoCE
    packets (only those: the control channel's TCP must not be what fails), and a latency
    point whose ping or pong is lost ending at --timeout with the line that says so."""
    v = lab.v
    if not lab.b.netem_on("roce", "10%"):
        return v.fail("UD loss", "cannot set up netem on b's NIC")
    rc = lab.client("udloss", "--transport", "ud", "-s", 1024, "-n", 480, "--warmup", 20, "-r", 4096, "--timeout", 20)
    lrc = lab.client("udlosslat", "--transport", "ud", "--mode", "lat", "-s", 64, "-n", 400, "--warmup", 20,
                     "--timeout", 3)
    lab.b.clear()
    lost, why = ud_counts(lab.path("udloss.json"), 500)
    if rc:
        v.fail("UD loss", f"client exit {rc}: {one_line(lab.log('udloss'))}")
    elif why:
        v.fail("UD loss", why)
    elif not lost:
        v.fail("UD loss", "nothing lost with 10% of b's packets dropped")
    else:
        v.ok(f"UD loss: 500 sent, lost {lost}, the rest received")
    if lrc == 0:
        return v.fail("UD lost ping", "400 pings with 10% dropped all came back")
    if "a UD ping or its pong was lost" not in lab.log("udlosslat"):
        return v.fail("UD lost ping", f"exit {lrc}: {one_line(lab.log('udlosslat'))}")
    return v.ok("UD lost ping: the point ended at --timeout saying so")


def ud_checks(lab):
    if lab.iwarp:
        return lab.skip("UD", "iWARP has no UD QPs")
    ud_clean(lab)
    ud_loss(lab)


def doctor(lab):
    """doctor against the server on a."""
    if run_logged([lab.bin, "doctor", lab.a.addr], lab.path("doctor.log"), 120):
        return lab.v.fail(f"doctor {lab.a.addr}", one_line(lab.log("doctor"), 3))
    return lab.v.ok(f"doctor {lab.a.addr}")
