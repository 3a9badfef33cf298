#!/usr/bin/env python3
"""Grades one wrong submission and passes only when it fails, on the named check.

    expect_failure.py CHECK RUN_EXERCISE_ARGS...

Runs grader/run_exercise.py with the arguments given, then reads the results file it names: the
exercise must not pass, and CHECK must have failed (or, for a speed check, earned less than its
points).
"""
import json
import pathlib
import subprocess
import sys

check, runner_args = sys.argv[1], sys.argv[2:]
code = subprocess.run([sys.executable] + runner_args).returncode
results = pathlib.Path(runner_args[runner_args.index("--results-file") + 1])
result = json.loads(results.read_text()) if results.exists() else {}
records = [c for c in result.get("checks", []) if c.get("key") == check]
score = next((s for s in result.get("scores", []) if s["key"] == check), None)
failed = any(c.get("status") == "failed" for c in records) or (score is not None and score["points"] < score["max_points"])
if code == 77:
    print("SKIP: the exercise was skipped here")
    sys.exit(77)
if code != 0 and result.get("status") != "passed" and failed:
    print(f"as it should: {result.get('exercise')} {result.get('status')}, {check} failed")
    sys.exit(0)
print(f"WRONG SUBMISSION NOT CAUGHT: exit code {code}, status {result.get('status')}, the check {check} "
      f"{'failed' if failed else 'did not fail'}: {result.get('message', '')}")
sys.exit(1)
