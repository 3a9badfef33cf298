#!/usr/bin/env python3
"""Writes one wrong submission: make_wrong.py NAME SOLUTION OUTPUT (see submissions.py).

make_wrong.py --list prints one line per submission: name, chapter, exercise, check (for meson).
"""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from submissions import SUBMISSIONS  # noqa: E402

if sys.argv[1] == "--list":
    for name, s in SUBMISSIONS.items():
        print(name, s["chapter"], s["exercise"], s["check"])
    sys.exit(0)

name, solution, output = sys.argv[1:4]
text = pathlib.Path(solution).read_text()
for old, new in SUBMISSIONS[name]["edits"]:
    if text.count(old) != 1:
        sys.exit(f"{name}: the solution {solution} no longer holds, once, the text to change:\n{old}")
    text = text.replace(old, new)
pathlib.Path(output).write_text(f"// Wrong on purpose: {SUBMISSIONS[name]['why']} (tests/wrong/submissions.py)\n" + text)
