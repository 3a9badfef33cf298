#!/usr/bin/env python3
"""Turns the graders' results files into report.md, report.html and a Gradescope results.json.

    report.py --results build/results/grade --thresholds grader/thresholds.json --out build/report

The results folder holds <chapter>/<exercise>.json (written by the graders) and, for a chapter
that did not compile, <chapter>/build_error.txt (written by ./grade). Only chapters with a folder
there are reported; every exercise the grading data lists for them appears, run or not.
"""
import argparse
import datetime
import html
import json
import pathlib
import sys

STATUS_TEXT = {
    "passed": "passed",
    "failed": "FAILED",
    "error": "ERROR",
    "timeout": "TIMEOUT",
    "skipped": "skipped",
    "running": "CRASHED",
    "not run": "not run",
    "build error": "DID NOT COMPILE",
}


def status_text(ex):
    """The verdict as shown. A reference solution that fails the self-check is not a student who
    lost points: say what it is."""
    if ex.get("mode") == "reference" and ex["status"] == "failed":
        return "SELF-CHECK FAILED"
    return STATUS_TEXT.get(ex["status"], ex["status"])


def load_chapters(results_dir, thresholds):
    """One entry per chapter found in the results folder, with every exercise of the data file."""
    chapters = []
    for name, chapter in thresholds["chapters"].items():
        folder = results_dir / name
        if not folder.is_dir():
            continue
        build_error_file = folder / "build_error.txt"
        build_error = build_error_file.read_text(errors="replace") if build_error_file.exists() else None
        exercises = []
        for ex_id, spec in chapter["exercises"].items():
            exercises.append(load_exercise(folder, name, ex_id, spec, build_error))
        chapters.append({"name": name, "title": chapter.get("title", name), "build_error": build_error,
                         "exercises": exercises})
    return chapters


def load_exercise(folder, chapter, ex_id, spec, build_error):
    max_points = sum(c["points"] for c in spec["checks"].values())
    path = folder / (ex_id + ".json")
    if path.exists() and build_error is None:
        result = json.loads(path.read_text())
        if result["status"] == "running":
            result["message"] = "the grader died during this exercise (a crash, or it was killed)"
        return result
    return {
        "chapter": chapter, "exercise": ex_id, "title": spec["title"], "read": spec.get("read", ""),
        "status": "build error" if build_error is not None else "not run",
        "message": "the chapter did not compile" if build_error is not None else "no result: the exercise was not run",
        "checks": [], "points": 0.0, "max_points": max_points, "device": None,
        "scores": [{"key": k, "points": 0.0, "max_points": c["points"]} for k, c in spec["checks"].items()],
    }


def first_device(chapters):
    for ch in chapters:
        for ex in ch["exercises"]:
            if ex.get("device"):
                return ex["device"]
    return None


def device_text(chapters):
    device = first_device(chapters)
    if not device:
        return "none recorded"
    return (f"{device['name']} (compute capability {device['compute_capability']}, {device['sms']} SMs, "
            f"driver for CUDA {device.get('driver_cuda_version', '?')}, "
            f"runtime {device.get('runtime_cuda_version', '?')})")


def totals(chapters):
    """Points and maximum; an exercise skipped here (it needs a newer GPU, say) counts in neither."""
    exercises = [ex for ch in chapters for ex in ch["exercises"] if ex["status"] != "skipped"]
    return sum(ex["points"] for ex in exercises), sum(ex["max_points"] for ex in exercises)


def figures_tables(chapter):
    """The figures the chapter's speed checks measured (GB/s, % of CUB...), as tables of
    (columns, rows): a row per speed check that has any (named by its exercise, and by the check
    where the exercise has several), a column per figure. Consecutive rows with the same figures
    share a table (a ladder of steps); others get their own."""
    tables = []
    for ex in chapter["exercises"]:
        measured = [c for c in ex.get("checks", []) if c.get("figures")]
        for c in measured:
            values = {f["name"]: f["value"] for f in c["figures"]}
            label = ex["title"] if len(measured) == 1 else f"{ex['title']}: {c['key']}"
            columns = list(values)
            if tables and tables[-1][0] == columns:
                tables[-1][1].append((label, values))
            else:
                tables.append((columns, [(label, values)]))
    return tables


