"""Host test: python3 check_exercise_ids.py GRADER EXERCISE...

The exercises meson.build lists for a chapter are exactly its grader's test cases, in both
directions (the grading data is compared with meson.build by check_thresholds.py).
"""
import subprocess
import sys

grader, listed = sys.argv[1], sys.argv[2:]
out = subprocess.run([grader, "--list-test-cases"], capture_output=True, text=True).stdout.splitlines()
rule = [i for i, line in enumerate(out) if line.startswith("=====")]
cases = [line.strip() for line in out[rule[0] + 1:rule[1]]] if len(rule) >= 2 else []
problems = [f"test case {c} is not in meson.build's exercises" for c in cases if c not in listed]
problems += [f"exercise {e} of meson.build has no test case in {grader}" for e in listed if e not in cases]
print("\n".join(problems) or f"{len(cases)} exercises, the same in meson.build and the grader")
sys.exit(1 if problems or not cases else 0)
