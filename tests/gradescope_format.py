"""Gradescope's results.json format, as its autograder specification gives it, as a checker.

    problems(results) -> a list of what does not follow the format (empty: it validates)

Top level: score (number; required unless every test has one), execution_time (number, seconds),
output, output_format, test_output_format, test_name_format, visibility, stdout_visibility,
extra_data, tests (a list), leaderboard (a list). A test: score, max_score (numbers), status
("passed" or "failed"), name, name_format, number (a string such as "1.2"), output, output_format,
tags (a list of strings), visibility, extra_data. A leaderboard entry: name, value (number or
string), order ("asc" or "desc"). Nothing else is allowed.
"""
import numbers

VISIBILITY = {"visible", "hidden", "after_due_date", "after_published"}
FORMATS = {"text", "html", "simple_format", "md", "ansi"}
TOP = {"score": numbers.Number, "execution_time": numbers.Number, "output": str, "output_format": str,
       "test_output_format": str, "test_name_format": str, "visibility": str, "stdout_visibility": str,
       "extra_data": dict, "tests": list, "leaderboard": list}
TEST = {"score": numbers.Number, "max_score": numbers.Number, "status": str, "name": str, "name_format": str,
        "number": str, "output": str, "output_format": str, "tags": list, "visibility": str, "extra_data": dict}
ENTRY = {"name": str, "value": (numbers.Number, str), "order": str}


def fields(where, record, allowed):
    if not isinstance(record, dict):
        return [f"{where} is not an object"]
    out = [f"{where}: unknown field {k!r}" for k in record if k not in allowed]
    out += [f"{where}.{k} is {type(v).__name__}, not {allowed[k]}" for k, v in record.items()
            if k in allowed and (not isinstance(v, allowed[k]) or isinstance(v, bool))]
    for key in ("visibility", "stdout_visibility"):
        if key in record and record[key] not in VISIBILITY:
            out.append(f"{where}.{key} is {record[key]!r}, not one of {sorted(VISIBILITY)}")
    for key in ("output_format", "test_output_format", "test_name_format", "name_format"):
        if key in record and record[key] not in FORMATS:
            out.append(f"{where}.{key} is {record[key]!r}, not one of {sorted(FORMATS)}")
    return out


def problems(results):
    out = fields("results", results, TOP)
    if out and not isinstance(results, dict):
        return out
    tests = results.get("tests", [])
    if "score" not in results and not all(isinstance(t, dict) and "score" in t for t in tests):
        out.append("results: no score, and not every test has one")
    for i, test in enumerate(tests):
        where = f"tests[{i}]"
        out += fields(where, test, TEST)
        if isinstance(test, dict):
            if test.get("status", "passed") not in ("passed", "failed"):
                out.append(f"{where}.status is {test['status']!r}")
            if "score" in test and "max_score" in test and test["score"] > test["max_score"] + 1e-9:
                out.append(f"{where}: score above max_score")
            if not all(isinstance(t, str) for t in test.get("tags", [])):
                out.append(f"{where}.tags holds something other than strings")
    for i, entry in enumerate(results.get("leaderboard", [])):
        where = f"leaderboard[{i}]"
        out += fields(where, entry, ENTRY)
        if isinstance(entry, dict):
            if "name" not in entry or "value" not in entry:
                out.append(f"{where} needs a name and a value")
            if entry.get("order", "desc") not in ("asc", "desc"):
                out.append(f"{where}.order is {entry['order']!r}")
    return out
