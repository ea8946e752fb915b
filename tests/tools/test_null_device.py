"""Both harnesses on the verbs stand-in's null device (tests/support/verbs_standin,
RDMASWEEP_STANDIN_DEVICE=null): Debian's ib_write_bw, ib_read_bw and ib_atomic_bw
(server and client, through the ibv_wr_* API and ibv_post_send) and rdmasweep's
server and client run on null0 unmodified, with no RDMA on this host; rdmasweep's
counts are exact, its atomics change the server's words, and the bare post/poll loop
reports its cost per message.

Needs the build (rdmasweep, libverbs_standin.so, null_bare_loop) and perftest; without
them the tests skip, except under CI (CI set), where they fail."""

import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
import unittest

from _util import find_binary


NULL_ENV = {"RDMASWEEP_STANDIN_DEVICE": "null", "RDMASWEEP_STANDIN_PROFILE": "cx6dx"}
ITERS = 20000


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port):
    """True once something listens on TCP `port` (perftest's server says nothing until a client comes)."""
    for f in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(f) as fh:
                for line in fh.readlines()[1:]:
                    cols = line.split()
                    if cols[1].endswith(f":{port:04X}") and cols[3] == "0A":
                        return True
        except OSError:
            pass
    return False


class NullSetup(unittest.TestCase):
    """The build's stand-in on null0 (self.env) and perftest, or a skip (a failure under CI)."""

    @classmethod
    def setUpClass(cls):
        cls.binary, cls.why = find_binary()
        cls.env = None
        if cls.binary:
            build = os.path.dirname(os.path.dirname(cls.binary))
            cls.lib = os.path.join(build, "tests", "support", "libverbs_standin.so")
            cls.bare = os.path.join(build, "tests", "support", "null_bare_loop")
            missing = [p for p in (cls.lib, cls.bare) if not os.path.exists(p)]
            if missing:
                cls.why = f"not built: {', '.join(missing)}"
            else:
                cls.env = {**os.environ, **NULL_ENV, "LD_PRELOAD": cls.lib}

    def setUp(self):
        why = self.why if self.env is None else ""
        if not why and not shutil.which("ib_write_bw"):
            why = "no perftest (apt-get install perftest; tools/bootstrap installs it)"
        if why:
            if os.environ.get("CI"):
                self.fail(why + " (CI set: not skipped)")
            self.skipTest(why)


