#!/usr/bin/env python3
"""Runs the self-check several times in a row and prints the spread of what it measured.

    grader/selfcheck_rounds.py --builddir build --rounds 5 [--suite selfcheck-03_reduction ...]

Each round is `meson test --setup selfcheck` (every reference solution, every untouched skeleton, the
host tests). After each round the reference's results are read: the verdict of every exercise, the
ratio of every speed check (the reference raced against itself) and the figures beside it. At the
end: a line per speed check with the ratio's range over the rounds and the figures' ranges; the
rounds whose verdicts differ from the first; and how long the reference solutions took to grade.
For instructors tuning thresholds, and for the maintainers' closing notes.
"""
import argparse
import json
import shutil
import pathlib
import subprocess
import sys
import time


def read_round(results):
    verdicts, speed = {}, {}
    for path in sorted(results.glob("*/*.json")):
        r = json.loads(path.read_text())
        name = f"{r['chapter']}/{r['exercise']}"
        verdicts[name] = r["status"]
        for c in r.get("checks", []):
            if "value" in c:
                speed[f"{name}/{c['key']}"] = {"ratio": c["value"], **{f["name"]: f["value"] for f in c.get("figures", [])}}
    return verdicts, speed


def spread(values):
    lo, hi = min(values), max(values)
    f = (lambda v: f"{v:.0f}") if hi >= 100 else (lambda v: f"{v:.3g}")
    return f(lo) if f(lo) == f(hi) else f"{f(lo)}-{f(hi)}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--builddir", type=pathlib.Path, default=pathlib.Path("build"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--suite", action="append", default=[], help="limit to these suites")
    parser.add_argument("--json", type=pathlib.Path, help="write every round's figures here")
    args = parser.parse_args()

    rounds, outcomes = [], []
    for k in range(args.rounds):
        cmd = ["meson", "test", "-C", str(args.builddir), "--setup", "selfcheck", "--no-rebuild", "--print-errorlogs"]
        cmd += [a for s in args.suite for a in ("--suite", s)]
        # Only this round's results: an earlier run's files for exercises outside the suites would
        # otherwise be read again every round.
        shutil.rmtree(args.builddir / "results" / "reference", ignore_errors=True)
        started = time.monotonic()
        run = subprocess.run(cmd, capture_output=True, text=True)
        seconds = time.monotonic() - started
        log = args.builddir / "meson-logs" / "testlog-selfcheck.json"
        results = [json.loads(line) for line in log.read_text().splitlines()]
        counts = {r: sum(1 for t in results if t["result"] == r) for r in ("OK", "FAIL", "SKIP", "TIMEOUT")}
        short = lambda t: t["name"].split(":")[-1]  # "suite+suite - project:solution/01_runtime/vector_add"
        solution_seconds = sum(t["duration"] for t in results if short(t).startswith("solution/"))
        verdicts, speed = read_round(args.builddir / "results" / "reference")
        rounds.append({"verdicts": verdicts, "speed": speed})
        outcomes.append(counts)
        failed = [short(t) for t in results if t["result"] not in ("OK", "SKIP", "EXPECTEDFAIL")]
        print(f"round {k + 1}: {counts['OK']} passed, {counts['FAIL'] + counts['TIMEOUT']} failed, {counts['SKIP']} "
              f"skipped in {seconds:.0f} s (grading the reference solutions took {solution_seconds:.1f} s)"
              + (f"; failed: {', '.join(failed)}" if failed else ""), flush=True)
        if run.returncode != 0 and failed:
            print("\n".join(line for line in run.stdout.splitlines() if "UNEVEN" in line or "FAIL" in line)[-3000:])

    print("\nspeed check: the reference against itself, over the rounds; then its figures")
    for check in sorted({c for r in rounds for c in r["speed"]}):
        seen = [r["speed"][check] for r in rounds if check in r["speed"]]
        figures = ", ".join(f"{name} {spread([s[name] for s in seen if name in s])}"
                            for name in seen[0] if name != "ratio")
        print(f"{check}: {spread([s['ratio'] for s in seen])} ({len(seen)} rounds); {figures}")
    differing = [k + 1 for k, r in enumerate(rounds) if r["verdicts"] != rounds[0]["verdicts"]]
    print("\nverdicts: " + ("identical in every round" if not differing else f"rounds {differing} differ from round 1"))
    if args.json:
        args.json.write_text(json.dumps({"rounds": rounds, "outcomes": outcomes}, indent=1))
    return 1 if differing or any(o["FAIL"] + o["TIMEOUT"] for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
