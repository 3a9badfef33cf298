#!/usr/bin/env python3
"""Runs one exercise of a chapter's grader and decides its verdict from the grader's own record.

    run_exercise.py --results-file DIR/CHAPTER/EXERCISE.json --thresholds grader/thresholds.json \
        -- GRADER --exercise EXERCISE --results-dir DIR [--mode MODE] ...

The code graded runs inside the grader's process, so nothing it can do there may decide the grade.
This runner, a separate process, therefore:

- hands the grader a one-time token in a pipe that the grader reads and closes before the code
  graded can run, and the write end of another pipe, the results channel: the grader sends each version
  of the exercise's results down it as a line of JSON with the token, and this runner writes the
  results file. A line without the token was not written by the grader: it is ignored, and the
  results say that something tried (tampering);
- passes the mode and the compute-sanitizer tool on the command line (the environment variable
  COURSE_SANITIZER, set by the Meson test setups, is read here, where the code graded cannot set
  it), and runs the grader under compute-sanitizer when asked;
- accepts a verdict only when the grader finished the exercise: a process that ends while its
  results file still says "running" failed that exercise, whatever its exit code;
- recomputes the points from the grading data file, so that a threshold changed in the grader's
  memory gains nothing;
- for an exercise whose lesson is a race or a synchronization rule (a check of kind "sanitizer" in
  the data file), runs it once more under that compute-sanitizer tool, where the grader checks the
  small sizes only, and records the check: passed when the code computed the right results and the
  tool reported nothing.

With --wrap, the grader runs inside that command (a sandbox, see grader/grade_class.py); with
--timeout, a grader still running after that many seconds is killed and the exercise fails.

A verdict it cannot accept replaces the results file with an error record saying why. The exit
code follows the verdict: 0 passed (in skeleton mode: failed as it should), 77 skipped, 1 otherwise.
"""
import argparse
import json
import os
import pathlib
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading

SKIP = 77


def speed_points(value, threshold, points, start):
    if value is None or not value >= 0 or threshold <= 0:  # NaN earns nothing
        return 0.0
    if value >= threshold:
        return float(points)
    return points * min(max((value / threshold - start) / (1 - start), 0.0), 1.0)


def correctness_keys(spec):
    """The exercise's correctness checks (not speed, not sanitizer)."""
    return [k for k, c in spec["checks"].items() if c.get("kind", "correctness") == "correctness"]


def score(spec, scoring, checks, compute_capability):
    """Points per check, as grader/harness/scoring.cpp computes them."""
    def records(key):
        return [c for c in checks if c.get("key") == key]

    def all_passed(rs):
        return bool(rs) and all(r.get("status") == "passed" for r in rs)

    correct = all(all_passed(records(k)) for k in correctness_keys(spec))
    scores = {}
    for key, check in spec["checks"].items():
        rs = records(key)
        if check.get("kind") != "speed":
            scores[key] = float(check["points"]) if all_passed(rs) else 0.0
            continue
        threshold = check.get("threshold_by_cc", {}).get(compute_capability, check["threshold"])
        ok = correct and len(rs) == 1 and rs[0].get("status") != "skipped" and "value" in rs[0]
        scores[key] = speed_points(rs[0]["value"], threshold, check["points"], scoring["partial_credit_from"]) if ok else 0.0
    return scores


def problem_with(result, token, data):
    """Why the results file cannot stand, or None."""
    if result.get("token") != token:
        return "the results file was not written by this run of the grader"
    if result.get("status") == "running":
        return None  # said by the caller, who knows the exit code
    spec = data["chapters"].get(result.get("chapter"), {}).get("exercises", {}).get(result.get("exercise"))
    if spec is None:
        return "the results file names an exercise the grading data does not have"
    device = result.get("device") or {}
    expected = score(spec, data["scoring"], result.get("checks", []), device.get("compute_capability", ""))
    recorded = {s["key"]: s["points"] for s in result.get("scores", [])}
    if set(recorded) != set(expected) or any(abs(recorded[k] - expected[k]) > 1e-6 for k in expected):
        return ("the points recorded do not follow from the checks and grader/thresholds.json "
                f"(recorded {recorded}, the data gives {expected}): was the grading data changed in memory?")
    return None


def error_record(result, why, data, chapter, exercise):
    spec = data["chapters"].get(chapter, {}).get("exercises", {}).get(exercise, {"title": exercise, "checks": {}})
    return {"chapter": chapter, "exercise": exercise, "title": spec.get("title", exercise), "read": spec.get("read", ""),
            "mode": result.get("mode", ""), "status": "error", "message": why, "checks": [],
            "scores": [{"key": k, "points": 0.0, "max_points": c["points"]} for k, c in spec["checks"].items()],
            "points": 0.0, "max_points": sum(c["points"] for c in spec["checks"].values()), "timelines": [],
            "device": result.get("device"), "seed": result.get("seed"), "seconds": result.get("seconds", 0)}


def tool_path():
    return shutil.which("compute-sanitizer") or "/usr/local/cuda/bin/compute-sanitizer"


