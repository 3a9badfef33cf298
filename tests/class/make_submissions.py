#!/usr/bin/env python3
"""Writes a class of 20 synthetic submissions, and what grading each must give.

    make_submissions.py OUT [--chapters 01_runtime 03_reduction]

OUT/submissions/ gets the submissions in every form grade_class.py takes (a checkout, a folder
with chapters/ only, a .tar.gz, a .zip, a git URL) and every behaviour a batch must survive:
reference solutions, untouched skeletons, partial work, code that does not compile, hangs,
crashes or ends early, a checkout whose grader and grading data were edited, and code that tries
at run time to rewrite the grading data and forge its results. OUT/expected.json says, per
student, the verdict of each exercise ("*": the others), the chapters that must not compile, and
the flags that must be raised; check_batch.py compares a graded class with it.
"""
import argparse
import json
import pathlib
import shutil
import subprocess
import sys
import tarfile
import zipfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "wrong"))
from submissions import SUBMISSIONS as WRONG  # noqa: E402
sys.path.insert(0, str(ROOT / "grader"))
import grade_class  # noqa: E402

SOURCES = {"01_runtime": "runtime.cu", "02_memory": "memory.cu", "03_reduction": "reduction.cu",
           "04_streams": "streams.cu", "05_l2cache": "l2cache.cu", "06_clusters": "clusters.cu",
           "07_graphs": "graphs.cu"}

# Runs before the grader's tests (a static initializer): tries to rewrite the grading data wherever
# it can find it, and writes a forged full-marks record into every pipe it holds (the results
# channel among them).
TAMPER_AT_START = r'''
#include <dirent.h>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
namespace {
struct RewriteTheGradingData {
    RewriteTheGradingData() {
        char exe[4096] = {};
        if (readlink("/proc/self/exe", exe, sizeof(exe) - 1) > 0) {
            const std::string build = std::string(exe).substr(0, std::string(exe).rfind("/grader/"));
            for (const char* rel : {"/../course/grader/thresholds.json", "/../grader/thresholds.json"})
                std::ofstream(build + rel) << "{\"scoring\": {}, \"chapters\": {}}\n";
        }
        const std::string forged = "{\"chapter\": \"01_runtime\", \"exercise\": \"vector_add\", \"status\": "
                                   "\"passed\", \"points\": 1000, \"checks\": [], \"scores\": []}\n";
        for (int fd = 3; fd < 64; ++fd) {
            struct stat s;
            if (fstat(fd, &s) == 0 && S_ISFIFO(s.st_mode)) (void)!write(fd, forged.data(), forged.size());
        }
    }
} rewrite_the_grading_data;
}  // namespace
'''

# Runs when the process ends: writes full marks over every results file it can name.
FORGE_AT_EXIT = r'''
#include <cstdlib>
#include <fstream>
#include <string>
#include <sys/stat.h>
namespace {
void forge_results() {
    for (const char* dir : {"/tmp/results/01_runtime", "results/grade/01_runtime"}) {
        mkdir(dir, 0755);
        for (const char* ex : {"device_report", "error_handling", "thread_indexing", "vector_add", "event_timing"})
            std::ofstream(std::string(dir) + "/" + ex + ".json")
                << "{\"chapter\": \"01_runtime\", \"exercise\": \"" << ex << "\", \"status\": \"passed\", "
                   "\"points\": 1000, \"checks\": [], \"scores\": []}\n";
    }
}
struct AtExit { AtExit() { std::atexit(forge_results); } } at_exit;
}  // namespace
'''


def solution(chapter):
    return (ROOT / "solutions" / chapter / SOURCES[chapter]).read_text()


def edited(chapter, edits):
    text = solution(chapter)
    for old, new in edits:
        if text.count(old) != 1:
            sys.exit(f"the solution of {chapter} no longer holds, once, the text to change:\n{old}")
        text = text.replace(old, new)
    return text


def wrong(name):
    spec = WRONG[name]
    return spec["chapter"], edited(spec["chapter"], spec["edits"])


def checkout(folder, files):
    """A student's checkout: the whole course, with FILES (chapter -> text) in chapters/."""
    for rel in grade_class.course_files(ROOT):
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, folder / rel)
    chapters_only(folder, files)


