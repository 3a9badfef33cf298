#!/usr/bin/env python3
"""The class roll-up: one CSV and one self-contained HTML page from a graded class folder.

    class_report.py --class build/class

Reads CLASS/students/NAME/summary.json and results/ (written by grade_class.py) and writes
CLASS/rollup.csv (a row per student and exercise: points, verdict, the speed figures, the message)
and CLASS/rollup.html: the class at a glance, each chapter's score distribution, the exercises most
students fail with the messages they got, the fastest correct solutions per speed check (the
figure graded is the reference's time over the student's, on the student's own GPU, so figures
from different GPUs compare), the flags, and a link to each student's own report.
"""
import argparse
import collections
import csv
import html
import json
import pathlib
import re
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import report  # noqa: E402

FAILED = ("failed", "error", "timeout", "running", "build error", "not run")


def totals(results, thresholds_file, chapter_names):
    """Points per chapter and in all, as the student's report counts them."""
    thresholds = json.loads(pathlib.Path(thresholds_file).read_text())
    chapters = [c for c in report.load_chapters(results, thresholds) if c["name"] in chapter_names]
    per_chapter = {}
    for ch in chapters:
        points, most = report.totals([ch])
        per_chapter[ch["name"]] = {"points": round(points, 3), "max_points": most,
                                   "compiled": ch["build_error"] is None}
    points, most = report.totals(chapters)
    return {"points": round(points, 3), "max_points": most, "chapters": per_chapter}


def load_class(folder):
    """[(summary, chapters as report.load_chapters gives them)] per graded student, by name."""
    students = []
    thresholds = json.loads((HERE / "thresholds.json").read_text())
    for summary_file in sorted((folder / "students").glob("*/summary.json")):
        summary = json.loads(summary_file.read_text())
        results = summary_file.parent / "results"
        chapters = [c for c in report.load_chapters(results, thresholds) if c["name"] in summary["chapters_graded"]]
        students.append((summary, chapters))
    return students


def speed_checks(ex):
    return [c for c in ex.get("checks", []) if "value" in c and "threshold" in c]


def figures_text(check):
    return "; ".join(f"{f['name']}={report.fmt(f['value'])}" for f in check.get("figures", []) if f.get("value") is not None)


# ---- CSV --------------------------------------------------------------------------------------------

COLUMNS = ["student", "chapter", "exercise", "status", "points", "max_points", "speed_check", "speed_value",
           "speed_threshold", "figures", "message", "gpu", "course_commit", "grading_hash", "flags"]


def csv_rows(students):
    for summary, chapters in students:
        for ch in chapters:
            for ex in ch["exercises"]:
                speed = speed_checks(ex)
                first = speed[0] if speed else {}
                yield {"student": summary["student"], "chapter": ch["name"], "exercise": ex["exercise"],
                       "status": ex["status"], "points": round(ex["points"], 3), "max_points": ex["max_points"],
                       "speed_check": first.get("key", ""), "speed_value": first.get("value", ""),
                       "speed_threshold": first.get("threshold", ""),
                       "figures": " | ".join(figures_text(c) for c in speed if figures_text(c)),
                       "message": (ex.get("message") or "").replace("\n", " ")[:500],
                       "gpu": summary["gpu"]["name"], "course_commit": summary["course"]["commit"],
                       "grading_hash": summary["course"]["grading_hash"], "flags": len(summary["flags"])}


# ---- HTML -------------------------------------------------------------------------------------------

CSS = report.CSS + """
.flag { color: #b3261e; }
.warn { background: #fdecea; border: 1px solid #b3261e; padding: 0.6em 1em; }
td.num { text-align: right; white-space: nowrap; }
"""


