#!/usr/bin/env python3
"""Grades a whole class: every submission in isolation, one grading process per GPU, resumable.

    grade_class.py SUBMISSIONS --out DIR [--chapters 01_runtime ...] [--force]

SUBMISSIONS is a folder; each entry in it is one student's submission, named by the entry:

- a folder: the student's checkout of the course (or just its chapters/ folder's parent);
- an archive of one: NAME.tar.gz, NAME.tgz, NAME.tar or NAME.zip;
- NAME.git-url: a text file holding a git URL this machine can clone.

Each submission is graded over a pristine copy of the course: only its files under chapters/ are
copied in; its other files are compared with the course's, and every difference (an edited
grader, contract, grading data or build file) is flagged in the results and never used. The
graders run inside a bubblewrap sandbox (Debian's package bubblewrap): the whole file system is
read-only there, /tmp is empty and private, there is no network, and no process outlives the
exercise. Results leave the sandbox only through the results channel (see run_exercise.py), so
the code graded cannot write its own results, the grading data or the graders.

Every GPU is used: one worker per GPU (CUDA_VISIBLE_DEVICES), each with its own copy of the course
and build folder, in which only the submission's code is compiled again. A finished submission is
moved into DIR/students/NAME/ at once, with a summary that records the GPU, the course's commit and
a hash of the graders and grading data; a run that is interrupted and started again grades only
what is not finished (--force regrades everything). A folder graded with other graders is refused
rather than mixed. At the end, DIR/rollup.csv and DIR/rollup.html are built (class_report.py).

Exit code: 0 when every submission was graded (whatever its grade), 1 otherwise.
"""
import argparse
import datetime
import fcntl
import hashlib
import json
import os
import pathlib
import queue
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import threading
import time
import zipfile

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
import class_report  # noqa: E402
from run_exercise import error_record  # noqa: E402

ARCHIVES = (".tar.gz", ".tgz", ".tar", ".zip")
GIT_URL = ".git-url"
# What the grade is made of: a submission's copy of any of these is compared, never used.
GRADING_PATHS = ("meson.build", "meson_options.txt", "grade", "grader", "solutions", "tests")
IGNORED = {".git", "build", "builddir", "__pycache__", ".scratch", "results"}
MAX_SOURCE_BYTES = 4 << 20  # a file larger than this under chapters/ is not copied (and is flagged)


# ---- Child processes: each in its own session, so that an interrupted batch stops them all ------

CHILDREN = set()
CHILDREN_LOCK = threading.Lock()


def run_child(command, timeout=None, **kwargs):
    """subprocess.run, in a new session that interrupt() can end with everything it started."""
    with subprocess.Popen([str(c) for c in command], start_new_session=True, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, errors="replace", **kwargs) as proc:
        with CHILDREN_LOCK:
            CHILDREN.add(proc)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            raise
        finally:
            with CHILDREN_LOCK:
                CHILDREN.discard(proc)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def interrupt(signum, frame):
    """Ctrl-C or a kill: stop every grading process at once. Finished submissions are already in
    students/; the unfinished ones are graded from the start by the next run."""
    with CHILDREN_LOCK:
        for proc in CHILDREN:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    print(f"\ninterrupted ({signal.Signals(signum).name}): every finished submission is kept; "
          "run the same command again to grade the rest", flush=True)
    os._exit(130)


# ---- The course -----------------------------------------------------------------------------------

def course_files(root=ROOT):
    """The course's files, relative to its root: what git tracks or would (not ignored), or every file
    but build output."""
    listed = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            capture_output=True)
    if listed.returncode == 0 and listed.stdout:
        names = [n for n in listed.stdout.decode().split("\0") if n]
        return sorted({n for n in names if (root / n).is_file()})
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if p.is_file() and not IGNORED & set(p.relative_to(root).parts))


def digest(paths, root):
    h = hashlib.sha256()
    for rel in sorted(paths):
        h.update(rel.encode() + b"\0" + (root / rel).read_bytes() + b"\0")
    return h.hexdigest()


def grading_files(files):
    return [f for f in files if f.split("/")[0] in GRADING_PATHS]