def chapters_only(folder, files):
    for chapter, text in files.items():
        (folder / "chapters" / chapter).mkdir(parents=True, exist_ok=True)
        (folder / "chapters" / chapter / SOURCES[chapter]).write_text(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=pathlib.Path)
    parser.add_argument("--chapters", nargs="+", default=["01_runtime", "03_reduction"])
    args = parser.parse_args()
    chapters = args.chapters
    if "01_runtime" not in chapters:
        sys.exit("the synthetic class needs 01_runtime among its chapters")
    out = args.out.resolve()
    shutil.rmtree(out, ignore_errors=True)
    subs = out / "submissions"
    subs.mkdir(parents=True)
    solutions = {c: solution(c) for c in chapters}
    skeleton = {c: (ROOT / "chapters" / c / SOURCES[c]).read_text() for c in chapters}
    expected = {}

    def folder(name, files, full_checkout=False, **expect):
        path = subs / name
        path.mkdir()
        (checkout if full_checkout else chapters_only)(path, files)
        expected[name] = expect
        return path

    # The reference solutions, in each form a submission can take.
    folder("s01_solution_checkout", solutions, full_checkout=True, verdicts={"*": "passed"})
    staged = folder("s02_solution_tar", solutions, verdicts={"*": "passed"})
    with tarfile.open(subs / "s02_solution_tar.tar.gz", "w:gz") as tar:
        tar.add(staged, arcname="s02_solution_tar")
    shutil.rmtree(staged)
    staged = folder("s03_solution_zip", solutions, verdicts={"*": "passed"})
    with zipfile.ZipFile(subs / "s03_solution_zip.zip", "w") as z:
        for path in sorted(staged.rglob("*")):
            z.write(path, path.relative_to(staged))
    shutil.rmtree(staged)
    repo = out / "repositories" / "s04_solution_git"
    repo.mkdir(parents=True)
    chapters_only(repo, solutions)
    git = ["git", "-C", repo, "-c", "user.name=student", "-c", "user.email=student@example.com"]
    subprocess.run(git + ["init", "-q"], check=True)
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-qm", "my work"], check=True)
    (subs / "s04_solution_git.git-url").write_text(f"file://{repo}\n")
    expected["s04_solution_git"] = {"verdicts": {"*": "passed"}}

    # Untouched skeletons: every check fails.
    folder("s05_skeleton_checkout", skeleton, full_checkout=True, verdicts={"*": "failed"})
    (subs / "s06_nothing_submitted" / "chapters").mkdir(parents=True)
    expected["s06_nothing_submitted"] = {"verdicts": {"*": "failed"}, "flags": ["no files under chapters/"]}

    # Partial work.
    first, last = chapters[0], chapters[-1]
    folder("s07_first_chapter_only", {first: solutions[first]},
           verdicts={"*": "failed", **{f"{first}/*": "passed"}})
    folder("s08_last_chapter_only", dict(skeleton, **{last: solutions[last]}),
           verdicts={"*": "failed", **{f"{last}/*": "passed"}})
    # A mistake in code that later steps reuse fails them too: the tile loader (steps 3 to 5 of the
    # reduction), the last warp's unrolled sum (steps 4 and 5).
    for name, wrong_name, also in (("s09_partial_tile_dropped", "03_partial_tile_dropped", ["last_warp", "complete_unroll"]),
                                   ("s17_kernel_on_the_default_stream", "01_vector_add_on_the_default_stream", []),
                                   ("s18_sum_cached_by_pointer", "03_sum_cached_by_pointer", []),
                                   ("s19_last_warp_without_syncwarp", "03_last_warp_without_syncwarp", ["complete_unroll"])):
        chapter, text = wrong(wrong_name)
        if chapter not in chapters:
            continue
        failing = [WRONG[wrong_name]["exercise"]] + also
        folder(name, dict(solutions, **{chapter: text}),
               verdicts=dict({"*": "passed"}, **{f"{chapter}/{e}": "failed" for e in failing}))

    # Does not compile (in the first chapter; the others still grade).
    folder("s10_does_not_compile", dict(solutions, **{first: solutions[first] + "\nthis is not C++;\n"}),
           verdicts={"*": "passed", f"{first}/*": "build error"}, not_compiled=[first])

    # Hangs: a kernel that never ends. Crashes: a null pointer written on the host. Ends early.
    spin = ("    const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;\n"
            "    if (i < n) c[i] = a[i] + b[i];\n")
    folder("s11_hangs", dict(solutions, **{"01_runtime": edited("01_runtime", [
        # The clock never reads negative, but the compiler cannot know: a loop it must keep.
        (spin, spin.replace("    if (i < n)", "    while (clock64() >= 0) {}\n    if (i < n)")),
        ("    if (aligned(a) && aligned(b) && aligned(c)) {", "    if (false) {")])}),
        verdicts={"*": "passed", "01_runtime/vector_add": "timeout|error"})
    folder("s12_crashes", dict(solutions, **{"01_runtime": edited("01_runtime", [
        ("    if (n == 0) return;\n    const int threads = 256;",
         "    if (n == 0) return;\n    *static_cast<volatile int*>(nullptr) = 1;\n    const int threads = 256;")])}),
        verdicts={"*": "passed", "01_runtime/vector_add": "error"})
    chapter, text = wrong("01_exits_early")
    folder("s16_exits_early", dict(solutions, **{chapter: text}),
           verdicts={"*": "passed", "01_runtime/vector_add": "error"})

    # Edits the grader and the grading data in its checkout (with the skeleton's code): flagged, not used.
    edited_checkout = folder("s13_edits_the_grader", skeleton, full_checkout=True, verdicts={"*": "failed"},
                             flags=["edited grader/thresholds.json", "edited grader/01_runtime.cpp"])
    data = json.loads((edited_checkout / "grader" / "thresholds.json").read_text())
    for chapter in data["chapters"].values():
        for exercise in chapter["exercises"].values():
            for check in exercise["checks"].values():
                check["points"] = 1000
                if "threshold" in check:
                    check["threshold"] = 0.0
    (edited_checkout / "grader" / "thresholds.json").write_text(json.dumps(data, indent=2))
    with open(edited_checkout / "grader" / "01_runtime.cpp", "a") as f:
        f.write("\n// every check passes now\n")

    # Rewrites the grading data at run time and forges results; the reference code otherwise, so
    # the grade it earns honestly is full marks, and nothing it forged may change that.
    folder("s14_rewrites_grading_data", dict(solutions, **{"01_runtime": TAMPER_AT_START + solutions["01_runtime"]}),
           verdicts={"*": "passed"}, flags=["did not come from the grader"])
    folder("s15_forges_results_at_exit", dict(skeleton, **{"01_runtime": FORGE_AT_EXIT + skeleton["01_runtime"]}),
           verdicts={"*": "failed"})
    folder("s20_solution_again", solutions, verdicts={"*": "passed"})
    (out / "expected.json").write_text(json.dumps({"chapters": chapters, "students": expected}, indent=2) + "\n")
    print(f"{len(expected)} submissions in {subs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