def histogram_svg(fractions, title):
    """Students per tenth of the chapter's points (the last bin holds full marks)."""
    bins = [0] * 11
    for f in fractions:
        bins[min(int(f * 10 + 1e-9), 10)] += 1
    top = max(bins) or 1
    width, height, bar = 440, 120, 36
    top_margin = 14  # room for the count above the tallest bar
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height + top_margin + 30}" font-size="11" '
             f'role="img" aria-label="{html.escape(title)}">']
    for i, n in enumerate(bins):
        h = height * n / top
        x = 4 + i * (bar + 3)
        parts.append(f'<rect x="{x}" y="{top_margin + height - h:.1f}" width="{bar}" height="{h:.1f}" '
                     f'fill="{"#34a853" if i == 10 else "#4285f4"}"><title>{n} students</title></rect>')
        if n:
            parts.append(f'<text x="{x + bar / 2 - 4}" y="{top_margin + height - h - 3:.1f}">{n}</text>')
        parts.append(f'<text x="{x + 2}" y="{top_margin + height + 16}">{"100" if i == 10 else f"{i * 10}+"}%</text>')
    parts.append("</svg>")
    return "".join(parts)


def most_failed(students):
    """[(chapter/exercise, title, students who did not pass, [(message, count)])], most first."""
    fails, titles, messages = collections.Counter(), {}, collections.defaultdict(collections.Counter)
    examples = collections.defaultdict(dict)  # one message as a student got it, per message shape
    for _, chapters in students:
        for ch in chapters:
            for ex in ch["exercises"]:
                key = f"{ch['name']}/{ex['exercise']}"
                titles[key] = ex["title"]
                if ex["status"] in FAILED:
                    fails[key] += 1
                    failed_checks = [c for c in ex.get("checks", []) if c["status"] == "failed"]
                    first = failed_checks[0] if failed_checks else None
                    said = first and (first.get("message") or (f"measured {report.fmt(first['value'])}, threshold "
                                                               f"{report.fmt(first.get('threshold'))}" if "value" in first
                                                               else first["status"]))
                    text = f"{first['key']}: {said}" if first else ex.get("message", "") or ex["status"]
                    text = text.split("\n")[0][:160]
                    shape = re.sub(r"-?\d+(\.\d+)?", "#", text)  # "returned -1, expected 950": one message
                    examples[key].setdefault(shape, text)
                    messages[key][shape] += 1
    return [(k, titles[k], n, [(examples[k][shape], count) for shape, count in messages[k].most_common(3)])
            for k, n in fails.most_common()]


def leaderboard(students, size=5):
    """{(chapter/exercise, check): [(value, student, gpu, figures)]}, fastest first, correct only."""
    boards = collections.defaultdict(list)
    for summary, chapters in students:
        for ch in chapters:
            for ex in ch["exercises"]:
                correct = all(c["status"] == "passed" for c in ex.get("checks", []) if "value" not in c)
                if not correct or ex["status"] in FAILED and ex["status"] != "failed":
                    continue
                for c in speed_checks(ex):
                    boards[(f"{ch['name']}/{ex['exercise']}", c["key"])].append(
                        (c["value"], summary["student"], summary["gpu"]["name"], figures_text(c)))
    return {k: sorted(v, key=lambda r: -r[0])[:size] for k, v in boards.items()}


