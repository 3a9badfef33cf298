"""Host tests of the exercise runner: python3 test_run_exercise.py path/to/run_exercise.py

A fake grader (this file, run with --fake-grader) plays the grader's part: it sends its results
down the results channel (or, with BEHAVIOUR "file", writes the file as a grader run by hand does)
the way it is told to, honestly or not, and the runner must accept only an honest, finished verdict
whose points follow from the grading data.
"""
import json
import os
import pathlib
import stat
import subprocess
import sys
import tempfile
import unittest

DATA = {
    "scoring": {"reference_margin": 1.25, "partial_credit_from": 0.5, "self_timing_tolerance": 0.1},
    "chapters": {"01_x": {"title": "X", "exercises": {"add": {
        "title": "1. Add", "read": "notes/01_x.md#add",
        "checks": {"correct": {"points": 6},
                   "speed": {"points": 4, "kind": "speed", "threshold": 0.8, "threshold_by_cc": {"8.0": 0.5}}}}}}},
}


# The same exercise with a check that runs it again under racecheck.
RACE_DATA = json.loads(json.dumps(DATA))
RACE_DATA["chapters"]["01_x"]["exercises"]["add"]["checks"]["race_free"] = {"points": 3, "kind": "sanitizer",
                                                                             "tool": "racecheck"}


def fake_grader(argv):
    """Sends the results of 01_x/add as BEHAVIOUR says, then exits with EXIT."""
    behaviour, code = os.environ["BEHAVIOUR"], int(os.environ.get("EXIT", "0"))
    results = pathlib.Path(argv[argv.index("--results-dir") + 1])
    if "--sanitizer" in argv:  # as the grader does: sanitized results apart from the timed ones
        results = results.with_name(results.name + "-" + argv[argv.index("--sanitizer") + 1])
    results = results / "01_x"
    results.mkdir(parents=True, exist_ok=True)
    token_fd = os.environ.get("COURSE_TOKEN_FD")
    token = os.read(int(token_fd), 100).decode() if token_fd else ""
    value = 0.9 if behaviour != "slow" else 0.6
    speed_points = 4.0 if value >= 0.8 else 4 * (value / 0.8 - 0.5) / 0.5
    result = {"chapter": "01_x", "exercise": "add", "title": "1. Add", "mode": "grade", "status": "passed",
              "message": "", "device": {"compute_capability": "9.0"}, "seed": 1, "seconds": 0.1,
              "token": token, "argv": argv,
              "checks": [{"key": "correct", "status": "passed"}, {"key": "speed", "status": "passed", "value": value}],
              "scores": [{"key": "correct", "points": 6.0, "max_points": 6}, {"key": "speed", "points": speed_points,
                                                                              "max_points": 4}]}
    if behaviour in ("forged", "forged file"):
        result["token"] = "0" * 32
    if behaviour == "running":
        result["status"] = "running"
    if behaviour == "lowered_threshold":  # full speed points for 0.6, as if the threshold were 0.5
        result["checks"][1]["value"] = 0.6
    if behaviour == "skipped":
        result.update(status="skipped", checks=[], scores=[{"key": "correct", "points": 0.0, "max_points": 6},
                                                           {"key": "speed", "points": 0.0, "max_points": 4}])
    if behaviour == "slow":
        result["status"] = "failed"
    if behaviour == "wrong":
        result.update(status="failed", checks=[{"key": "correct", "status": "failed"}, {"key": "speed", "status": "passed",
                                                                                      "value": value}])
        result["scores"][0]["points"] = result["scores"][1]["points"] = 0.0
    result["points"] = sum(score["points"] for score in result["scores"])
    if os.environ.get("RACE_CHECK"):  # the grader knows the check, and records nothing for it
        result["scores"].append({"key": "race_free", "points": 0.0, "max_points": 3})
    channel = os.environ.get("COURSE_RESULTS_FD")
    if behaviour in ("file", "forged file") or not channel:
        (results / "add.json").write_text(json.dumps(result))
    else:
        with os.fdopen(int(channel), "w") as out:
            if behaviour == "forged line":  # the code graded writes a passing record of its own first
                out.write(json.dumps(dict(result, token="f" * 32)) + "\n" + "not even JSON\n")
            out.write(json.dumps(result) + "\n")
        if behaviour == "rewrites file":  # and at exit, a results file with full marks
            (results / "add.json").write_text(json.dumps(dict(result, points=100.0, token="")))
    if behaviour == "hang":
        import time
        time.sleep(60)
    if "--sanitizer" in argv and os.environ.get("RACE_CHECK") == "race":  # as compute-sanitizer reports one
        print("========= Error: Race reported between Write access at warp_finish(int *, unsigned int)+0x40 in "
              "reduction.cu:151\n========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)")
        return 86
    if "--sanitizer" in argv and os.environ.get("RACE_CHECK") == "summary only":  # found, whatever the exit code
        print("========= RACECHECK SUMMARY: 2 hazards displayed (0 errors, 2 warnings)")
    return code


class RunnerTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = pathlib.Path(self.tmp.name)
        self.data = self.root / "thresholds.json"
        self.data.write_text(json.dumps(DATA))

    def tearDown(self):
        self.tmp.cleanup()

    def fake_sanitizer(self):
        fake = self.root / "bin" / "compute-sanitizer"  # runs what follows its own options
        fake.parent.mkdir(exist_ok=True)
        fake.write_text("#!/bin/sh\nshift 6\nexec \"$@\"\n")
        fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
        return {"PATH": f"{fake.parent}:{os.environ['PATH']}"}

    def run_exercise(self, behaviour, exit_code=0, extra_env=None, skeleton=False, options=()):
        results = self.root / "results" / "grade"
        env = dict(os.environ, BEHAVIOUR=behaviour, EXIT=str(exit_code), **(extra_env or {}))
        command = [sys.executable, RUNNER, "--results-file", str(results / "01_x" / "add.json"),
                   "--thresholds", str(self.data)] + (["--skeleton"] if skeleton else []) + list(options) + \
                  ["--", sys.executable, __file__, "--fake-grader", "--exercise", "add", "--results-dir", str(results)]
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        written = json.loads((results / "01_x" / "add.json").read_text()) if (results / "01_x" / "add.json").exists() else None
        if extra_env and "COURSE_SANITIZER" in extra_env:
            folder = results.with_name("grade-" + extra_env["COURSE_SANITIZER"]) / "01_x" / "add.json"
            written = json.loads(folder.read_text())
        return done.returncode, written, done.stdout

    def test_an_honest_pass_passes(self):
        code, result, _ = self.run_exercise("honest")
        self.assertEqual((code, result["status"]), (0, "passed"))

    def test_a_grader_without_a_channel_may_write_its_file(self):
        code, result, _ = self.run_exercise("file")
        self.assertEqual((code, result["status"]), (0, "passed"))

    def test_lines_without_the_token_are_ignored_and_flagged(self):
        code, result, out = self.run_exercise("forged line", options=["--wrap", '["env"]'])
        self.assertEqual((code, result["status"], result["points"]), (0, "passed", 10.0))
        self.assertIn("2 lines on the results channel did not come from the grader", result["tampering"][0])
        self.assertIn("TAMPERING", out)

    def test_a_results_file_rewritten_at_exit_does_not_count(self):
        code, result, _ = self.run_exercise("rewrites file")
        self.assertEqual((code, result["status"], result["points"]), (0, "passed", 10.0))
        self.assertNotIn("token", result)

    def test_a_grader_that_overruns_its_time_is_stopped(self):
        code, result, out = self.run_exercise("hang", options=["--timeout", "2"])
        self.assertEqual((code, result["status"], result["points"]), (1, "error", 0.0))
        self.assertIn("still running after 2 s", result["message"])

    def test_slow_but_honest_fails_without_error(self):
        code, result, _ = self.run_exercise("slow", exit_code=1)
        self.assertEqual((code, result["status"]), (1, "failed"))

    def test_a_forged_results_file_is_an_error(self):
        code, result, out = self.run_exercise("forged")
        self.assertEqual((code, result["status"], result["points"]), (1, "error", 0.0))
        self.assertIn("not written by this run of the grader", out)

    def test_a_forged_results_file_from_a_grader_without_channel_is_an_error(self):
        code, result, out = self.run_exercise("forged file")
        self.assertEqual((code, result["status"], result["points"]), (1, "error", 0.0))
        self.assertIn("not written by this run of the grader", out)

    def test_ending_early_with_exit_code_zero_fails(self):
        code, result, out = self.run_exercise("running", exit_code=0)
        self.assertEqual((code, result["status"]), (1, "error"))
        self.assertIn("before the exercise's verdict was written", result["message"])

    def test_points_that_do_not_follow_from_the_data_are_an_error(self):
        code, result, _ = self.run_exercise("lowered_threshold")
        self.assertEqual((code, result["status"]), (1, "error"))
        self.assertIn("changed in memory", result["message"])

    def test_a_passed_record_with_a_failing_exit_code_fails(self):
        code, _, _ = self.run_exercise("honest", exit_code=1)
        self.assertEqual(code, 1)

    def test_skipped_is_meson_skip(self):
        code, _, _ = self.run_exercise("skipped", exit_code=77)
        self.assertEqual(code, 77)

    def test_skeleton_mode_takes_the_graders_word_once_the_record_is_honest(self):
        self.assertEqual(self.run_exercise("slow", exit_code=0, skeleton=True)[0], 0)
        self.assertEqual(self.run_exercise("forged", exit_code=0, skeleton=True)[0], 1)

    def test_the_sanitizer_reaches_the_grader_on_its_command_line(self):
        env = dict(self.fake_sanitizer(), COURSE_SANITIZER="memcheck")
        code, result, _ = self.run_exercise("honest", extra_env=env)
        self.assertEqual(code, 0)
        self.assertEqual(result["argv"][-2:], ["--sanitizer", "memcheck"])

    def race_run(self, behaviour, race, skeleton=False, exit_code=0):
        self.data.write_text(json.dumps(RACE_DATA))
        return self.run_exercise(behaviour, exit_code, dict(self.fake_sanitizer(), RACE_CHECK=race), skeleton)

    def test_a_sanitizer_check_passes_when_the_tool_reports_nothing(self):
        code, result, _ = self.race_run("honest", "clean")
        record = [c for c in result["checks"] if c["key"] == "race_free"]
        self.assertEqual((code, result["status"], result["points"]), (0, "passed", 13.0))
        self.assertEqual([r["status"] for r in record], ["passed"])

    def test_a_reported_race_fails_the_check_and_costs_its_points(self):
        code, result, _ = self.race_run("honest", "race")
        record = next(c for c in result["checks"] if c["key"] == "race_free")
        self.assertEqual((code, result["status"], result["points"]), (1, "failed", 10.0))
        self.assertIn("Race reported", record["message"])
        self.assertIn("reduction.cu:151", record["message"])

    def test_hazards_in_the_summary_fail_the_check_whatever_the_exit_code(self):
        code, result, _ = self.race_run("honest", "summary only")
        record = next(c for c in result["checks"] if c["key"] == "race_free")
        self.assertEqual((code, record["status"]), (1, "failed"))
        self.assertIn("2 hazards displayed", record["message"])

    def test_the_sanitizer_check_waits_for_right_results(self):
        code, result, _ = self.race_run("wrong", "clean", exit_code=1)
        record = next(c for c in result["checks"] if c["key"] == "race_free")
        self.assertEqual((code, record["status"]), (1, "failed"))
        self.assertIn("once the results are right", record["message"])
        self.assertEqual(self.race_run("wrong", "clean", skeleton=True)[0], 0)  # a skeleton fails it, as it should

    def test_a_skeleton_that_passes_a_sanitizer_check_fails_the_self_check(self):
        code, _, out = self.race_run("honest", "clean", skeleton=True)
        self.assertEqual(code, 1)
        self.assertIn("a check that cannot fail", out)


if __name__ == "__main__":
    if "--fake-grader" in sys.argv:
        sys.exit(fake_grader(sys.argv[1:]))
    RUNNER = sys.argv.pop(1)
    unittest.main()
