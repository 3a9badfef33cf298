"""Host tests of the report tool: python3 test_report.py path/to/report.py"""
import importlib.util
import json
import pathlib
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import gradescope_format  # noqa: E402

spec = importlib.util.spec_from_file_location("report", sys.argv.pop(1))
report = importlib.util.module_from_spec(spec)
spec.loader.exec_module(report)

THRESHOLDS = {
    "scoring": {"reference_margin": 1.25, "partial_credit_from": 0.5},
    "chapters": {
        "01_a": {"title": "A", "exercises": {
            "add": {"title": "1. Add", "read": "notes/01_a.md#add",
                    "checks": {"correct": {"points": 6},
                               "speed": {"points": 4, "kind": "speed", "threshold": 0.7}}},
            "hang": {"title": "2. Hang", "checks": {"ok": {"points": 5}}},
            "never": {"title": "3. Never run", "checks": {"ok": {"points": 5}}},
            "ref": {"title": "4. Reference", "checks": {"ok": {"points": 5}}}}},
        "02_b": {"title": "B", "exercises": {"x": {"title": "1. X", "checks": {"ok": {"points": 10}}}}},
        "03_c": {"title": "C", "exercises": {"y": {"title": "1. Y", "checks": {"ok": {"points": 10}}}}},
    },
}

DEVICE = {"name": "Test GPU", "compute_capability": "9.0", "sms": 132, "driver_cuda_version": "13.0", "runtime_cuda_version": "13.0"}


def result(chapter, exercise, status, points, max_points, checks=(), message=""):
    return {"chapter": chapter, "exercise": exercise, "title": exercise, "read": "notes/x.md", "mode": "grade",
            "status": status, "message": message, "checks": list(checks), "scores": [], "points": points,
            "max_points": max_points, "device": DEVICE, "seed": 1, "seconds": 0.5}


class ReportTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        root = pathlib.Path(self.tmp.name)
        self.results, self.out = root / "results", root / "out"
        self.thresholds = root / "thresholds.json"
        self.thresholds.write_text(json.dumps(THRESHOLDS))
        a = self.results / "01_a"
        a.mkdir(parents=True)
        speed = {"key": "speed", "label": "", "status": "failed", "message": "0.6 x (threshold 0.7)",
                 "value": 0.6, "threshold": 0.7, "unit": "x copy",
                 "figures": [{"name": "GB/s", "value": 2503.7}, {"name": "% of CUB", "value": 64.6},
                             {"name": "reference GB/s", "value": 3001.0}, {"name": "step 0 GB/s", "value": 281.0}]}
        add = result("01_a", "add", "failed", 8.3, 10,
                     [{"key": "correct", "label": "n=1", "status": "passed", "message": ""}, speed], "failed: speed")
        add["timelines"] = [{"title": "2 streams", "ops": [{"stream": 0, "kind": "copy in", "start_ms": 0, "end_ms": 1},
                                                           {"stream": 1, "kind": "compute", "start_ms": 0.5, "end_ms": 2}]}]
        (a / "add.json").write_text(json.dumps(add))
        (a / "hang.json").write_text(json.dumps(result("01_a", "hang", "running", 0, 5)))
        ref = result("01_a", "ref", "failed", 5, 5, [], "self-check failed: the reference solution failed speed")
        ref["mode"] = "reference"
        ref["checks"] = [{"key": "ok", "label": "<b>", "status": "failed", "message": "a < b && c > d"}]
        (a / "ref.json").write_text(json.dumps(ref))
        b = self.results / "02_b"
        b.mkdir()
        (b / "build_error.txt").write_text("runtime.cu(12): error: expected a ';'\n")
        # 03_c has no results folder: it was not graded and is left out.

    def tearDown(self):
        self.tmp.cleanup()

    def build(self):
        self.assertEqual(report.main(["--results", str(self.results), "--thresholds", str(self.thresholds),
                                      "--out", str(self.out)]), 0)
        return ((self.out / "report.md").read_text(), (self.out / "report.html").read_text(),
                json.loads((self.out / "results.json").read_text()))

    def test_markdown_lists_every_exercise_of_graded_chapters(self):
        md, _, _ = self.build()
        self.assertIn("| 01_a | add | FAILED | 8.3 / 10 |", md)
        self.assertIn("CRASHED", md)       # a results file left at "running"
        self.assertIn("| 01_a | ref | SELF-CHECK FAILED | 5 / 5 |", md)  # not "FAILED 5/5 points"
        self.assertIn("not run", md)       # an exercise with no results file
        self.assertIn("DID NOT COMPILE", md)
        self.assertIn("expected a ';'", md)  # the compiler's message
        self.assertNotIn("03_c", md)
        self.assertIn("**13.3 / 35**", md)
        self.assertIn("Test GPU", md)

    def test_html_draws_speed_against_threshold(self):
        _, page, _ = self.build()
        self.assertIn("<svg", page)
        self.assertIn("threshold 0.7", page)
        self.assertIn("DID NOT COMPILE", page)

    def test_html_escapes_what_the_graders_wrote(self):
        _, page, _ = self.build()
        self.assertIn("a &lt; b &amp;&amp; c &gt; d", page)
        self.assertNotIn("<b></td>", page)

    def test_speed_bar_drawn_per_speed_check(self):
        _, page, _ = self.build()
        self.assertEqual(page.count('aria-label="measured speed against thresholds"'), 1)
        self.assertIn('fill="#ea4335"', page)  # 0.6 against 0.7: a red bar

    def test_race_drawn_contender_by_contender(self):
        _, page, _ = self.build()
        self.assertEqual(page.count('aria-label="the race, contender by contender"'), 1)
        for name, value in (("yours", "2504 GB/s"), ("reference", "3001 GB/s"), ("step 0", "281 GB/s")):
            self.assertIn(f">{name}</text>", page)
            self.assertIn(f">{value}</text>", page)
        self.assertNotIn(">% of CUB</text>", page)  # not a contender: another measure

    def test_figures_table(self):
        md, page, _ = self.build()
        self.assertIn("| exercise | GB/s | % of CUB | reference GB/s | step 0 GB/s |", md)
        self.assertIn("| add | 2504 | 64.6 | 3001 | 281 |", md)
        self.assertIn("<th>% of CUB</th>", page)

    def test_timeline(self):
        md, page, _ = self.build()
        self.assertIn("Timeline 2 streams: 2 operations on 2 streams over 2.00 ms", md)
        self.assertIn("stream 1</text>", page)
        self.assertIn("compute: 0.500 to 2.000 ms", page)

    def test_exercises_with_other_figures_get_their_own_table(self):
        def exercise(title, figures):
            return {"title": title, "checks": [{"figures": [{"name": k, "value": v} for k, v in figures.items()]}]}
        chapter = {"exercises": [exercise("step 1", {"GB/s": 1.0}), exercise("step 2", {"GB/s": 2.0}),
                                 exercise("no figures", {}), exercise("update", {"us per call": 0.6, "us per build": 20})]}
        tables = report.figures_tables(chapter)
        self.assertEqual([columns for columns, _ in tables], [["GB/s"], ["us per call", "us per build"]])
        self.assertEqual([title for title, _ in tables[0][1]], ["step 1", "step 2"])

    def test_an_exercise_with_two_speed_checks_gets_a_row_for_each(self):
        speed = lambda key, gbs: {"key": key, "figures": [{"name": "GB/s", "value": gbs}, {"name": "reference GB/s", "value": 1.0}]}
        chapter = {"exercises": [{"title": "6. Pinned", "checks": [{"key": "pinned"}, speed("pinned_speed", 54.0),
                                                                  speed("mapped_speed", 50.0)]}]}
        (columns, rows), = report.figures_tables(chapter)
        self.assertEqual(columns, ["GB/s", "reference GB/s"])
        self.assertEqual([(title, values["GB/s"]) for title, values in rows],
                         [("6. Pinned: pinned_speed", 54.0), ("6. Pinned: mapped_speed", 50.0)])

    def test_failures_first_and_passed_checks_folded_into_one_line(self):
        md, page, _ = self.build()
        add_md = md[md.index("### add"):md.index("### hang")]
        self.assertLess(add_md.index("| speed |"), add_md.index("<details><summary>1 check passed (correct 1)</summary>"))
        add_html = page[page.index("id='01_a-add'"):page.index("id='01_a-hang'")]
        failed, folded = add_html.index("<td class='bad'>failed</td>"), add_html.index("<details>")
        self.assertLess(failed, folded)
        self.assertIn("1 check passed (correct 1)</summary>", add_html)
        self.assertIn(">n=1</td>", add_html[folded:])  # the passed row sits inside the fold
        self.assertEqual(report.passed_summary([{"key": "correct"}] * 20 + [{"key": "speed"}]),
                         "21 checks passed (correct 20, speed 1)")

    def test_an_exercise_skipped_here_counts_in_neither_points_nor_maximum(self):
        chapters = [{"exercises": [{"status": "passed", "points": 5, "max_points": 5},
                                   {"status": "skipped", "points": 0, "max_points": 20},
                                   {"status": "failed", "points": 1, "max_points": 10}]}]
        self.assertEqual(report.totals(chapters), (6, 15))

    def test_a_ladder_of_steps_is_drawn_beside_its_contenders(self):
        columns = ["GB/s", "reference GB/s", "CUB GB/s", "% of CUB"]
        rows = [("1. Step", {"GB/s": 500, "reference GB/s": 501, "CUB GB/s": 3500, "% of CUB": 14}),
                ("2. Step", {"GB/s": 3000, "reference GB/s": 3100, "CUB GB/s": 3500, "% of CUB": 86})]
        svg = report.ladder_svg(columns, rows)
        self.assertEqual(svg.count("<rect"), 3 + 6)  # the legend, then a bar per contender and step
        self.assertIn("2. Step, CUB: 3500 GB/s", svg)
        self.assertEqual(report.ladder_svg(columns, rows[:1]), "")
        self.assertEqual(report.ladder_svg(["GB/s", "% of CUB"], rows), "")

    def test_gradescope_results(self):
        _, _, gs = self.build()
        self.assertEqual(gradescope_format.problems(gs), [])
        self.assertAlmostEqual(gs["score"], 13.3)
        names = [t["name"] for t in gs["tests"]]
        self.assertEqual(len(names), 5)
        add = gs["tests"][0]
        self.assertEqual((add["status"], add["max_score"], add["number"], add["visibility"]),
                         ("failed", 10, "1.1", "visible"))
        self.assertIn("Read: notes/x.md", add["output"])
        self.assertIn("1 check passed (correct 1)", add["output"])
        self.assertIsInstance(gs["execution_time"], int)

    def test_gradescope_leaderboard_holds_speed_of_correct_exercises_only(self):
        add = json.loads((self.results / "01_a" / "add.json").read_text())
        board = report.gradescope([{"name": "01_a", "exercises": [add]}])["leaderboard"]
        self.assertEqual(board[1], {"name": "01_a/add speed", "value": 0.6, "order": "desc"})
        add["checks"][0]["status"] = "failed"
        board = report.gradescope([{"name": "01_a", "exercises": [add]}])["leaderboard"]
        self.assertEqual([b["name"] for b in board], ["points"])

    def test_gradescope_skipped_exercise_is_not_held_against_the_maximum(self):
        skipped = result("01_a", "add", "skipped", 0, 10, message="needs compute capability 9.0")
        test = report.gradescope([{"name": "01_a", "exercises": [skipped]}])["tests"][0]
        self.assertEqual((test["status"], test["score"], test["max_score"]), ("passed", 0.0, 0.0))

    def test_the_format_checker_can_fail(self):
        self.assertTrue(gradescope_format.problems({"tests": [{"score": 2, "max_score": 1, "status": "ok"}],
                                                    "leaderboard": [{"name": "x", "order": "up"}],
                                                    "visibility": "public", "colour": 1}))
        self.assertEqual(len(gradescope_format.problems({"score": "1", "tests": [{"number": 1.1}]})), 2)

    def test_history_shows_each_attempt_per_exercise(self):
        history = self.out.parent / "history"
        for _ in range(3):
            self.assertEqual(report.main(["--results", str(self.results), "--thresholds", str(self.thresholds),
                                          "--out", str(self.out), "--history", str(history), "--record"]), 0)
        self.assertEqual(len(list(history.glob("*.json"))), 3)
        md, page = (self.out / "report.md").read_text(), (self.out / "report.html").read_text()
        self.assertIn("Your last attempts", md)
        self.assertIn("| add | 8.3/10 (0.6) | 8.3/10 (0.6) | 8.3/10 (0.6) |", md)
        self.assertIn("Your last attempts", page)

    def test_no_history_table_after_a_single_attempt(self):
        history = self.out.parent / "history"
        report.main(["--results", str(self.results), "--thresholds", str(self.thresholds),
                     "--out", str(self.out), "--history", str(history), "--record"])
        self.assertNotIn("Your last attempts", (self.out / "report.md").read_text())

    def test_flags_are_shown_at_the_top(self):
        report.main(["--results", str(self.results), "--thresholds", str(self.thresholds), "--out", str(self.out),
                     "--note", "edited grader/thresholds.json: not used"])
        self.assertIn("edited grader/thresholds.json", (self.out / "report.html").read_text())
        self.assertIn("edited grader/thresholds.json", json.loads((self.out / "results.json").read_text())["output"])


if __name__ == "__main__":
    unittest.main()