def fmt(value):
    if value is None:
        return ""
    return f"{value:.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def check_value(check):
    if "value" not in check:
        return ""
    return f"{fmt(check['value'])} (threshold {fmt(check.get('threshold'))})"


# ---- History: one small record per ./grade run -------------------------------------------------------

HISTORY_SHOWN = 8  # the last attempts shown per exercise


def key_figure(ex):
    """The exercise's first speed figure (the reference's time over yours), or None."""
    return next((c["value"] for c in ex.get("checks", []) if "value" in c and "threshold" in c), None)


def record_history(chapters, folder):
    """Adds this run to the history folder: per exercise run, its status, points and key figure."""
    folder.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now()
    device = first_device(chapters) or {}
    record = {"time": now.isoformat(timespec="seconds"), "gpu": device.get("name", ""), "exercises": {
        f"{ch['name']}/{ex['exercise']}": {"status": ex["status"], "points": round(ex["points"], 3),
                                           "max_points": ex["max_points"], "figure": key_figure(ex)}
        for ch in chapters for ex in ch["exercises"] if ex["status"] not in ("not run",)}}
    (folder / f"{now:%Y%m%d-%H%M%S-%f}.json").write_text(json.dumps(record) + "\n")


def load_history(folder):
    """The runs recorded, oldest first (unreadable files are left out)."""
    runs = []
    for path in sorted(folder.glob("*.json")) if folder else []:
        try:
            runs.append(json.loads(path.read_text()))
        except ValueError:
            continue
    return runs


def history_rows(chapter, runs):
    """(times, [(exercise title, [cell or None per time])]) over the chapter's last attempts, where
    a cell is (status, points, max_points, figure). Empty when the chapter was graded once or never."""
    keys = [f"{chapter['name']}/{ex['exercise']}" for ex in chapter["exercises"]]
    runs = [r for r in runs if any(k in r["exercises"] for k in keys)][-HISTORY_SHOWN:]
    if len(runs) < 2:
        return [], []
    rows = []
    for ex, key in zip(chapter["exercises"], keys):
        cells = []
        for r in runs:
            e = r["exercises"].get(key)
            cells.append((e["status"], e["points"], e["max_points"], e.get("figure")) if e else None)
        rows.append((ex["title"], cells))
    return [r["time"][5:16].replace("T", " ") for r in runs], rows


def history_cell(cell):
    if cell is None:
        return ""
    status, points, most, figure = cell
    return f"{points:g}/{most:g}" + (f" ({fmt(figure)})" if figure is not None else "")


# ---- Markdown ----------------------------------------------------------------------------------