def course_version(root=ROOT):
    """The course's commit (with "+modified" when the grading files differ from it) and the hash of
    the graders and grading data."""
    files = course_files(root)
    # COURSE_COMMIT names the commit where git cannot (a copy of a checkout, without its history).
    commit = subprocess.run(["git", "-C", root, "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True)
    commit = os.environ.get("COURSE_COMMIT") or (commit.stdout.strip() if commit.returncode == 0 else "unknown")
    dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "--"] + list(GRADING_PATHS),
                           capture_output=True, text=True)
    if dirty.returncode == 0 and dirty.stdout.strip():
        commit += "+modified"
    return {"commit": commit, "grading_hash": digest(grading_files(files), root)[:16]}


def chapters_and_exercises(root=ROOT):
    data = json.loads((root / "grader" / "thresholds.json").read_text())
    return {name: list(ch["exercises"]) for name, ch in data["chapters"].items()}


# ---- Submissions -----------------------------------------------------------------------------------

def find_submissions(folder):
    """(name, path) for each entry of the folder that is a submission, sorted by name."""
    found = []
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_dir():
            found.append((entry.name, entry))
        elif entry.name.endswith(GIT_URL):
            found.append((entry.name[:-len(GIT_URL)], entry))
        else:
            suffix = next((s for s in ARCHIVES if entry.name.endswith(s)), None)
            if suffix:
                found.append((entry.name[:-len(suffix)], entry))
    return found


def materialize(source, into):
    """The submission as a folder: the folder itself, or an archive unpacked or a repository cloned
    into `into`. Raises RuntimeError with a message for the report when that fails."""
    if source.is_dir():
        return source
    into.mkdir(parents=True)
    if source.name.endswith(GIT_URL):
        url = source.read_text().strip()
        clone = subprocess.run(["git", "clone", "--quiet", "--depth", "1", url, into / "checkout"],
                               capture_output=True, text=True, timeout=300,
                               env=dict(os.environ, GIT_TERMINAL_PROMPT="0"))
        if clone.returncode != 0:
            raise RuntimeError(f"git clone {url} failed: {clone.stderr.strip()[-500:]}")
        return into / "checkout"
    try:
        if source.name.endswith(".zip"):
            with zipfile.ZipFile(source) as archive:
                archive.extractall(into)  # zipfile drops ".." and absolute paths
        else:
            with tarfile.open(source) as archive:
                if hasattr(tarfile, "data_filter"):
                    archive.extractall(into, filter="data")
                else:  # Python before 3.11.4: refuse what the data filter would
                    if any(m.name.startswith("/") or ".." in m.name.split("/") or m.issym() or m.islnk()
                           for m in archive.getmembers()):
                        raise RuntimeError("the archive holds links or paths outside itself")
                    archive.extractall(into)
    except (tarfile.TarError, zipfile.BadZipFile, OSError) as e:
        raise RuntimeError(f"cannot unpack {source.name}: {e}")
    entries = [e for e in into.iterdir() if not e.name.startswith(".")]
    if len(entries) == 1 and entries[0].is_dir() and not (into / "chapters").is_dir():
        return entries[0]  # an archive of one folder
    return into


def chapter_sources(submission, chapters):
    """chapter -> {relative path under chapters/CHAPTER: file} of the submission's regular files."""
    found = {}
    for chapter in chapters:
        folder = submission / "chapters" / chapter
        files = {}
        if folder.is_dir():
            for path in sorted(folder.rglob("*")):
                if path.is_file() and not path.is_symlink() and not IGNORED & set(path.relative_to(folder).parts):
                    files[str(path.relative_to(folder))] = path
        found[chapter] = files
    return found


