#!/usr/bin/env python3
"""Compares a graded class with what make_submissions.py says it must give.

    check_batch.py CLASS_FOLDER EXPECTED_JSON [--no-gpu]

Per student: each exercise's verdict (from rollup.csv), the chapters that did not compile, the
flags raised, and that nothing forged counted (no exercise above its maximum). With --no-gpu
(a machine without one) the graders skip, so a compiled chapter's exercises must read "skipped".
Exits 1 and lists every difference when there is one.
"""
import csv
import json
import pathlib
import sys


def expected_verdict(verdicts, chapter, exercise):
    for key in (f"{chapter}/{exercise}", f"{chapter}/*", "*"):
        if key in verdicts:
            return verdicts[key]
    return "passed"


def main():
    folder, expected_file = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    no_gpu = "--no-gpu" in sys.argv
    expected = json.loads(expected_file.read_text())
    with open(folder / "rollup.csv") as f:
        rows = list(csv.DictReader(f))
    problems, checked = [], 0
    for student, expect in expected["students"].items():
        summary_file = folder / "students" / student / "summary.json"
        if not summary_file.exists():
            problems.append(f"{student}: not graded")
            continue
        summary = json.loads(summary_file.read_text())
        mine = [r for r in rows if r["student"] == student]
        if not mine:
            problems.append(f"{student}: not in rollup.csv")
        for row in mine:
            want = expected_verdict(expect.get("verdicts", {}), row["chapter"], row["exercise"])
            if no_gpu and want != "build error":
                want = "skipped"
            if row["status"] not in want.split("|"):
                problems.append(f"{student}: {row['chapter']}/{row['exercise']} is {row['status']}, "
                                f"expected {want} ({row['message'][:200]})")
            if float(row["points"]) > float(row["max_points"]) + 1e-9:
                problems.append(f"{student}: {row['chapter']}/{row['exercise']} has more points than its maximum")
            checked += 1
        for chapter in expect.get("not_compiled", []):
            if summary["chapters"].get(chapter, {}).get("compiled", True):
                problems.append(f"{student}: {chapter} compiled, expected a build error")
        for flag in expect.get("flags", []):
            if no_gpu and "did not come from the grader" in flag:
                continue  # raised by what the graders send, and without a GPU they send nothing
            if not any(flag in f for f in summary["flags"]):
                problems.append(f"{student}: no flag saying '{flag}' (flags: {summary['flags']})")
        if not expect.get("flags") and summary["flags"] and not summary["error"]:
            problems.append(f"{student}: unexpected flags {summary['flags']}")
        if summary["course"]["grading_hash"] != json.loads((folder / "batch.json").read_text())["course"]["grading_hash"]:
            problems.append(f"{student}: graded with other graders than the batch's")
    for p in problems:
        print("MISMATCH " + p)
    print(f"{len(expected['students'])} students, {checked} exercise verdicts checked, {len(problems)} mismatches")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