def sanitizer_command(command, tool):
    # The graders make failing API calls on purpose (bad launch configurations): not reported.
    return [tool_path(), "--tool", tool, "--error-exitcode", "86", "--report-api-errors", "no"] + command + \
        ["--sanitizer", tool]


class GraderRun:
    """One run of the grader: its exit code, what it printed (when captured), the records that came
    down the results channel with the token, and how many lines came without it."""
    def __init__(self, code, token, output, records, forged, timed_out):
        self.code, self.token, self.output = code, token, output
        self.records, self.forged, self.timed_out = records, forged, timed_out

    def result(self, results_file):
        """The last record the grader sent; without a channel (an old grader), its results file."""
        if self.records:
            return self.records[-1]
        if results_file.exists():
            try:
                return json.loads(results_file.read_text())
            except ValueError:
                return {}
        return None


def run_grader(command, capture=False, wrap=(), timeout=None):
    """Runs the grader with a fresh one-time token and a results channel."""
    token = secrets.token_hex(16)
    token_read, token_write = os.pipe()
    os.write(token_write, token.encode())  # 32 bytes: far less than a pipe holds
    os.close(token_write)
    read_end, write_end = os.pipe()
    env = dict(os.environ, COURSE_TOKEN_FD=str(token_read), COURSE_RESULTS_FD=str(write_end))
    lines = []

    def read_channel():
        with os.fdopen(read_end, "r", errors="replace") as channel:
            lines.extend(channel)

    reader = threading.Thread(target=read_channel, daemon=True)
    timed_out = False
    try:
        proc = subprocess.Popen(list(wrap) + list(command), env=env, pass_fds=(token_read, write_end),
                                stdout=subprocess.PIPE if capture else None,
                                stderr=subprocess.STDOUT if capture else None, text=True, errors="replace")
    finally:
        os.close(token_read)
        os.close(write_end)
    reader.start()
    try:
        output, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        proc.kill()
        output, _ = proc.communicate()
    reader.join(timeout=10)  # a child the grader left behind may hold the channel open: not waited for
    sys.stdout.flush()
    records, forged = [], 0
    for line in list(lines):
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        if isinstance(record, dict) and record.get("token") == token:
            records.append(record)
        elif line.strip():
            forged += 1
    return GraderRun(proc.returncode, token, output or "", records, forged, timed_out)


def tampering_note(run):
    lines = "1 line" if run.forged == 1 else f"{run.forged} lines"
    return (f"{lines} on the results channel did not come from the grader (no token) and "
            f"{'was' if run.forged == 1 else 'were'} ignored: the code graded tried to write results")


def sanitizer_record(key, check, command, spec, chapter, exercise, wrap=(), timeout=None):
    """Runs the exercise again under check["tool"] and returns the check's record."""
    tool = check["tool"]
    label = f"under compute-sanitizer --tool {tool}"
    with tempfile.TemporaryDirectory(prefix="course-sanitized-") as tmp:
        base = pathlib.Path(tmp) / "results"
        argv = list(command)
        argv[argv.index("--results-dir") + 1] = str(base)
        run = run_grader(sanitizer_command(argv, tool), capture=True, wrap=wrap,
                         timeout=timeout * 5 if timeout else None)
        code, token, output = run.code, run.token, run.output
        result = run.result(base.with_name(base.name + "-" + tool) / chapter / f"{exercise}.json") or {}
    correctness = correctness_keys(spec)
    records = [c for c in result.get("checks", []) if c.get("key") in correctness and c.get("status") != "skipped"]
    lines = [line.strip("= ").strip() for line in output.splitlines() if line.startswith("=========")]
    # "RACECHECK SUMMARY: 2 hazards displayed (2 errors, 0 warnings)", "ERROR SUMMARY: 0 errors"
    summaries = [line for line in lines if "SUMMARY" in line]
    reported = any(re.search(r"SUMMARY: [1-9]", line) for line in summaries)
    findings = [line for line in lines if "Race reported" in line or "Error" in line or (" at " in line and ".cu:" in line)]
    if result.get("token") != token or result.get("status") in (None, "running", "error"):
        message = (f"the run under {tool} did not finish (exit code {code}): "
                   + (result.get("message") or output.strip()[-300:]))
        return {"key": key, "label": label, "status": "failed", "message": message}
    if not records or not all(r.get("status") == "passed" for r in records):
        wrong = next((r for r in records if r.get("status") != "passed"), {"label": "-", "message": "no check ran"})
        return {"key": key, "label": label, "status": "failed",
                "message": f"under {tool} the results were wrong ({wrong.get('label')}: {wrong.get('message')}); "
                           "this check needs right results with nothing reported"}
    if code == 86 or reported:
        return {"key": key, "label": label, "status": "failed",
                "message": f"compute-sanitizer --tool {tool} reported:\n" + "\n".join((findings[:12] + summaries)[:14])}
    return {"key": key, "label": label, "status": "passed", "message": ""}


