"""The lab drivers' own machinery, without a lab: host a's agent (tests/twohost/agent_a.py)
carrying out requests from tests/lab/labhost.py's Agent through a shared directory, its
fault armed for the server's N-th traffic line, and the UD test's arithmetic."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "tests", "lab"))
sys.path.insert(0, os.path.join(ROOT, "tests", "twohost"))
from labhost import Agent, Verdicts, check_file, run_logged, wait_for  # noqa: E402
from wire import link_dropped, ud_counts  # noqa: E402

# A server that says how it was started, then waits to be killed.
FAKE_SERVER = """#!/bin/sh
echo "started: $*"
exec sleep 600
"""


class AgentTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        d = self.tmp.name
        self.share, self.state = os.path.join(d, "share"), os.path.join(d, "state")
        os.mkdir(self.share)
        os.mkdir(self.state)
        server = os.path.join(d, "server")
        with open(server, "w") as f:
            f.write(FAKE_SERVER)
        os.chmod(server, 0o755)
        env = {**os.environ, "RDMASWEEP_TWOHOST_DIR": self.share, "RDMASWEEP_BIN": server,
               "RDMASWEEP_AGENT_TMP": self.state}
        self.out = open(os.path.join(d, "agent.out"), "w+")
        self.agent = subprocess.Popen([sys.executable, os.path.join(ROOT, "tests", "twohost", "agent_a.py")],
                                      env=env, stdout=self.out, stderr=subprocess.STDOUT)
        self.assertTrue(wait_for(30, lambda: os.path.exists(os.path.join(self.share, "ready.a"))), self.said())
        self.verdicts = Verdicts()
        self.a = Agent(self.share, self.verdicts)

    def tearDown(self):
        self.agent.terminate()
        self.agent.wait(30)
        self.out.close()
        self.tmp.cleanup()

    def said(self):
        self.out.seek(0)
        return self.out.read()

    def server_log(self):
        with open(os.path.join(self.state, "server.log")) as f:
            return f.read()

    def traffic(self, name):
        with open(os.path.join(self.state, "server.progress"), "a") as f:
            f.write(f"traffic {name} t=1.0\n")

    def test_a_shell_command_answers_with_its_status_and_output(self):
        self.assertEqual(self.a.ask("sh", "echo one; echo two >&2; exit 3"), (3, "one\ntwo\n"))
        self.assertEqual(self.a.ask("sh", "true"), (0, ""))
        self.assertEqual(self.a.ask("nonsense")[0], 2)
        self.assertEqual(self.verdicts.fails, 0)

    def test_restart_starts_the_server_with_the_requested_arguments(self):
        self.assertEqual(self.a.ask("restart", "--bind", "192.0.2.1")[0], 0)
        self.assertTrue(wait_for(30, lambda: "--bind 192.0.2.1" in self.server_log()), self.server_log())
        self.assertEqual(self.server_log().splitlines()[-1],
                         f"started: server --progress-file {self.state}/server.progress --bind 192.0.2.1")
        self.assertEqual(self.a.ask("kill")[0], 0)

    def test_an_armed_fault_fires_at_the_nth_traffic_line_from_now(self):
        self.traffic("before")  # a line from an earlier point does not count
        mark = os.path.join(self.state, "fired")
        self.assertEqual(self.a.ask("arm", 2, {"op": "sh", "args": [f"touch {mark}"]})[0], 0)
        self.traffic("p1")
        self.traffic("p2")
        self.assertEqual(self.a.ask("fired")[0], 0)  # waits for the fault to finish
        self.assertTrue(os.path.exists(mark))
        self.assertIn("at the server's traffic line 3: traffic p2 t=1.0", self.said())

    def test_an_armed_fault_that_never_fires_says_so(self):
        mark = os.path.join(self.state, "fired")
        self.a.ask("arm", 2, {"op": "sh", "args": [f"touch {mark}"]})
        self.traffic("p1")
        self.assertEqual(self.a.ask("fired")[0], 1)
        self.assertFalse(os.path.exists(mark))
        self.assertEqual(self.a.ask("fired")[0], 1)  # nothing armed

    def test_no_answer_is_a_failure_not_a_hang(self):
        self.a.ask("kill")  # its server, which a killed agent would leave behind
        self.agent.kill()
        self.agent.wait(30)
        self.assertEqual(self.a.ask("sh", "true", timeout=1), (None, "no answer"))
        self.assertEqual(self.verdicts.fails, 1)


class RunLoggedTest(unittest.TestCase):
    def test_status_and_output_go_where_asked_and_a_hang_is_cut(self):
        with tempfile.TemporaryDirectory() as d:
            log = os.path.join(d, "x.log")
            self.assertEqual(run_logged(["sh", "-c", "echo out; echo err >&2; exit 3"], log, 30), 3)
            with open(log) as f:
                self.assertEqual(f.read(), "out\nerr\n")
            self.assertEqual(run_logged(["sleep", 60], log, 1), 124)
            script = os.path.join(d, "check.py")
            with open(script, "w") as f:
                f.write("import sys\nprint('checked', sys.argv[1:])\nsys.exit(len(sys.argv) > 2)\n")
            self.assertEqual(check_file(script, "r.json"), (True, "checked ['r.json']"))
            self.assertEqual(check_file(script, "r.json", "--iters", 40), (False, "checked ['r.json', '--iters', '40']"))


class UdArithmeticTest(unittest.TestCase):
    def write(self, points):
        f = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
        json.dump({"benchmarks": points}, f)
        f.close()
        self.addCleanup(os.unlink, f.name)
        return f.name

    def test_frames_one_host_sent_and_the_other_never_received(self):
        # a (rx, tx), b (rx, tx) before and after: b sent 100, a received 97; a sent 50, b got 50.
        self.assertEqual(link_dropped((0, 0), (0, 0), (97, 50), (50, 100)), (3, 0))
        self.assertEqual(link_dropped((10, 10), (10, 10), (111, 60), (60, 110)), (0, 0))  # skew: never below 0

    def test_every_points_losses_are_summed(self):
        ok = {"name": "bw", "messages_sent": 420, "messages_received": 418, "messages_lost": 2}
        lat = {"name": "lat", "messages_sent": 420, "messages_received": 419, "messages_lost": 1}
        self.assertEqual(ud_counts(self.write([ok, lat]), 420), (3, None))

    def test_a_lost_ping_counts_one_only_where_the_link_dropped_frames(self):
        lost = {"name": "lat", "error_occurred": True, "error_message": "a UD ping or its pong was lost"}
        self.assertEqual(ud_counts(self.write([lost]), 420, dropped=2), (1, None))
        self.assertIn("lat: a UD ping", ud_counts(self.write([lost]), 420)[1])

    def test_wrong_counts_are_named(self):
        bad = {"name": "bw", "messages_sent": 420, "messages_received": 400, "messages_lost": 2}
        self.assertEqual(ud_counts(self.write([bad]), 420),
                         (None, "bw: sent 420 (expected 420), received 400, lost 2"))
        self.assertEqual(ud_counts(self.write([]), 420), (None, "no points"))


class RxeLabPinTest(unittest.TestCase):
    """--pin gives each VM a host CPU of its own: with fewer CPUs allowed than VMs the lab
    says so and stops before it boots anything (the lab's own failure, 125)."""

    def test_more_vms_than_allowed_cpus_is_refused(self):
        r = subprocess.run(["taskset", "-c", "0", os.path.join(ROOT, "tools", "rxe-lab"), "--hosts", "2", "--pin",
                            "--a", "true"], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 125, r.stderr)
        self.assertEqual(r.stderr.strip().splitlines()[-1],
                         "rxe-lab: --pin needs a host CPU for each VM: 2 VM(s), 1 CPU(s) allowed here (run without --pin)")

    def test_help_names_it(self):
        r = subprocess.run([os.path.join(ROOT, "tools", "rxe-lab"), "--help"], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0)
        self.assertIn("--pin", r.stdout)
        self.assertIn("--append ARGS", r.stdout)


if __name__ == "__main__":
    unittest.main()