def html_page(students):
    e = html.escape
    chapters = []
    for _, chs in students:
        chapters += [c["name"] for c in chs if c["name"] not in chapters]
    versions = collections.defaultdict(list)
    for summary, _ in students:
        versions[(summary["course"]["commit"], summary["course"]["grading_hash"])].append(summary["student"])
    body = [f"<h1>CUDA course: the class</h1><p>{len(students)} students graded.</p>"]
    if len(versions) > 1:
        body.append("<p class='warn'>These results were graded with different graders or grading data, so their "
                    "points do not compare: " + "; ".join(
                        f"commit {e(c)}, graders {e(h)}: {e(', '.join(names))}" for (c, h), names in versions.items())
                    + ".</p>")
    elif versions:
        (commit, grading_hash), = versions
        body.append(f"<p>Course commit {e(commit)}, graders and grading data {e(grading_hash)}.</p>")

    body.append("<h2>Students</h2><div class='wide'><table><tr><th>student</th><th>total</th>" +
                "".join(f"<th>{e(c)}</th>" for c in chapters) + "<th>GPU</th><th>flags</th></tr>")
    for summary, _ in students:
        link = f"students/{summary['student']}/report/report.html"
        cells = []
        for c in chapters:
            info = summary["chapters"].get(c)
            if info is None:
                cells.append("<td></td>")
            elif not info["compiled"]:
                cells.append("<td class='bad'>did not compile</td>")
            else:
                cells.append(f"<td class='num'>{info['points']:g} / {info['max_points']:g}</td>")
        flags = summary["flags"] + ([summary["error"]] if summary.get("error") else [])
        body.append(f"<tr><td><a href='{e(link)}'>{e(summary['student'])}</a></td>"
                    f"<td class='num'><b>{summary['points']:g} / {summary['max_points']:g}</b></td>{''.join(cells)}"
                    f"<td>{e(summary['gpu']['name'])}</td>"
                    f"<td class='flag'>{'<br>'.join(e(f) for f in flags[:4])}"
                    f"{f'<br>and {len(flags) - 4} more' if len(flags) > 4 else ''}</td></tr>")
    body.append("</table></div>")

    body.append("<h2>Score distributions</h2><p>Students per tenth of each chapter's points; green: full marks.</p>"
                "<div style='display:flex;flex-wrap:wrap;gap:1.5em'>")
    for c in chapters:
        fractions = [s["chapters"][c]["points"] / s["chapters"][c]["max_points"] for s, _ in students
                     if c in s["chapters"] and s["chapters"][c]["max_points"]]
        if fractions:
            mean = 100 * sum(fractions) / len(fractions)
            body.append(f"<div><h3>{e(c)}</h3><p>mean {mean:.0f}%</p>{histogram_svg(fractions, c)}</div>")
    body.append("</div>")

    body.append("<h2>Exercises most students do not pass</h2><table><tr><th>exercise</th><th>students</th>"
                "<th>what they were told (how many; messages that differ only in their numbers count as one)</th></tr>")
    for key, title, n, messages in most_failed(students)[:15]:
        said = "".join(f"<li>{e(m)} ({count})</li>" for m, count in messages)
        body.append(f"<tr><td>{e(key)}<br>{e(title)}</td><td class='num'>{n} / {len(students)}</td>"
                    f"<td><ul>{said}</ul></td></tr>")
    body.append("</table>")

    body.append("<h2>Fastest correct solutions</h2><p>The figure graded: the reference solution's time over the "
                "student's, both measured in the same run on the student's GPU (1 is as fast as the reference).</p>")
    for (exercise, check), rows in sorted(leaderboard(students).items()):
        body.append(f"<h3>{e(exercise)}: {e(check)}</h3><table><tr><th>#</th><th>student</th><th>speed</th>"
                    "<th>GPU</th><th>figures</th></tr>")
        for rank, (value, student, gpu, figures) in enumerate(rows, 1):
            body.append(f"<tr><td>{rank}</td><td>{e(student)}</td><td class='num'>{report.fmt(value)}</td>"
                        f"<td>{e(gpu)}</td><td>{e(figures)}</td></tr>")
        body.append("</table>")
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>CUDA course: the class</title>"
            f"<style>{CSS}</style></head><body>{''.join(body)}</body></html>\n")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--class", dest="folder", required=True, type=pathlib.Path, help="the class folder")
    args = parser.parse_args(argv)
    students = load_class(args.folder)
    with open(args.folder / "rollup.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(csv_rows(students))
    (args.folder / "rollup.html").write_text(html_page(students))
    print(f"class roll-up of {len(students)} students: {args.folder / 'rollup.html'} (also rollup.csv)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
