"""Host test of the grading data: python3 check_thresholds.py thresholds.json CHAPTER/EXERCISE...

Every exercise the build grades has an entry; its "read" link names a section of the notes that
exists; every speed threshold records what the reference measured, on which GPU and when; and that
measurement clears the threshold by the margin.
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
            ref = check.get("reference") or {}
            if not all(ref.get(k) for k in ("measured", "gpu", "date")):
                found.append(f"{name}/{key}: the reference's measurement, GPU and date must be recorded")
            elif ref["measured"] < margin * check["threshold"]:
                found.append(f"{name}/{key}: the reference measured {ref['measured']}, under {margin} x the "
                             f"threshold {check['threshold']}")
    return found


if __name__ == "__main__":
    thresholds = pathlib.Path(sys.argv[1])
    found = problems(json.loads(thresholds.read_text()), sys.argv[2:], thresholds.resolve().parent.parent)
    print("\n".join(found) or f"{len(sys.argv) - 2} exercises: grading data complete")
    sys.exit(1 if found else 0)
