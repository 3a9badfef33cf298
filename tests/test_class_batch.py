#!/usr/bin/env python3
"""Grades a small class with grade_class.py, and one submission with the Gradescope bundle.

    test_class_batch.py COURSE_ROOT

Chapter 01 only, five submissions of the synthetic class (a solution, an untouched skeleton,
nothing submitted, one that does not compile, one whose checkout edits the grader and the grading
data). Checks the verdicts and flags (tests/class/check_batch.py; without a GPU the graders skip),
that a second run grades nothing, that a changed submission is graded again, that a folder graded
with other graders is refused, and that gradescope/run_autograder writes a results.json that
follows Gradescope's format. Uses bubblewrap where it works here, and says so where it does not.
"""
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(sys.argv[1]).resolve()
sys.path.insert(0, str(ROOT / "grader"))
sys.path.insert(0, str(ROOT / "tests"))
import grade_class  # noqa: E402
import gradescope_format  # noqa: E402

KEEP = {"s01_solution_checkout", "s05_skeleton_checkout", "s06_nothing_submitted", "s10_does_not_compile",
        "s13_edits_the_grader"}


def run(cmd, **kwargs):
    done = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kwargs)
    return done.returncode, done.stdout + done.stderr


def main():
    problems = []
    gpu = shutil.which("nvidia-smi") and subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode == 0
    unsandboxed = grade_class.sandbox_problem()
    extra = ["--unsandboxed"] if unsandboxed else []
    if unsandboxed:
        print(f"note: {unsandboxed}; grading unsandboxed")
    with tempfile.TemporaryDirectory(prefix="course-class-") as tmp:
        tmp = pathlib.Path(tmp)
        code, out = run([sys.executable, ROOT / "tests" / "class" / "make_submissions.py", tmp / "made",
                         "--chapters", "01_runtime"])
        if code:
            print(out)
            return 1
        subs = tmp / "made" / "submissions"
        for entry in list(subs.iterdir()):
            if entry.name not in KEEP:
                shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
        expected = json.loads((tmp / "made" / "expected.json").read_text())
        expected["students"] = {k: v for k, v in expected["students"].items() if k in KEEP}
        (tmp / "expected.json").write_text(json.dumps(expected))
        work = tmp / "work"
        batch = [sys.executable, ROOT / "grader" / "grade_class.py", subs, "--out", work / "class",
                 "--chapters", "01_runtime"] + extra

        code, out = run(batch)
        print(out[-3000:])
        if code:
            problems.append(f"the batch failed (exit code {code})")
        code, out = run([sys.executable, ROOT / "tests" / "class" / "check_batch.py", work / "class",
                         tmp / "expected.json"] + ([] if gpu else ["--no-gpu"]))
        print(out)
        if code:
            problems.append("the verdicts are not the expected ones")
        if not (work / "class" / "rollup.html").exists():
            problems.append("no roll-up")

        code, out = run(batch)
        if "5 submissions, 5 already graded, 0 to grade" not in out:
            problems.append("a second run grades again: " + out[-500:])
        source = subs / "s05_skeleton_checkout" / "chapters" / "01_runtime" / "runtime.cu"
        source.write_text(source.read_text() + "\n// changed after grading\n")
        code, out = run(batch)
        if "4 already graded, 1 to grade" not in out:
            problems.append("a changed submission is not graded again: " + out[-500:])

        batch_file = work / "class" / "batch.json"
        record = json.loads(batch_file.read_text())
        record["course"]["grading_hash"] = "0" * 16
        batch_file.write_text(json.dumps(record))
        code, out = run(batch)
        if code == 0 or "graded with other graders" not in out:
            problems.append("a folder graded with other graders is not refused: " + out[-500:])

        # The Gradescope bundle, on the solution, sharing the build above (same work folder).
        autograder = tmp / "autograder"
        shutil.copytree(subs / "s01_solution_checkout", autograder / "submission")
        env = dict(os.environ, AUTOGRADER=str(autograder), GRADESCOPE_CHAPTERS="01_runtime")
        code, out = run([ROOT / "gradescope" / "run_autograder"], env=env)
        results_file = autograder / "results" / "results.json"
        if not results_file.exists():
            problems.append("run_autograder wrote no results.json: " + out[-1500:])
        else:
            results = json.loads(results_file.read_text())
            problems += ["results.json: " + p for p in gradescope_format.problems(results)]
            if len(results.get("tests", [])) != 5:
                problems.append(f"results.json has {len(results.get('tests', []))} tests, not 5")
            most = sum(t["max_score"] for t in results.get("tests", []))
            if gpu and (most == 0 or results["score"] != most):
                problems.append(f"the solution scores {results['score']} of {most} on Gradescope")
            print("results.json:", json.dumps({k: results.get(k) for k in ("score", "execution_time", "output")}))
    for p in problems:
        print("PROBLEM " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
