"""Host test of the grading data: python3 check_thresholds.py thresholds.json CHAPTER/EXERCISE...

Every exercise the build grades has an entry; every speed threshold records what the reference
measured, on which GPU and when; and that measurement clears the threshold by the margin.
"""
import json
import sys


def problems(data, exercises):
    found = []
    margin = data["scoring"]["reference_margin"]
    for name in exercises:
        chapter, exercise = name.split("/")
        spec = data["chapters"].get(chapter, {}).get("exercises", {}).get(exercise)
        if spec is None:
            found.append(f"{name}: graded by the build but missing from the data file")
            continue
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
    found = problems(json.load(open(sys.argv[1])), sys.argv[2:])
    print("\n".join(found) or f"{len(sys.argv) - 2} exercises: grading data complete")
    sys.exit(1 if found else 0)