class NullDevice(NullSetup):
    def perftest(self, tool, *extra):
        """The client's message rate (Mpps) from one server/client pair of `tool` on null0."""
        port = free_port()
        size = "8" if tool == "ib_atomic_bw" else "64"  # an atomic is 8 bytes; perftest refuses -s for it
        args = [tool, "-d", "null0", "-p", str(port), *(["-s", size] if size != "8" else []), "-n", str(ITERS), "-N",
                *extra]
        server = subprocess.Popen(args, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            deadline = time.time() + 30
            while not listening(port) and server.poll() is None and time.time() < deadline:
                time.sleep(0.02)
            self.assertTrue(listening(port), f"{tool} server did not listen: {server.communicate()[0] if server.poll() is not None else ''}")
            client = subprocess.run(args + ["127.0.0.1"], env=self.env, capture_output=True, text=True, timeout=60)
            self.assertEqual(client.returncode, 0, f"{' '.join(args)}: {client.stdout}{client.stderr}")
            server.wait(30)
        finally:
            if server.poll() is None:
                server.kill()
                server.wait()
        rows = [l.split() for l in client.stdout.splitlines() if re.match(r"\s*%s\s+%d\s" % (size, ITERS), l)]
        self.assertEqual(len(rows), 1, client.stdout)
        return float(rows[0][-1])

    def test_perftest_runs_on_null0_both_apis(self):
        for tool in ("ib_write_bw", "ib_read_bw", "ib_atomic_bw"):
            for api in ([], ["--use_old_post_send"]):
                with self.subTest(tool=tool, api=api):
                    self.assertGreater(self.perftest(tool, *api), 0)

    def rdmasweep_pair(self, server_args, client_args):
        """One `rdmasweep server` on null0 and one client run against it: the client's
        completed process, once the client has exited (the server is then stopped)."""
        work = tempfile.mkdtemp(prefix="rdmasweep-null-")
        self.addCleanup(shutil.rmtree, work, True)
        log = open(os.path.join(work, "server.log"), "w")
        server = subprocess.Popen([self.binary, "server", "--port", "0", "--bind", "127.0.0.1", *server_args],
                                  env=self.env, stdout=subprocess.DEVNULL, stderr=log)
        try:
            port, deadline = None, time.time() + 30
            while port is None and server.poll() is None and time.time() < deadline:
                with open(log.name) as f:
                    m = re.search(r"listening on \S+:(\d+)", f.read())
                port = m.group(1) if m else None
                time.sleep(0.02)
            self.assertIsNotNone(port, "rdmasweep server on null0 did not listen")
            args = [a.replace("{work}", work) for a in client_args]
            return subprocess.run([self.binary, "client", "127.0.0.1", "--port", port, *args], env=self.env,
                                  capture_output=True, text=True, timeout=120)
        finally:
            server.terminate()
            server.wait(30)
            log.close()

    def test_rdmasweep_counts_are_exact_on_null0(self):
        r = self.rdmasweep_pair([], ["--op", "write,read", "--mode", "bw", "-s", "64", "-q", "4", "-n", str(ITERS),
                                     "--signal-every", "16", "--out", "{work}/null.json"])
        self.assertEqual(r.returncode, 0, r.stderr)
        out = re.search(r"results: (\S+\.json)", r.stderr)
        with open(out.group(1) if out else "") as f:
            doc = json.load(f)
        entries = [b for b in doc["benchmarks"] if b.get("run_type", "iteration") == "iteration"]
        self.assertEqual([b["config"]["op"] for b in entries], ["write", "read"])
        for b in entries:
            self.assertEqual(b["messages"], 4 * ITERS, b["name"])
            self.assertGreater(b["items_per_second"], 0)
        self.assertIn("null0", json.dumps(doc["context"]))

    def test_atomics_change_the_servers_words_on_null0(self):
        # null0 moves an atomic's word (null_atomics.cpp): rdmasweep's check of the
        # server's words after FAA and CAS points passes, with exact counts.
        r = self.rdmasweep_pair([], ["--op", "faa,cas", "--mode", "bw", "-q", "4", "-n", str(ITERS),
                                     "--out", "{work}/atomics.json"])
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(re.search(r"results: (\S+\.json)", r.stderr).group(1)) as f:
            entries = [b for b in json.load(f)["benchmarks"] if b.get("run_type", "iteration") == "iteration"]
        self.assertEqual([b["config"]["op"] for b in entries], ["faa", "cas"])
        for b in entries:
            self.assertFalse(b.get("error_occurred"), b.get("error_message"))
            self.assertEqual(b["messages"], 4 * ITERS, b["name"])

    def test_the_bare_loops_adds_and_fetches_land_through_both_apis(self):
        for api in ([], ["-w"]):
            with self.subTest(api=api):
                r = subprocess.run([self.bare, "-o", "faa", "-n", "4000", "-q", "4", "-l", "4", "-Q", "4", *api],
                                   env=self.env, capture_output=True, text=True, timeout=60)
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                self.assertIn("each QP's target is 4000, its last fetch 3999", r.stdout)

    def test_sends_that_never_arrive_end_the_point_at_the_servers_timeout(self):
        # null0 completes the client's SENDs and moves nothing: once the client's DONE
        # is in, the server's receiver waits its --timeout with no arrival, then says
        # why (it used to wait for a day).
        r = self.rdmasweep_pair(["--timeout", "2"], ["--op", "send", "--mode", "bw", "-s", "64", "-q", "2", "-n",
                                                     "1000", "--out", "{work}/send.json"])
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("the server reported: no completion for 2 s with the peer's DONE in: messages it counted as "
                      "sent never arrived here", r.stdout + r.stderr)

    def test_the_bare_loop_says_its_cost_per_message(self):
        r = subprocess.run([self.bare, "-n", str(ITERS), "-q", "4", "-l", "16"], env=self.env, capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        m = re.search(r"([\d.]+) ns/message", r.stdout + r.stderr)
        self.assertIsNotNone(m, r.stdout + r.stderr)
        self.assertGreater(float(m.group(1)), 0)


if __name__ == "__main__":
    unittest.main()