def submission_hash(sources):
    h = hashlib.sha256()
    for chapter, files in sorted(sources.items()):
        for rel, path in sorted(files.items()):
            h.update(f"{chapter}/{rel}".encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def flags_for(submission, sources, pristine_files):
    """What the submission changed that does not count: edits outside chapters/, links, huge files."""
    flags = []
    pristine = set(pristine_files)
    for rel in grading_files(pristine_files):
        theirs = submission / rel
        if theirs.is_file() and theirs.read_bytes() != (ROOT / rel).read_bytes():
            flags.append(f"edited {rel}: not used, graded with the course's own")
    for top in GRADING_PATHS:
        base = submission / top
        if base.is_dir():
            for path in base.rglob("*"):
                rel = str(path.relative_to(submission))
                if path.is_file() and rel not in pristine and not IGNORED & set(path.parts):
                    flags.append(f"added {rel}: not used")
    for chapter, files in sources.items():
        for rel, path in files.items():
            if path.stat().st_size > MAX_SOURCE_BYTES:
                flags.append(f"chapters/{chapter}/{rel} is over {MAX_SOURCE_BYTES >> 20} MiB: not used")
        folder = submission / "chapters" / chapter
        if folder.is_dir():
            links = [p for p in folder.rglob("*") if p.is_symlink()]
            flags += [f"chapters/{chapter}/{p.relative_to(folder)} is a link: not used" for p in links]
    return flags[:50]


# ---- The sandbox -------------------------------------------------------------------------------------

def sandbox_command(visible=()):
    """The bubblewrap command the graders run inside: everything read-only, the GPUs' device files
    there, a private empty /tmp (with the folders in `visible` shown again, read-only, should they
    lie under it), no network, and no process left behind."""
    shown = [a for path in visible for a in ("--ro-bind", str(path), str(path))]
    return ["bwrap", "--ro-bind", "/", "/", "--dev-bind", "/dev", "/dev", "--tmpfs", "/dev/shm",
            "--proc", "/proc", "--tmpfs", "/tmp"] + shown + [
            "--unshare-pid", "--unshare-ipc", "--unshare-net", "--unshare-uts", "--die-with-parent",
            "--new-session", "--setenv", "HOME", "/tmp", "--chdir", "/tmp", "--"]


def sandbox_problem():
    """Why the sandbox cannot be used here, or None."""
    if not shutil.which("bwrap"):
        return "bubblewrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    probe = subprocess.run(sandbox_command() + ["true"], capture_output=True, text=True)
    if probe.returncode != 0:
        return "bubblewrap cannot make a sandbox on this machine: " + probe.stderr.strip()[-300:]
    return None


# ---- GPUs ----------------------------------------------------------------------------------------------

def gpus():
    """[(device id for CUDA_VISIBLE_DEVICES, name)]: those CUDA_VISIBLE_DEVICES lists (a Slurm job's),
    else every GPU nvidia-smi sees; [(None, "no GPU")] without one."""
    smi = shutil.which("nvidia-smi")
    listed = subprocess.run([smi, "--query-gpu=index,uuid,name", "--format=csv,noheader"],
                            capture_output=True, text=True) if smi else None
    rows = [[c.strip() for c in line.split(",")] for line in listed.stdout.splitlines()] \
        if listed and listed.returncode == 0 else []
    names = {key: row[2] for row in rows for key in row[:2]}
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        devices = [d.strip() for d in visible.split(",") if d.strip()]
        return [(d, names.get(d, "GPU " + d)) for d in devices] or [(None, "no GPU")]
    return [(row[0], row[2]) for row in rows] or [(None, "no GPU")]


# ---- A worker: one GPU, its own course copy and build ------------------------------------------------

class Worker:
    def __init__(self, out, device, gpu_name, args, version):
        self.device, self.gpu_name, self.args, self.version = device, gpu_name, args, version
        self.base = out / "work" / (f"{socket.gethostname()}-gpu{device}" if device is not None
                                    else f"{socket.gethostname()}-cpu")
        self.dir = self.base
        self.env = dict(os.environ)
        if device is not None:
            self.env["CUDA_VISIBLE_DEVICES"] = device
        self.lock = None
        self.activity = "starting"

    def log(self, text):
        self.args.progress.event(f"[{self.label()}] {text}")

    def label(self):
        return f"gpu {self.device}" if self.device is not None else "cpu"

    def prepare(self):
        """A pristine copy of the course and its build folder, made once and kept between runs."""
        # The first of this GPU's folders no other process holds: Slurm tasks that each see their GPU
        # as device 0 on one node get a folder each, and later tasks reuse their builds.
        for n in range(64):
            self.dir = self.base.with_name(self.base.name + (f"-{n}" if n else ""))
            self.dir.mkdir(parents=True, exist_ok=True)
            self.lock = open(self.dir / "lock", "w")
            try:
                fcntl.flock(self.lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                self.lock.close()
        else:
            raise RuntimeError(f"every folder of {self.base} is in use")
        self.course, self.build = self.dir / "course", self.dir / "build"
        files = course_files()
        marker = self.dir / "course.sha256"
        wanted = digest(files, ROOT)
        if not marker.exists() or marker.read_text() != wanted:
            self.activity = "copying the course"
            shutil.rmtree(self.course, ignore_errors=True)
            shutil.rmtree(self.build, ignore_errors=True)
            for rel in files:
                (self.course / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / rel, self.course / rel)
            marker.write_text(wanted)
        if not (self.build / "build.ninja").exists():
            self.activity = "setting up the build"
            self.log("setting up the course's build (once per worker)")
            setup = run_child(["meson", "setup", self.build, self.course, f"-Dgpu_arch={self.args.gpu_arch}"],
                              env=self.env)
            if setup.returncode != 0:
                raise RuntimeError("meson setup failed:\n" + (setup.stdout + setup.stderr)[-3000:])

    def put_chapters(self, sources):
        """The course's chapters/, with the submission's files over it (chapters graded only)."""
        for chapter in self.args.chapter_list:
            target = self.course / "chapters" / chapter
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(ROOT / "chapters" / chapter, target)
            for rel, path in sources.get(chapter, {}).items():
                if path.stat().st_size <= MAX_SOURCE_BYTES:
                    (target / rel).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(path, target / rel)
            # Every file new to the build: the objects of the last submission graded are never reused.
            for path in target.rglob("*"):
                os.utime(path)

    def compile(self, chapter, results):
        build = run_child(["meson", "compile", "-C", self.build, "grade_" + chapter], env=self.env, timeout=900)
        if build.returncode == 0:
            return True
        log = "\n".join(line for line in (build.stdout + build.stderr).splitlines() if not line.startswith("INFO:"))
        log = log[log.find("FAILED:"):] if "FAILED:" in log else log
        (results / chapter).mkdir(parents=True, exist_ok=True)
        (results / chapter / "build_error.txt").write_text(log)
        return False

    def run_exercise(self, chapter, exercise, results, timeout):
        thresholds = self.course / "grader" / "thresholds.json"
        command = [sys.executable, self.course / "grader" / "run_exercise.py",
                   "--results-file", results / chapter / f"{exercise}.json", "--thresholds", thresholds,
                   "--timeout", f"{timeout:.0f}",
                   "--wrap", json.dumps(sandbox_command([self.dir]) if self.args.sandboxed else []),
                   "--", self.build / "grader" / f"grade_{chapter}", "--exercise", exercise,
                   "--thresholds", thresholds, "--mode", "grade", "--results-dir", "/tmp/results"]
        env = {k: v for k, v in self.env.items() if not k.startswith("COURSE_")}
        done = run_child(command, env=env)
        (results / chapter).mkdir(parents=True, exist_ok=True)
        with open(results / chapter / "output.txt", "a") as log:
            log.write(done.stdout + done.stderr)

    def grade(self, name, source, out):
        """Grades one submission into out/students/NAME, all or nothing."""
        staging = out / "staging" / name
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        started = time.time()
        summary = {"student": name, "source": str(source), "course": self.version,
                   "gpu": {"name": self.gpu_name, "device": self.device, "host": socket.gethostname()},
                   "sandbox": "bubblewrap" if self.args.sandboxed else "none", "chapters_graded": self.args.chapter_list,
                   "started": datetime.datetime.now().isoformat(timespec="seconds"), "flags": [], "error": None}
        results = staging / "results"
        results.mkdir()
        try:
            submission = materialize(source, staging / "unpacked")
            sources = chapter_sources(submission, self.args.chapter_list)
            summary["submission_hash"] = submission_hash(sources)
            summary["flags"] = flags_for(submission, sources, course_files())
            if not any(sources.values()):
                summary["flags"].append("no files under chapters/: graded as the untouched skeleton")
            self.put_chapters(sources)
            deadline = started + self.args.time_limit
            data = json.loads((self.course / "grader" / "thresholds.json").read_text())
            for chapter in self.args.chapter_list:
                (results / chapter).mkdir(parents=True, exist_ok=True)
                self.activity = f"{name}: building {chapter}"
                if not self.compile(chapter, results):
                    self.log(f"{name}: {chapter} did not compile")
                    continue
                for exercise in self.args.exercises[chapter]:
                    left = deadline - time.time()
                    if left < 5:
                        record = error_record({}, f"not run: the submission's time limit "
                                                  f"({self.args.time_limit:g} s) ran out", data, chapter, exercise)
                        (results / chapter / f"{exercise}.json").write_text(json.dumps(record, indent=2))
                        continue
                    self.activity = f"{name}: {chapter}/{exercise}"
                    self.run_exercise(chapter, exercise, results, min(self.args.exercise_timeout, left))
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
            summary["error"] = str(e)
            self.log(f"{name}: {e}")
        graded_files = sorted(results.glob("*/*.json"))
        tampered = []
        for path in graded_files:  # every result says what graded it
            record = json.loads(path.read_text())
            record.update(course=self.version, gpu=summary["gpu"], student=name)
            path.write_text(json.dumps(record, indent=2) + "\n")
            if record.get("tampering"):
                tampered.append(f"{record['chapter']}/{record['exercise']}")
        if tampered:
            summary["flags"].append(f"tampering in {len(tampered)} exercise(s) ({', '.join(tampered[:6])}"
                                    f"{', ...' if len(tampered) > 6 else ''}): lines on the results channel did "
                                    "not come from the grader and were ignored (each exercise's results say more)")
        summary["seconds"] = round(time.time() - started, 1)
        summary.update(class_report.totals(results, self.course / "grader" / "thresholds.json",
                                           self.args.chapter_list))
        report = subprocess.run([sys.executable, self.course / "grader" / "report.py", "--results", results,
                                 "--thresholds", self.course / "grader" / "thresholds.json",
                                 "--out", staging / "report", "--title", f"CUDA course: {name}"]
                                + sum((["--note", f] for f in summary["flags"]), []),
                                capture_output=True, text=True)
        if report.returncode != 0:
            summary["error"] = (summary["error"] or "") + " the report failed: " + report.stderr[-500:]
        shutil.rmtree(staging / "unpacked", ignore_errors=True)
        (staging / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
        final = out / "students" / name
        final.parent.mkdir(parents=True, exist_ok=True)
        if final.exists():  # a forced regrade: the old result goes only once the new one is whole
            shutil.move(final, staging.with_name(name + ".old"))
        staging.rename(final)
        shutil.rmtree(staging.with_name(name + ".old"), ignore_errors=True)
        return summary


# ---- Progress --------------------------------------------------------------------------------------

class Progress:
    def __init__(self, total):
        self.total, self.done, self.seconds = total, 0, []
        self.lock = threading.Lock()
        self.workers = []
        self.started = time.time()

    def event(self, text):
        with self.lock:
            print(f"{datetime.datetime.now():%H:%M:%S} {text}", flush=True)

    def finished(self, seconds):
        with self.lock:
            self.done += 1
            self.seconds.append(seconds)

    def line(self):
        with self.lock:
            left = self.total - self.done
            busy = ", ".join(f"{w.label()}: {w.activity}" for w in self.workers)
            if self.seconds and left:
                eta = sum(self.seconds) / len(self.seconds) * left / max(len(self.workers), 1)
                remaining = f"about {eta / 60:.0f} min left" if eta >= 60 else f"about {eta:.0f} s left"
            else:
                remaining = "all done" if not left else "time left: known after the first submission"
            return f"{self.done}/{self.total} graded; {remaining}; workers: {busy}"

    def heartbeat(self, stop, every=30):
        while not stop.wait(every):
            self.event(self.line())


# ---- The batch ---------------------------------------------------------------------------------------

def pending(submissions, out, force):
    """The submissions to grade: not finished, or changed since, or all with --force."""
    todo = []
    for name, source in submissions:
        summary = out / "students" / name / "summary.json"
        if force or not summary.exists():
            todo.append((name, source))
            continue
        done = json.loads(summary.read_text())
        if source.is_dir() or source.name.endswith(ARCHIVES):  # a git URL is not fetched again to compare
            unpacked = out / "staging" / (name + ".check")
            shutil.rmtree(unpacked, ignore_errors=True)
            try:
                sources = chapter_sources(materialize(source, unpacked), done["chapters_graded"])
                changed = submission_hash(sources) != done.get("submission_hash")
            except RuntimeError:
                changed = True
            finally:
                shutil.rmtree(unpacked, ignore_errors=True)
            if changed:
                todo.append((name, source))
    return todo


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("submissions", type=pathlib.Path, help="a folder of submissions")
    parser.add_argument("--out", type=pathlib.Path, default=ROOT / "build" / "class", help="(default: build/class)")
    parser.add_argument("--chapters", nargs="+", help="grade these chapters only (default: all)")
    parser.add_argument("--only", help="grade this one submission (by name, or by its index in the sorted list)")
    parser.add_argument("--force", action="store_true", help="regrade finished submissions too")
    parser.add_argument("--time-limit", type=float, default=1800, help="seconds per submission (default 1800)")
    parser.add_argument("--exercise-timeout", type=float, default=300, help="seconds per exercise (default 300)")
    parser.add_argument("--gpu-arch", default="auto", help="Meson's gpu_arch option for the workers' builds")
    parser.add_argument("--unsandboxed", action="store_true",
                        help="grade without bubblewrap (the code graded could then write anything the user can)")
    parser.add_argument("--no-rollup", action="store_true", help="do not build the roll-up (a Slurm array task)")
    parser.add_argument("--count", action="store_true", help="print how many submissions there are, and stop")
    args = parser.parse_args(argv)

    exercises = chapters_and_exercises()
    args.chapter_list = args.chapters or list(exercises)
    unknown = [c for c in args.chapter_list if c not in exercises]
    if unknown:
        sys.exit(f"no chapter {', '.join(unknown)}; the chapters are: {', '.join(exercises)}")
    args.exercises = exercises
    if not args.submissions.is_dir():
        sys.exit(f"{args.submissions} is not a folder of submissions")
    if args.count:
        print(len(find_submissions(args.submissions)))
        return 0
    args.sandboxed = not args.unsandboxed
    problem = None if args.unsandboxed else sandbox_problem()
    if problem:
        sys.exit(f"cannot isolate the submissions: {problem}.\n"
                 "Install it, or pass --unsandboxed to grade without isolation (results say so).")

    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    version = course_version()
    batch_file = out / "batch.json"
    if batch_file.exists() and not args.force:
        earlier = json.loads(batch_file.read_text())["course"]
        if earlier["grading_hash"] != version["grading_hash"]:
            sys.exit(f"{out} holds results graded with other graders or grading data (hash "
                     f"{earlier['grading_hash']}, commit {earlier['commit']}; now {version['grading_hash']}, "
                     f"{version['commit']}). Grade into another --out, or pass --force to regrade everything.")
    fresh = batch_file.with_name(f"batch.json.{os.getpid()}")  # array tasks write it at once: whole or not at all
    fresh.write_text(json.dumps({"course": version, "submissions": str(args.submissions.resolve())}, indent=2))
    fresh.replace(batch_file)

    submissions = find_submissions(args.submissions)
    if args.only is not None:
        chosen = [s for s in submissions if s[0] == args.only]
        if not chosen and args.only.isdigit() and int(args.only) < len(submissions):
            chosen = [submissions[int(args.only)]]
        if not chosen:
            sys.exit(f"no submission {args.only} in {args.submissions}")
        submissions = chosen
    todo = pending(submissions, out, args.force)
    print(f"{len(submissions)} submissions, {len(submissions) - len(todo)} already graded, {len(todo)} to grade; "
          f"course {version['commit']}, graders {version['grading_hash']}; "
          f"{'sandboxed with bubblewrap' if args.sandboxed else 'NOT sandboxed'}", flush=True)

    args.progress = Progress(len(todo))
    work = queue.Queue()
    for item in todo:
        work.put(item)
    failures = []

    def serve(worker):
        try:
            worker.prepare()
        except (RuntimeError, OSError) as e:
            worker.activity = "broken"
            worker.log(f"cannot prepare: {e}")
            failures.append(str(e))
            return
        while True:
            try:
                name, source = work.get_nowait()
            except queue.Empty:
                worker.activity = "idle"
                return
            worker.log(f"{name}: grading")
            summary = worker.grade(name, source, out)
            args.progress.finished(summary["seconds"])
            if summary.get("error"):
                failures.append(f"{name}: {summary['error']}")
            worker.log(f"{name}: {summary['points']:g}/{summary['max_points']:g} points in {summary['seconds']:g} s"
                       + (f"; {len(summary['flags'])} flag(s)" if summary["flags"] else ""))
            worker.activity = "waiting"
            args.progress.event(args.progress.line())

    signal.signal(signal.SIGINT, interrupt)
    signal.signal(signal.SIGTERM, interrupt)
    if todo:
        workers = [Worker(out, device, name, args, version) for device, name in gpus()]
        args.progress.workers = workers
        stop = threading.Event()
        threading.Thread(target=args.progress.heartbeat, args=(stop,), daemon=True).start()
        threads = [threading.Thread(target=serve, args=(w,)) for w in workers]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        stop.set()
        if not work.empty():
            failures.append(f"{work.qsize()} submissions were not graded: no worker could run")
    if not args.no_rollup:
        class_report.main(["--class", str(out)])
    for failure in failures:
        print("problem: " + failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
