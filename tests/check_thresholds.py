"""Host test of the grading data: python3 check_thresholds.py thresholds.json CHAPTER/EXERCISE...

Every exercise the build grades has an entry, and every entry is graded; its "read" link names a
section of the notes that exists; every speed threshold leaves the reference its margin
(threshold x reference_margin <= 1); and beside it stands what the reference measured, on which GPU
and when.
"""
import json
import pathlib
import re
import sys


def heading_anchors(notes):
    """The anchors a code host gives the headings of a Markdown file."""
    anchors = set()
    for line in notes.read_text().splitlines():
        if line.startswith("#"):
            text = line.lstrip("#").strip().lower()
            anchors.add(re.sub(r"[^\w\- ]", "", text).replace(" ", "-"))
    return anchors


def link_problem(root, link):
    path, _, anchor = link.partition("#")
    notes = root / path
    if not notes.is_file():
        return f"the notes {path} do not exist"
    if anchor and anchor not in heading_anchors(notes):
        return f"{path} has no section #{anchor}"
    return None


def problems(data, exercises, root):
    found = []
    margin = data["scoring"]["reference_margin"]
    for chapter, chapter_data in data["chapters"].items():
        for exercise in chapter_data["exercises"]:
            if f"{chapter}/{exercise}" not in exercises:
                found.append(f"{chapter}/{exercise}: in the data file but graded by no build target")
    for name in exercises:
        chapter, exercise = name.split("/")
        spec = data["chapters"].get(chapter, {}).get("exercises", {}).get(exercise)
        if spec is None:
            found.append(f"{name}: graded by the build but missing from the data file")
            continue
        if spec.get("read") and (problem := link_problem(root, spec["read"])):
            found.append(f"{name}: read: {problem}")
        for key, check in spec["checks"].items():
            if check.get("kind") != "speed":
                continue
            thresholds = [check["threshold"]] + list(check.get("threshold_by_cc", {}).values())
            if max(thresholds) * margin > 1 + 1e-9:
                found.append(f"{name}/{key}: threshold {max(thresholds)} x the margin {margin} is over 1: "
                             "the reference would not keep its margin")
            measured = check.get("reference") or []
            if not measured or not all(m.get(k) for m in measured for k in ("gpu", "date", "against itself")):
                found.append(f"{name}/{key}: what the reference measured (against itself, and the GPU and date) "
                             "must be recorded")
    found += prose_problems(data, root)
    return found


def prose_problems(data, root):
    """The READMEs and notes quote the threshold as "0.8 × the reference": it must be the data's."""
    thresholds = {c["threshold"] for ch in data["chapters"].values() for ex in ch["exercises"].values()
                  for c in ex["checks"].values() if c.get("kind") == "speed"}
    found = []
    for path in [root / "README.md", *sorted(root.glob("chapters/*/README.md")), *sorted(root.glob("notes/*.md"))]:
        for quoted in re.findall(r"(\d+(?:\.\d+)?) × the reference", path.read_text()):
            if float(quoted) not in thresholds:
                found.append(f"{path.relative_to(root)}: quotes {quoted} × the reference, but the data file's "
                             f"thresholds are {sorted(thresholds)}")
    return found


if __name__ == "__main__":
    thresholds = pathlib.Path(sys.argv[1])
    found = problems(json.loads(thresholds.read_text()), sys.argv[2:], thresholds.resolve().parent.parent)
    print("\n".join(found) or f"{len(sys.argv) - 2} exercises: grading data complete")
    sys.exit(1 if found else 0)
