#!/usr/bin/env python3
"""Grades a small class through slurm/submit.sh on a real one-node Slurm cluster that this test starts.

    test_slurm.py COURSE_ROOT

Needs Debian's slurmctld, slurmd, slurm-client and munge, and root (CI installs them; elsewhere the
test reports SKIP, exit code 77). It writes a slurm.conf for this machine with one fake GPU
(gres gpu:1, no device file), starts munged, slurmctld and slurmd on their own ports, submits
three submissions of chapter 01 (a solution, a skeleton, one that does not compile), waits for the
array job and the roll-up job, and checks that every submission was graded and the roll-up lists
them with the right verdicts. Without a real GPU the graders skip; with one they grade.
"""
import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import tempfile
import time

SKIP = 77


def main():
    root = pathlib.Path(sys.argv[1]).resolve()
    needed = ["slurmctld", "slurmd", "sbatch", "squeue", "munged"]
    missing = [n for n in needed if not shutil.which(n)]
    if missing or os.geteuid() != 0:
        print(f"SKIP: needs root and Slurm ({', '.join(missing) or 'not root'}): "
              "apt-get install slurmctld slurmd slurm-client munge")
        return SKIP
    host = socket.gethostname().split(".")[0]
    with tempfile.TemporaryDirectory(prefix="course-slurm-") as tmp:
        tmp = pathlib.Path(tmp)
        for d in ("state", "spool", "munge", "log"):
            (tmp / d).mkdir()
        key = tmp / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o600)
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1 << 20)
        conf = tmp / "slurm.conf"
        conf.write_text(f"""ClusterName=coursetest
SlurmctldHost={host}
SlurmUser=root
SlurmdUser=root
SlurmctldPort=16817
SlurmdPort=16818
AuthType=auth/munge
AuthInfo=socket={tmp}/munge/munge.socket
StateSaveLocation={tmp}/state
SlurmdSpoolDir={tmp}/spool
SlurmctldPidFile={tmp}/slurmctld.pid
SlurmdPidFile={tmp}/slurmd.pid
SlurmctldLogFile={tmp}/log/slurmctld.log
SlurmdLogFile={tmp}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
MpiDefault=none
ReturnToService=2
NodeName={host} CPUs={os.cpu_count()} RealMemory={max(memory - 512, 1000)} Gres=gpu:1 State=UNKNOWN
PartitionName=test Nodes={host} Default=YES MaxTime=INFINITE State=UP
""")
        (tmp / "gres.conf").write_text(f"NodeName={host} Name=gpu File=/dev/null\n")
        env = dict(os.environ, SLURM_CONF=str(conf))
        daemons = [
            subprocess.Popen(["munged", "--foreground", "--force", f"--key-file={key}",
                              f"--socket={tmp}/munge/munge.socket", f"--pid-file={tmp}/munge/munged.pid",
                              f"--log-file={tmp}/log/munged.log", f"--seed-file={tmp}/munge/seed"])]
        time.sleep(1)
        daemons.append(subprocess.Popen(["slurmctld", "-D", "-i", "-f", conf], env=env))
        time.sleep(2)
        daemons.append(subprocess.Popen(["slurmd", "-D", "-f", conf], env=env))
        try:
            return run_class(root, tmp, env)
        finally:
            for d in reversed(daemons):
                d.terminate()
            for d in daemons:
                try:
                    d.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    d.kill()
            for log in sorted((tmp / "log").glob("*.log")):
                text = log.read_text(errors="replace")
                if "error" in text.lower():
                    print(f"--- {log.name} (errors) ---\n" + "\n".join(
                        line for line in text.splitlines() if "error" in line.lower())[-3000:])


def run_class(root, tmp, env):
    for _ in range(30):  # the node registers with the controller
        info = subprocess.run(["sinfo", "-h", "-o", "%T"], env=env, capture_output=True, text=True)
        if info.returncode == 0 and info.stdout.strip() in ("idle", "mixed"):
            break
        time.sleep(1)
    else:
        print(f"the node did not come up: sinfo says {info.stdout.strip()!r} {info.stderr.strip()!r}")
        return 1
    made = subprocess.run([sys.executable, root / "tests" / "class" / "make_submissions.py", tmp / "class",
                           "--chapters", "01_runtime"], capture_output=True, text=True)
    if made.returncode != 0:
        print(made.stdout + made.stderr)
        return 1
    subs = tmp / "class" / "submissions"
    keep = {"s01_solution_checkout", "s06_nothing_submitted", "s10_does_not_compile"}
    for entry in subs.iterdir():
        if entry.name not in keep:
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
    expected = json.loads((tmp / "class" / "expected.json").read_text())
    expected["students"] = {k: v for k, v in expected["students"].items() if k in keep}
    (tmp / "class" / "expected.json").write_text(json.dumps(expected))
    out = tmp / "graded"
    submit_env = dict(env, CHAPTERS="01_runtime")
    sandboxed = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import grade_class; "
                                "print(grade_class.sandbox_problem() or '')", root / "grader"],
                               capture_output=True, text=True).stdout.strip()
    if sandboxed:  # a container where bubblewrap cannot work: the tasks grade without it
        print(f"note: {sandboxed}; the tasks grade unsandboxed")
        submit_env["GRADE_CLASS_OPTIONS"] = "--unsandboxed"
    # This machine may have fewer cores than a task asks for: the options after OUT go to sbatch.
    submitted = subprocess.run([root / "slurm" / "submit.sh", subs, out, "--cpus-per-task=1"], env=submit_env,
                               capture_output=True,
                               text=True)
    print(submitted.stdout + submitted.stderr)
    if submitted.returncode != 0:
        return 1
    deadline = time.time() + 1200
    while time.time() < deadline:
        queue = subprocess.run(["squeue", "-h"], env=env, capture_output=True, text=True)
        if queue.returncode == 0 and not queue.stdout.strip():
            break
        time.sleep(5)
    else:
        print("the jobs did not finish in 20 minutes:\n" + queue.stdout)
        return 1
    for log in sorted((out / "slurm").glob("*.out")):
        print(f"--- {log.name} ---\n" + log.read_text(errors="replace")[-2500:])
    if not (out / "rollup.csv").exists():
        print("no roll-up: the dependent job did not run")
        return 1
    gpu = shutil.which("nvidia-smi") and subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode == 0
    check = subprocess.run([sys.executable, root / "tests" / "class" / "check_batch.py", out,
                            tmp / "class" / "expected.json"] + ([] if gpu else ["--no-gpu"]),
                           capture_output=True, text=True)
    print(check.stdout + check.stderr)
    return check.returncode


if __name__ == "__main__":
    sys.exit(main())