def markdown(chapters, title, notes=(), history=()):
    out = [f"# {title}", "", f"Generated {datetime.datetime.now():%Y-%m-%d %H:%M}. GPU: {device_text(chapters)}.", ""]
    if notes:
        out += ["**Flagged:**", ""] + [f"- {n}" for n in notes] + [""]
    out += ["| chapter | exercise | status | points |", "|---|---|---|---|"]
    for ch in chapters:
        for ex in ch["exercises"]:
            out.append(f"| {ch['name']} | {ex['title']} | {status_text(ex)} | "
                       f"{ex['points']:g} / {ex['max_points']:g} |")
    total, total_max = totals(chapters)
    out += [f"| **total** | | | **{total:g} / {total_max:g}** |", ""]
    for ch in chapters:
        out += [f"## {ch['name']}: {ch['title']}", ""]
        times, rows = history_rows(ch, history)
        if rows:
            out += ["Your last attempts (points, and in brackets the speed figure: the reference's time over yours):",
                    "", "| exercise | " + " | ".join(times) + " |", "|---|" + "---|" * len(times)]
            out += [f"| {t} | " + " | ".join(history_cell(c) for c in cells) + " |" for t, cells in rows]
            out.append("")
        if ch["build_error"] is not None:
            out += ["The chapter did not compile. The compiler said:", "", "```", ch["build_error"].strip()[-4000:], "```", ""]
        for columns, rows in figures_tables(ch):
            out += ["Measured figures:", "", "| exercise | " + " | ".join(columns) + " |",
                    "|---|" + "---|" * len(columns)]
            out += [f"| {title} | " + " | ".join(fmt(values.get(c)) for c in columns) + " |" for title, values in rows]
            out.append("")
        for ex in ch["exercises"]:
            out.append(f"### {ex['title']}: {status_text(ex)}, "
                       f"{ex['points']:g} / {ex['max_points']:g} points")
            out.append("")
            if ex.get("message"):
                out += [ex["message"], ""]
            for t in ex.get("timelines", []):
                ops = t.get("ops", [])
                if ops:
                    out += [f"Timeline {t.get('title', '')}: {len(ops)} operations on "
                            f"{max(op['stream'] for op in ops) + 1} streams over {max(op['end_ms'] for op in ops):.2f} ms "
                            "(drawn in report.html).", ""]
            shown, passed = split_checks(ex.get("checks", []))
            def rows(checks):
                lines = ["| check | case | status | measured | message |", "|---|---|---|---|---|"]
                for c in checks:
                    msg = c.get("message", "").replace("\n", "<br>").replace("|", "\\|")
                    lines.append(f"| {c['key']} | {c.get('label', '')} | {c['status']} | {check_value(c)} | {msg} |")
                return lines + [""]
            if shown:
                out += rows(shown)
            if passed:  # folded: GitHub and most Markdown viewers open it on a click
                out += [f"<details><summary>{passed_summary(passed)}</summary>", ""] + rows(passed) + ["</details>", ""]
            if ex["status"] != "passed" and ex.get("read"):
                out += [f"Read: `{ex['read']}`", ""]
            if ex.get("seed") is not None and ex["status"] not in ("not run", "build error", "skipped"):
                out += [f"Seed {ex['seed']}, {ex.get('seconds', 0):.2f} s.", ""]
    return "\n".join(out) + "\n"


# ---- HTML ----------------------------------------------------------------------------------------

CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 72em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
.passed { color: #137333; font-weight: 600; }
.bad { color: #b3261e; font-weight: 600; }
.skipped { color: #777; }
pre { background: #f6f6f6; padding: 0.8em; overflow-x: auto; white-space: pre-wrap; }
td.msg { white-space: pre-wrap; font-family: ui-monospace, monospace; font-size: 0.85em; }
div.wide { overflow-x: auto; }
div.flagged { background: #fdecea; border: 1px solid #b3261e; padding: 0.3em 1em; margin: 1em 0; }
"""


def status_class(status):
    return "passed" if status == "passed" else "skipped" if status in ("skipped", "not run") else "bad"


def split_checks(checks):
    """The checks to show, failures first, then skips; and the passed ones, folded into one line."""
    shown = [c for c in checks if c["status"] == "failed"] + [c for c in checks if c["status"] not in ("failed", "passed")]
    return shown, [c for c in checks if c["status"] == "passed"]


def passed_summary(passed):
    """"12 checks passed (correct 11, speed 1)"."""
    counts = {}
    for c in passed:
        counts[c["key"]] = counts.get(c["key"], 0) + 1
    parts = ", ".join(f"{key} {n}" for key, n in counts.items())
    return f"{len(passed)} check{'s' if len(passed) != 1 else ''} passed ({parts})"


def speed_bars(checks):
    """One bar per speed check: the measured ratio against its threshold (the dark line)."""
    speed = [c for c in checks if "value" in c and "threshold" in c]
    if not speed:
        return ""
    width, row, left, bar_area = 1000, 34, 150, 440  # room right of the bars for their labels
    scale_max = max(max(c["value"], c["threshold"]) for c in speed) * 1.1
    x = lambda v: left + bar_area * v / scale_max
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{row * len(speed) + 10}" '
             f'role="img" aria-label="measured speed against thresholds">']
    for i, c in enumerate(speed):
        y = 5 + i * row
        colour = "#34a853" if c["value"] >= c["threshold"] else "#ea4335"
        label = html.escape(c["key"] + (" " + c["label"] if c.get("label") else ""))
        parts.append(f'<text x="0" y="{y + 18}" font-size="13">{label}</text>')
        parts.append(f'<rect x="{left}" y="{y + 4}" width="{x(c["value"]) - left:.1f}" height="20" fill="{colour}"/>')
        parts.append(f'<line x1="{x(c["threshold"]):.1f}" x2="{x(c["threshold"]):.1f}" y1="{y}" y2="{y + 28}" '
                     f'stroke="#222" stroke-width="2"/>')
        parts.append(f'<text x="{x(c["value"]) + 4:.1f}" y="{y + 18}" font-size="12">{fmt(c["value"])} '
                     f'{html.escape(c.get("unit", ""))} (threshold {fmt(c["threshold"])})</text>')
    parts.append("</svg>")
    return "".join(parts)


def contenders(check):
    """A speed check's race, side by side: your figure and those of the reference and the baselines in
    the same measure ("ms", "GB/s", "us per kernel"...), as (name, value). The first figure is yours;
    the others are named "<contender> <measure>"."""
    figures = [f for f in check.get("figures", []) if f.get("value") is not None]
    if not figures:
        return []
    measure = figures[0]["name"]
    rows = [("yours", figures[0]["value"])]
    rows += [(f["name"][:-len(measure) - 1], f["value"]) for f in figures[1:] if f["name"].endswith(" " + measure)]
    return rows if len(rows) > 1 else []


def contenders_svg(checks):
    """For each speed check, a bar per contender of its race: where yours stands among the reference
    and the baselines the chapter teaches."""
    parts = []
    for c in checks:
        rows = contenders(c)
        if not rows:
            continue
        measure = c["figures"][0]["name"]
        width, row, left, bar_area = 1000, 22, 190, 440
        top = max(v for _, v in rows) or 1
        parts.append(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{row * len(rows) + 6}" '
                     f'font-size="12" role="img" aria-label="the race, contender by contender">')
        for i, (name, value) in enumerate(rows):
            y = 3 + i * row
            colour = "#4285f4" if name == "yours" else "#9aa0a6" if name != "reference" else "#5f6368"
            parts.append(f'<text x="0" y="{y + 14}">{html.escape(name)}</text>'
                         f'<rect x="{left}" y="{y + 2}" width="{bar_area * value / top:.1f}" height="15" fill="{colour}"/>'
                         f'<text x="{left + bar_area * value / top + 4:.1f}" y="{y + 14}">{fmt(value)} '
                         f'{html.escape(measure)}</text>')
        parts.append("</svg>")
    return "".join(parts)


TIMELINE_COLORS = {"copy in": "#4285f4", "compute": "#34a853", "copy out": "#f29900"}


def timeline_svg(timeline):
    """A stream per row, an operation per bar, time left to right: where bars of different
    streams stand one above the other, the GPU ran those operations at once."""
    ops = timeline.get("ops", [])
    if not ops:
        return ""
    streams = max(op["stream"] for op in ops) + 1
    end = max(op["end_ms"] for op in ops) or 1
    left, width, row, top = 80, 820, 14, 24
    height = top + streams * row + 30
    x = lambda ms: left + width * ms / end
    parts = [f'<p>Timeline: {html.escape(timeline.get("title", ""))}, {end:.2f} ms. A bar runs from the event '
             'recorded before its operation to the one after it: time spent waiting for a busy copy engine or '
             'for room on the SMs is inside the bar.</p>',
             f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 40}" height="{height}" font-size="11">']
    legend_x = left
    for kind, color in TIMELINE_COLORS.items():
        parts.append(f'<rect x="{legend_x}" y="4" width="12" height="10" fill="{color}"/>'
                     f'<text x="{legend_x + 16}" y="13">{kind}</text>')
        legend_x += 90
    for s in range(streams):
        parts.append(f'<text x="0" y="{top + s * row + row - 4}">stream {s}</text>')
    for op in ops:
        color = TIMELINE_COLORS.get(op["kind"], "#888")
        y = top + op["stream"] * row
        w = max(x(op["end_ms"]) - x(op["start_ms"]), 0.5)
        parts.append(f'<rect x="{x(op["start_ms"]):.1f}" y="{y + 1}" width="{w:.1f}" height="{row - 3}" fill="{color}">'
                     f'<title>{html.escape(op["kind"])}: {op["start_ms"]:.3f} to {op["end_ms"]:.3f} ms</title></rect>')
    axis_y = top + streams * row + 4
    parts.append(f'<line x1="{left}" y1="{axis_y}" x2="{left + width}" y2="{axis_y}" stroke="#999"/>')
    step = next(v for v in (0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 1e9) if end / v <= 12)
    t = 0.0
    while t <= end + 1e-9:
        parts.append(f'<line x1="{x(t):.1f}" y1="{axis_y}" x2="{x(t):.1f}" y2="{axis_y + 4}" stroke="#999"/>'
                     f'<text x="{x(t) - 8:.1f}" y="{axis_y + 16}">{t:g} ms</text>')
        t += step
    parts.append("</svg>")
    return "".join(parts)


LADDER_COLOURS = ["#4285f4", "#5f6368", "#fbbc04", "#34a853", "#9aa0a6", "#ea4335"]


def ladder_svg(columns, rows):
    """A table's rows side by side as groups of bars, one bar per contender in the table's measure:
    yours, the reference's and each baseline's (the reduction's ladder: GB/s per step beside the
    reference and CUB; the graphs' cost per kernel beside each way of launching). Empty when the
    table has a single row or no contender."""
    measure = columns[0]
    contenders = [c for c in columns[1:] if c.endswith(" " + measure)]
    if len(rows) < 2 or not contenders:
        return ""
    series = [("yours", measure)] + [(c[:-len(measure) - 1], c) for c in contenders]
    top = max((values.get(col) or 0) for _, values in rows for _, col in series) or 1
    bar, gap, height, left = 14, 18, 160, 40
    group = bar * len(series) + gap
    width = left + group * len(rows) + 10
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height + 80}" font-size="11" '
             f'role="img" aria-label="{html.escape(measure)}, contender by contender">']
    for i, (name, _) in enumerate(series):  # the legend
        parts.append(f'<rect x="{left + 110 * i}" y="2" width="10" height="10" fill="{LADDER_COLOURS[i % 6]}"/>'
                     f'<text x="{left + 110 * i + 14}" y="11">{html.escape(name)}</text>')
    base = height + 20
    parts.append(f'<text x="0" y="30">{html.escape(measure)}</text><text x="0" y="{base}">0</text>'
                 f'<text x="0" y="44">{fmt(top)}</text>')
    for r, (title, values) in enumerate(rows):
        x0 = left + r * group
        for i, (name, col) in enumerate(series):
            value = values.get(col)
            if value is None:
                continue
            h = (height - 24) * value / top
            parts.append(f'<rect x="{x0 + i * bar}" y="{base - h:.1f}" width="{bar - 2}" height="{h:.1f}" '
                         f'fill="{LADDER_COLOURS[i % 6]}"><title>{html.escape(title)}, {html.escape(name)}: '
                         f'{fmt(value)} {html.escape(measure)}</title></rect>')
        label = title.split(".")[0] if title[:1].isdigit() else title[:12]
        parts.append(f'<text x="{x0}" y="{base + 14}">{html.escape(label)}</text>')
    parts.append(f'<line x1="{left - 4}" y1="{base}" x2="{width}" y2="{base}" stroke="#999"/></svg>')
    return "".join(parts)


def figures_html(chapter):
    """The figures tables; each table's first column also drawn as a bar, scaled to its largest value,
    and a table of several rows drawn as a ladder beside the reference and the baselines."""
    out = []
    for columns, rows in figures_tables(chapter):
        top = max((values.get(columns[0]) or 0) for _, values in rows) or 1
        out.append("<p>Measured figures:</p><div class='wide'><table><tr><th>exercise</th>" +
                   "".join(f"<th>{html.escape(c)}</th>" for c in columns) + "</tr>")
        for title, values in rows:
            first = values.get(columns[0]) or 0
            bar = (f"<div style='background:#4285f4;height:0.8em;width:{8 * first / top:.2f}em;"
                   f"display:inline-block;margin-right:0.4em'></div>")
            out.append(f"<tr><td>{html.escape(title)}</td><td style='white-space:nowrap'>{bar}{fmt(values.get(columns[0]))}</td>" +
                       "".join(f"<td>{fmt(values.get(c))}</td>" for c in columns[1:]) + "</tr>")
        out.append("</table></div>")
        out.append(ladder_svg(columns, rows))
    return "".join(out)


def history_html(chapter, runs):
    """The chapter's last attempts: a row per exercise, a column per run, each cell shaded by the share
    of the points it earned."""
    times, rows = history_rows(chapter, runs)
    if not rows:
        return ""
    esc = html.escape
    out = ["<details open><summary>Your last attempts: points, and in brackets the speed figure "
           "(the reference's time over yours)</summary><div class='wide'><table><tr><th>exercise</th>" +
           "".join(f"<th>{esc(t)}</th>" for t in times) + "</tr>"]
    for title, cells in rows:
        out.append(f"<tr><td>{esc(title)}</td>")
        for cell in cells:
            share = cell[1] / cell[2] if cell and cell[2] else 0
            shade = f"hsl({120 * share:.0f}, 60%, 88%)" if cell else "#fff"
            out.append(f"<td style='background:{shade}'>{esc(history_cell(cell))}</td>")
        out.append("</tr>")
    out.append("</table></div></details>")
    return "".join(out)


def html_report(chapters, title, notes=(), history=()):
    e = html.escape
    body = [f"<h1>{e(title)}</h1>",
            f"<p>Generated {datetime.datetime.now():%Y-%m-%d %H:%M}. GPU: {e(device_text(chapters))}.</p>"]
    if notes:
        body.append("<div class='flagged'><b>Flagged:</b><ul>" + "".join(f"<li>{e(n)}</li>" for n in notes) +
                    "</ul></div>")
    body += ["<table><tr><th>chapter</th><th>exercise</th><th>status</th><th>points</th></tr>"]
    for ch in chapters:
        for ex in ch["exercises"]:
            body.append(f"<tr><td>{e(ch['name'])}</td><td><a href='#{e(ch['name'])}-{e(ex['exercise'])}'>"
                        f"{e(ex['title'])}</a></td><td class='{status_class(ex['status'])}'>"
                        f"{e(status_text(ex))}</td>"
                        f"<td>{ex['points']:g} / {ex['max_points']:g}</td></tr>")
    total, total_max = totals(chapters)
    body.append(f"<tr><th>total</th><th></th><th></th><th>{total:g} / {total_max:g}</th></tr></table>")
    for ch in chapters:
        body.append(f"<h2>{e(ch['name'])}: {e(ch['title'])}</h2>")
        if ch["build_error"] is not None:
            body.append(f"<p class='bad'>The chapter did not compile. The compiler said:</p>"
                        f"<pre>{e(ch['build_error'].strip()[-4000:])}</pre>")
        body.append(history_html(ch, history))
        body.append(figures_html(ch))
        for ex in ch["exercises"]:
            body.append(f"<h3 id='{e(ch['name'])}-{e(ex['exercise'])}'>{e(ex['title'])}: "
                        f"<span class='{status_class(ex['status'])}'>{e(status_text(ex))}"
                        f"</span>, {ex['points']:g} / {ex['max_points']:g} points</h3>")
            if ex.get("message"):
                body.append(f"<p>{e(ex['message'])}</p>")
            body.append(speed_bars(ex.get("checks", [])))
            body.append(contenders_svg(ex.get("checks", [])))
            body += [timeline_svg(t) for t in ex.get("timelines", [])]
            shown, passed = split_checks(ex.get("checks", []))
            def table(checks):
                rows = ["<table><tr><th>check</th><th>case</th><th>status</th><th>measured</th><th>message</th></tr>"]
                for c in checks:
                    rows.append(f"<tr><td>{e(c['key'])}</td><td>{e(c.get('label', ''))}</td>"
                                f"<td class='{status_class(c['status'])}'>{e(c['status'])}</td>"
                                f"<td>{e(check_value(c))}</td><td class='msg'>{e(c.get('message', ''))}</td></tr>")
                return "".join(rows) + "</table>"
            if shown:
                body.append(table(shown))
            if passed:  # one line that opens on a click
                body.append(f"<details><summary class='passed'>{e(passed_summary(passed))}</summary>{table(passed)}</details>")
            if ex["status"] != "passed" and ex.get("read"):
                body.append(f"<p>Read: <code>{e(ex['read'])}</code></p>")
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{e(title)}</title>"
            f"<style>{CSS}</style></head><body>{''.join(body)}</body></html>\n")


# ---- Gradescope ----------------------------------------------------------------------------------
# The format of /autograder/results/results.json, as Gradescope's autograder specification gives it:
# a test per exercise (score, max_score, status, name, number, output, visibility), the submission's
# score and execution_time, and a leaderboard of the speed figures.

def gradescope(chapters, notes=(), visibility="visible"):
    tests, leaderboard, seconds = [], [], 0.0
    for ch_number, ch in enumerate(chapters, 1):
        number = ch["name"].split("_")[0].lstrip("0") or str(ch_number)
        for ex_number, ex in enumerate(ch["exercises"], 1):
            seconds += ex.get("seconds") or 0
            lines = [ex.get("message") or ""]
            lines += [f"{c['key']} [{c.get('label', '')}]: {c['status']} {c.get('message', '')}".rstrip()
                      for c in ex.get("checks", []) if c["status"] != "passed"]
            passed = [c for c in ex.get("checks", []) if c["status"] == "passed"]
            if passed:
                lines.append(passed_summary(passed))
            if ex["status"] != "passed" and ex.get("read"):
                lines.append("Read: " + ex["read"])
            skipped = ex["status"] == "skipped"  # cannot run on this GPU: not held against the maximum
            tests.append({"name": f"{ch['name']}/{ex['exercise']}: {ex['title']}", "number": f"{number}.{ex_number}",
                          "score": 0.0 if skipped else round(ex["points"], 3),
                          "max_score": 0.0 if skipped else ex["max_points"],
                          "status": "passed" if ex["status"] in ("passed", "skipped") else "failed",
                          "output": "\n".join(line for line in lines if line), "visibility": visibility})
            correct = all(c["status"] == "passed" for c in ex.get("checks", []) if "value" not in c)
            for c in ex.get("checks", []):
                if correct and ex["status"] in ("passed", "failed") and "value" in c and "threshold" in c:
                    leaderboard.append({"name": f"{ch['name']}/{ex['exercise']} {c['key']}",
                                        "value": round(c["value"], 4), "order": "desc"})
    score = round(sum(t["score"] for t in tests), 3)
    output = "Flagged:\n" + "\n".join("- " + n for n in notes) if notes else ""
    return {"score": score, "execution_time": round(seconds), "output": output, "visibility": visibility,
            "stdout_visibility": "hidden", "tests": tests,
            "leaderboard": [{"name": "points", "value": score, "order": "desc"}] + leaderboard}


def summary_table(chapters):
    rows = []
    for ch in chapters:
        for ex in ch["exercises"]:
            rows.append((ch["name"], ex["exercise"], status_text(ex),
                         f"{ex['points']:g}/{ex['max_points']:g}"))
    if not rows:
        return "no results found"
    widths = [max(len(r[i]) for r in rows + [("chapter", "exercise", "status", "points")]) for i in range(4)]
    line = lambda r: "  ".join(v.ljust(w) for v, w in zip(r, widths))
    total, total_max = totals(chapters)
    return "\n".join([line(("chapter", "exercise", "status", "points"))] + [line(r) for r in rows] +
                     [f"total: {total:g} / {total_max:g} points"])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", required=True, type=pathlib.Path, help="the graders' results folder")
    parser.add_argument("--thresholds", required=True, type=pathlib.Path, help="grader/thresholds.json")
    parser.add_argument("--out", required=True, type=pathlib.Path, help="where the reports go")
    parser.add_argument("--title", default="CUDA course: grading report")
    parser.add_argument("--note", action="append", default=[], help="a line shown at the top (a flag); repeatable")
    parser.add_argument("--history", type=pathlib.Path, help="a folder of earlier runs, shown per exercise")
    parser.add_argument("--record", action="store_true", help="add this run to the --history folder first")
    args = parser.parse_args(argv)

    thresholds = json.loads(args.thresholds.read_text())
    chapters = load_chapters(args.results, thresholds)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.record and args.history:
        record_history(chapters, args.history)
    history = load_history(args.history)
    (args.out / "report.md").write_text(markdown(chapters, args.title, args.note, history))
    (args.out / "report.html").write_text(html_report(chapters, args.title, args.note, history))
    (args.out / "results.json").write_text(json.dumps(gradescope(chapters, args.note), indent=2) + "\n")
    print(summary_table(chapters))
    print(f"report: {args.out / 'report.md'} (also report.html, results.json)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
