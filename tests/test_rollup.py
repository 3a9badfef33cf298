#!/usr/bin/env python3
"""Host tests of the class roll-up (grader/class_report.py) on a made-up class of chapter 01.

    test_rollup.py COURSE_ROOT               the CSV and the page's content
    test_rollup.py COURSE_ROOT --screenshot  the page in headless Chromium: a picture, not a blank

The screenshot is kept in build/rollup-screenshot.png when a build folder is named by
COURSE_SCREENSHOT_DIR; without Chromium (Debian's package chromium) the screenshot test reports
SKIP (exit code 77).
"""
import csv
import json
import os
import pathlib
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest
import zlib

ROOT = pathlib.Path(sys.argv.pop(1)).resolve()
SCREENSHOT = "--screenshot" in sys.argv
if SCREENSHOT:
    sys.argv.remove("--screenshot")
sys.path.insert(0, str(ROOT / "grader"))
import class_report  # noqa: E402

DATA = json.loads((ROOT / "grader" / "thresholds.json").read_text())
EXERCISES = DATA["chapters"]["01_runtime"]["exercises"]
GPU = {"name": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0", "sms": 132}


def exercise(name, passed, speed=None):
    spec = EXERCISES[name]
    most = sum(c["points"] for c in spec["checks"].values())
    checks = [{"key": "correct", "label": "n=1000", "status": "passed" if passed else "failed",
               "message": "" if passed else "c[17]: expected 3, got 0 (1000 of 1000 differ)"}]
    if speed is not None:
        checks.append({"key": "speed", "label": "", "status": "passed" if speed >= 0.8 else "failed",
                       "message": "", "value": speed, "threshold": 0.8,
                       "figures": [{"name": "GB/s", "value": 3000 * speed}, {"name": "reference GB/s", "value": 3000}]})
    points = most if passed and (speed is None or speed >= 0.8) else (most / 2 if passed else 0)
    return {"chapter": "01_runtime", "exercise": name, "title": spec["title"], "read": spec.get("read", ""),
            "mode": "grade", "status": "passed" if points == most else "failed",
            "message": "" if passed else "failed: correct", "checks": checks, "scores": [], "points": points,
            "max_points": most, "device": GPU, "seed": 1, "seconds": 1.0}


def make_class(folder, students, grading_hashes=None):
    for i, (name, work) in enumerate(students.items()):
        results = folder / "students" / name / "results" / "01_runtime"
        results.mkdir(parents=True)
        for ex_name in EXERCISES:
            passed, speed = work.get(ex_name, (False, None))
            (results / f"{ex_name}.json").write_text(json.dumps(exercise(ex_name, passed, speed)))
        summary = {"student": name, "gpu": {"name": GPU["name"]}, "chapters_graded": ["01_runtime"],
                   "course": {"commit": "abc123", "grading_hash": (grading_hashes or {}).get(name, "h1")},
                   "flags": ["edited grader/thresholds.json: not used"] if name == "dave" else [], "error": None}
        summary.update(class_report.totals(results.parent, ROOT / "grader" / "thresholds.json", ["01_runtime"]))
        (folder / "students" / name / "summary.json").write_text(json.dumps(summary))
        report = folder / "students" / name / "report"
        report.mkdir()
        (report / "report.html").write_text(f"<html><body><h1>{name}</h1></body></html>")


CLASS = {
    "alice": {e: (True, 1.02 if e == "vector_add" else None) for e in EXERCISES},
    "bob": {e: (True, 0.91 if e == "vector_add" else None) for e in EXERCISES},
    "carol": {"device_report": (True, None), "vector_add": (True, 0.55)},
    "dave": {},
    "erin": {"device_report": (True, None), "error_handling": (True, None), "thread_indexing": (True, None)},
}


def png_pixels(path):
    """(width, height, number of distinct bytes among the decoded rows): enough to tell a page from a blank."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width, height = 8, b"", 0, 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    return width, height, len(set(zlib.decompress(idat)))


class RollupTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.folder = pathlib.Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def build(self, hashes=None):
        make_class(self.folder, CLASS, hashes)
        self.assertEqual(class_report.main(["--class", str(self.folder)]), 0)
        with open(self.folder / "rollup.csv") as f:
            return list(csv.DictReader(f)), (self.folder / "rollup.html").read_text()

    def test_csv_has_a_row_per_student_and_exercise(self):
        rows, _ = self.build()
        self.assertEqual(len(rows), len(CLASS) * len(EXERCISES))
        alice = next(r for r in rows if r["student"] == "alice" and r["exercise"] == "vector_add")
        self.assertEqual((alice["status"], alice["speed_value"], alice["course_commit"]), ("passed", "1.02", "abc123"))
        self.assertIn("GB/s=3060", alice["figures"])

    def test_page_links_each_report_and_shows_distributions(self):
        _, page = self.build()
        for name in CLASS:
            self.assertIn(f"href='students/{name}/report/report.html'", page)
        self.assertEqual(page.count("<svg"), 1)  # one chapter, one histogram
        self.assertIn("edited grader/thresholds.json", page)

    def test_most_failed_first_with_their_messages(self):
        self.build()
        failed = class_report.most_failed(class_report.load_class(self.folder))
        self.assertEqual(failed[0][2], 3)  # event_timing: carol, dave, erin
        self.assertIn("expected 3, got 0", failed[0][3][0][0])

    def test_leaderboard_ranks_correct_solutions_by_speed(self):
        self.build()
        board = class_report.leaderboard(class_report.load_class(self.folder))
        ranked = [(student, value) for value, student, _, _ in board[("01_runtime/vector_add", "speed")]]
        self.assertEqual(ranked, [("alice", 1.02), ("bob", 0.91), ("carol", 0.55)])

    def test_results_of_different_graders_are_not_mixed_silently(self):
        _, page = self.build({"erin": "h2"})
        self.assertIn("graded with different graders", page)


@unittest.skipUnless(SCREENSHOT, "the screenshot runs with --screenshot")
class ScreenshotTest(unittest.TestCase):
    def test_the_page_renders(self):
        with tempfile.TemporaryDirectory() as tmp:
            folder = pathlib.Path(tmp)
            make_class(folder, CLASS)
            class_report.main(["--class", str(folder)])
            shot = folder / "rollup.png"
            browser = shutil.which("chromium") or shutil.which("chromium-browser")
            done = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                                   f"--screenshot={shot}", "--window-size=1280,1600",
                                   (folder / "rollup.html").as_uri()], capture_output=True, text=True, timeout=120)
            self.assertTrue(shot.exists(), done.stderr[-2000:])
            width, height, distinct = png_pixels(shot)
            self.assertEqual((width, height), (1280, 1600))
            self.assertGreater(distinct, 20, "the screenshot is blank")
            keep = os.environ.get("COURSE_SCREENSHOT_DIR")
            if keep:
                shutil.copy(shot, pathlib.Path(keep) / "rollup-screenshot.png")


if __name__ == "__main__":
    if SCREENSHOT and not (shutil.which("chromium") or shutil.which("chromium-browser")):
        print("SKIP: no Chromium (Debian: apt-get install chromium) for the roll-up's screenshot")
        sys.exit(77)
    unittest.main(defaultTest="ScreenshotTest" if SCREENSHOT else "RollupTest")