def add_sanitizer_checks(result, command, spec, data, wrap=(), timeout=None):
    """Adds the exercise's sanitizer checks to its results; returns the records added."""
    added = []
    correctness = correctness_keys(spec)
    right = all(r.get("status") == "passed" for r in result.get("checks", []) if r.get("key") in correctness)
    for key, check in spec["checks"].items():
        if check.get("kind") != "sanitizer":
            continue
        if right:
            record = sanitizer_record(key, check, command, spec, result["chapter"], result["exercise"], wrap, timeout)
        else:
            record = {"key": key, "label": f"under compute-sanitizer --tool {check['tool']}", "status": "failed",
                      "message": "graded once the results are right"}
        print(f"[{result['chapter']}/{result['exercise']}] {key} ({record['label']}): {record['status'].upper()}"
              + (f"\n{record['message']}" if record["message"] else ""))
        result["checks"].append(record)
        added.append(record)
    if added:
        compute_capability = (result.get("device") or {}).get("compute_capability", "")
        points = score(spec, data["scoring"], result["checks"], compute_capability)
        result["scores"] = [{"key": k, "points": points[k], "max_points": c["points"]} for k, c in spec["checks"].items()]
        result["points"] = sum(points.values())
        failed = [r["key"] for r in added if r["status"] == "failed"]
        if failed and result["status"] == "passed":
            result["status"] = "failed"
            result["message"] = "failed: " + ", ".join(failed)
            if result.get("mode") == "reference":
                result["message"] = "self-check failed: the reference solution failed " + ", ".join(failed)
        most = sum(c["points"] for c in spec["checks"].values())
        print(f"[{result['chapter']}/{result['exercise']}] {result['status'].upper()}  "
              f"{result['points']:.3g}/{most:.3g} points, {', '.join(r['key'] for r in added)} included")
    return added


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results-file", required=True, type=pathlib.Path)
    parser.add_argument("--thresholds", required=True, type=pathlib.Path)
    parser.add_argument("--skeleton", action="store_true", help="the grader runs in skeleton mode")
    parser.add_argument("--wrap", default="[]", help="a JSON list: the command the grader runs inside (a sandbox)")
    parser.add_argument("--timeout", type=float, help="seconds before the grader is killed")
    parser.add_argument("grader", nargs=argparse.REMAINDER, help="-- the grader's command line")
    args = parser.parse_args()
    command = args.grader[1:] if args.grader[:1] == ["--"] else args.grader
    chapter, exercise = args.results_file.parent.name, args.results_file.stem
    data = json.loads(args.thresholds.read_text())
    wrap = json.loads(args.wrap)

    sanitizer = os.environ.pop("COURSE_SANITIZER", "")
    results_file = args.results_file
    if sanitizer:  # the grader keeps sanitized results apart from the timed ones
        results_file = results_file.parent.parent.with_name(results_file.parent.parent.name + "-" + sanitizer) \
            / chapter / results_file.name
    graded_command = command
    if sanitizer:
        command = sanitizer_command(command, sanitizer)
    results_file.unlink(missing_ok=True)

    run = run_grader(command, wrap=wrap, timeout=args.timeout)
    code, token = run.code, run.token
    result = run.result(results_file)

    if result is None:
        if code == SKIP:  # no GPU, and no exercise named: nothing to record
            return SKIP
        why = f"the grader sent no results for {chapter}/{exercise} (exit code {code})"
        if run.forged:
            why = "the results that came were not written by this run of the grader"
        if run.timed_out:
            why = f"stopped after {args.timeout:g} s, before it had started the exercise"
        result = {}
    else:
        why = problem_with(result, token, data)
    if why is None and run.timed_out:
        why = (f"still running after {args.timeout:g} s and stopped: a kernel that never ends, or a wait for work "
               "that never comes?")
    if why is None and result.get("status") == "running":
        why = (f"the process ended (exit code {code}) before the exercise's verdict was written: a crash, a kill, "
               "or a call to exit() in the code graded")
    result.pop("token", None)  # this runner's file: the token has done its work
    if why is not None:
        result = error_record(result, why, data, chapter, exercise)
    if run.forged:
        result["tampering"] = [tampering_note(run)]
        print(f"[{chapter}/{exercise}] TAMPERING  {tampering_note(run)}")
    results_file.parent.mkdir(parents=True, exist_ok=True)
    results_file.write_text(json.dumps(result, indent=2) + "\n")
    if why is not None:
        print(f"[{chapter}/{exercise}] ERROR  {why}")
        return 1
    if result["status"] == "skipped":
        return SKIP
    spec = data["chapters"][chapter]["exercises"][exercise]
    added = [] if sanitizer else add_sanitizer_checks(result, graded_command, spec, data, wrap, args.timeout)
    if added:
        results_file.write_text(json.dumps(result, indent=2) + "\n")
    if args.skeleton:
        passing = [r["key"] for r in added if r["status"] == "passed"]
        if passing:
            print(f"[{chapter}/{exercise}] the untouched skeleton passes {', '.join(passing)}: a check that cannot fail")
            return 1
        return code  # the grader's own word: every check failed, as it should, or not
    if sanitizer and code == 86:
        return 1  # compute-sanitizer found an error
    return 0 if result["status"] == "passed" and code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
