#!/usr/bin/env python3
"""Mutation check of the host tests: each mutation below breaks the grading code in a way the host
tests must notice, so each must make them fail.

    mutations.py SOURCE_ROOT

Works on a copy of the source tree (the checkout is never touched): sets up a build there, builds
the host tests, checks that they pass unmutated, then applies one mutation at a time, rebuilds what
it touches, and runs the test that covers it. A mutation that no test notices fails this test and
is named. A mutation whose text is no longer in its file fails it too, so that the list follows the
code.
"""
import pathlib
import shutil
import subprocess
import sys
import tempfile

# (file, text, replacement, what breaks, the test that must notice: "harness" (the C++ host tests)
# or a Python test script and its argument)
HARNESS = ("harness",)
REPORT = ("python", "tests/test_report.py", "grader/report.py")
RUNNER = ("python", "tests/test_run_exercise.py", "grader/run_exercise.py")
MUTATIONS = [
    ("grader/harness/scoring.cpp", "correct && rs.size() == 1 && rs[0]->value", "correct && rs[0]->value",
     "a speed check recorded more than once still earns points", HARNESS),
    ("grader/harness/scoring.cpp", "if (check.kind != CheckKind::speed) {", "if (check.kind == CheckKind::correctness) {",
     "a sanitizer check's passed record earns nothing", HARNESS),
    ("grader/harness/scoring.cpp", "if (check.kind == CheckKind::correctness) correct = correct && all_passed(records_of(key));",
     "if (check.kind != CheckKind::speed) correct = correct && all_passed(records_of(key));",
     "a sanitizer check holds back the speed points", HARNESS),
    ("grader/harness/stats.cpp", "return median(deviations) / std::fabs(m);", "return median(deviations);",
     "the noise is absolute, not relative to the median", HARNESS),
    ("grader/harness/compare.cpp",
     "got_constant = got_constant && (got[i] == got[0] || (std::isnan(double(got[i])) && std::isnan(double(got[0]))));",
     "got_constant = got_constant && got[i] == got[0];",
     "an output of NaN everywhere is not named as constant", HARNESS),
    ("grader/harness/compare.cpp", "c.mismatches > 0 && expected.size() >= 16 && got_constant",
     "c.mismatches > 0 && got_constant", "a short output is called constant", HARNESS),
    ("grader/harness/compare.cpp", 'if (mismatches > first.size()) s << "\\n  ...";', "",
     "the mismatches not shown are not elided", HARNESS),
    ("grader/harness/compare.cpp", "if (expected.size() != got.size()) {", "if (false) {",
     "outputs of different sizes are compared element by element", HARNESS),
    ("grader/harness/spec.cpp", 'e.read = ex.value("read", "");', "",
     "where to read is not parsed", HARNESS),
    ("grader/report.py", '    speed = [c for c in checks if "value" in c and "threshold" in c]\n    if not speed:',
     '    speed = [c for c in checks if "value" in c and "threshold" in c]\n    if True:',
     "speed_bars draws nothing", REPORT),
    ("grader/report.py", "    e = html.escape\n", "    e = lambda text, quote=True: str(text)\n",
     "the HTML report does not escape what it shows", REPORT),
    ("grader/run_exercise.py", '    if result.get("token") != token:\n        return "the results file was not written',
     '    if False:\n        return "the results file was not written', "a forged results file is accepted", RUNNER),
    ("grader/run_exercise.py", 'why = (f"the process ended (exit code {code}) before',
     'why = None and (f"the process ended (exit code {code}) before', "a process that ended early passes", RUNNER),
    ("grader/run_exercise.py", 'if isinstance(record, dict) and record.get("token") == token:',
     "if isinstance(record, dict):", "a record on the results channel without the token is believed", RUNNER),
    ("grader/run_exercise.py", "        timed_out = True\n", "        timed_out = False\n",
     "a grader killed for overrunning its time keeps its verdict", RUNNER),
    ("grader/run_exercise.py", "    if code == 86 or reported:", "    if code == 86:",
     "a race reported in the sanitizer's summary but not its exit code passes", RUNNER),
]


def run(cmd, cwd, quiet=True):
    return subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=quiet, text=True)


def covered_by(test, src, build):
    if test == HARNESS:
        built = run(["ninja", "-C", build, "tests/test_harness"], src)
        if built.returncode != 0:
            return None, "the mutated code does not build:\n" + built.stdout[-2000:]
        return run([build / "tests" / "test_harness"], src).returncode == 0, ""
    return run([sys.executable, src / test[1], src / test[2]], src).returncode == 0, ""


def main():
    root = pathlib.Path(sys.argv[1]).resolve()
    with tempfile.TemporaryDirectory(prefix="course-mutations-") as tmp:
        src, build = pathlib.Path(tmp) / "src", pathlib.Path(tmp) / "build"
        shutil.copytree(root, src, ignore=shutil.ignore_patterns(".git", "build", "builddir", "__pycache__"))
        setup = run(["meson", "setup", build, src, "-Dgpu_arch=90"], src)
        if setup.returncode != 0:
            print("meson setup failed:\n" + setup.stdout[-3000:] + setup.stderr[-3000:])
            return 1
        problems = []
        for test in sorted({m[4] for m in MUTATIONS}):
            passes, why = covered_by(test, src, build)
            if not passes:
                print(f"the unmutated code fails {test}: {why}")
                return 1
        for path, text, replacement, what, test in MUTATIONS:
            file = src / path
            original = file.read_text()
            if text not in original:
                problems.append(f"{path}: the text to mutate is gone ({text[:60]!r}): update tests/mutations.py")
                continue
            file.write_text(original.replace(text, replacement, 1))
            try:
                passes, why = covered_by(test, src, build)
            finally:
                file.write_text(original)
            verdict = "caught" if passes is False else "NOT CAUGHT" if passes else "does not build"
            print(f"{verdict:>14}: {path}: {what}")
            if passes is None:
                problems.append(f"{path}: {what}: {why}")
            elif passes:
                problems.append(f"{path}: {what}: no test failed")
        run(["ninja", "-C", build, "tests/test_harness"], src)  # leave the copy's build unmutated
        if problems:
            print("\nmutations the tests do not catch:\n  " + "\n  ".join(problems))
            return 1
        print(f"\nall {len(MUTATIONS)} mutations caught")
        return 0


if __name__ == "__main__":
    sys.exit(main())
