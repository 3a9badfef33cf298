#!/usr/bin/env python3
"""Grades one submission for Gradescope and writes its results.json (gradescope/run_autograder).

    gradescope.py --submission /autograder/submission --results /autograder/results/results.json \
        --work /autograder/work [--chapters 03_reduction]

The submission is graded as one member of a class (grade_class.py: a pristine course, only its
chapters/ files, the sandbox where bubblewrap works here), and results.json is the report's
Gradescope file: a test per exercise, the flags in its output, the time the grading took, and the
speed figures as the leaderboard. Where bubblewrap cannot make a sandbox (some containers), the
submission is graded without one and the output says so.
"""
import argparse
import json
import pathlib
import shutil
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import grade_class  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submission", required=True, type=pathlib.Path)
    parser.add_argument("--results", required=True, type=pathlib.Path)
    parser.add_argument("--work", required=True, type=pathlib.Path)
    parser.add_argument("--chapters", nargs="+")
    args = parser.parse_args(argv)

    submissions = args.work / "submissions"
    shutil.rmtree(submissions, ignore_errors=True)
    submissions.mkdir(parents=True)
    (submissions / "submission").symlink_to(args.submission.resolve(), target_is_directory=True)
    forwarded = [str(submissions), "--out", str(args.work / "class"), "--force", "--no-rollup"]
    forwarded += ["--chapters"] + args.chapters if args.chapters else []
    unsandboxed = grade_class.sandbox_problem()
    if unsandboxed:
        forwarded.append("--unsandboxed")
    grade_class.main(forwarded)

    graded = args.work / "class" / "students" / "submission"
    args.results.parent.mkdir(parents=True, exist_ok=True)
    if not (graded / "summary.json").exists():
        results = {"score": 0.0, "output": "The autograder could not grade this submission: see its log.",
                   "tests": []}
    else:
        summary = json.loads((graded / "summary.json").read_text())
        results = json.loads((graded / "report" / "results.json").read_text())
        results["execution_time"] = round(summary["seconds"])
        notes = [f"Graded on {summary['gpu']['name']}, course {summary['course']['commit']} "
                 f"(graders {summary['course']['grading_hash']})."]
        if unsandboxed:
            notes.append(f"Graded without a sandbox: {unsandboxed}.")
        if summary.get("error"):
            notes.append("Grading stopped: " + summary["error"])
        results["output"] = "\n".join(notes + ([results["output"]] if results.get("output") else []))
    args.results.write_text(json.dumps(results, indent=2) + "\n")
    print(f"results: {args.results} ({results['score']:g} points)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
