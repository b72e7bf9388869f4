#!/usr/bin/env python3
"""Compares two builds of cmc-bench on the same jobs, interleaved.

Each job runs REPS times per build, each run a child `BUILD __run-job JOB`
(a fresh process, as the suite's own runs), the two builds alternating
(old, new in odd repetitions, new, old in even ones), so that a change of
the machine's load falls on both. The counts (distinct, generated, depth)
of every run of a job must be the same in both builds, else the job is
marked FAIL and the exit code is 1.

Printed: one line per run (wall time of the check as the child measures
it, CPU time of the child process from getrusage: on a shared machine the
CPU time is the steadier figure), then a Markdown table, a row per job:
the medians of each build, their ratios new / old, and the range of the
CPU ratios of the runs paired in one repetition (the noise); and the load
average at the start and the end.

Usage: bench/ab.py OLD_BINARY NEW_BINARY [REPS] [JOB ...]
where a JOB is the words `__run-job` takes, e.g. "check two-phase 9 cmc 2";
without JOBs, the two-phase rows RM=7..9 and the World rows (library
path), with 1 and 2 workers.
"""
import resource
import statistics
import subprocess
import sys
import time

DEFAULT_JOBS = [
    f"check two-phase {rm} cmc {workers}" for rm in (7, 8, 9) for workers in (1, 2)
] + [
    f"check world {case} cmc {workers}"
    for case in ("reqack", "two-phase-c", "paxos", "abd")
    for workers in (1, 2)
] + ["check world reqack-c-properties cmc 2"]

COUNTS = ("distinct", "generated", "depth")


def load_average():
    with open("/proc/loadavg") as file:
        return " ".join(file.read().split()[:3])


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(binary, job):
    """One child run of `job`: its sample's fields and its CPU seconds."""
    before = children_cpu()
    output = subprocess.run(
        [binary, "__run-job", *job.split()],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        text=True,
        check=True,
    ).stdout
    cpu = children_cpu() - before
    line = next(
        line for line in output.splitlines() if line.startswith("cmc-bench-sample ")
    )
    fields = dict(word.split("=", 1) for word in line.split()[1:])
    return fields, cpu


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    builds = {"old": argv[1], "new": argv[2]}
    reps = int(argv[3]) if len(argv) > 3 else 3
    jobs = argv[4:] or DEFAULT_JOBS
    started = (time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), load_average())
    runs = {(job, name): [] for job in jobs for name in builds}
    for rep in range(1, reps + 1):
        print(f"# repetition {rep}, load average {load_average()}", flush=True)
        order = ["old", "new"] if rep % 2 else ["new", "old"]
        for job in jobs:
            for name in order:
                fields, cpu = run(builds[name], job)
                runs[(job, name)].append((fields, cpu))
                print(f"{name} | {job} | {' '.join(f'{k}={v}' for k, v in fields.items())} "
                      f"cpu_s={cpu:.3f}", flush=True)
    ended = (time.strftime("%H:%M:%S UTC", time.gmtime()), load_average())
    print(f"\nStarted {started[0]} (load average {started[1]}), "
          f"ended {ended[0]} (load average {ended[1]}); {reps} runs per build and job.\n")
    print("| job | distinct | generated | depth | verdict | wall old s | wall new s "
          "| wall new/old | CPU old s | CPU new s | CPU new/old | pairs' CPU new/old | check |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    failed = False
    for job in jobs:
        samples = runs[(job, "old")] + runs[(job, "new")]
        counts = {tuple(fields[key] for key in COUNTS + ("verdict",)) for fields, _ in samples}
        same = len(counts) == 1
        failed |= not same
        wall = {name: statistics.median(int(f["wall_ns"]) / 1e9 for f, _ in runs[(job, name)])
                for name in builds}
        cpu = {name: statistics.median(c for _, c in runs[(job, name)]) for name in builds}
        pairs = [new[1] / old[1] for old, new in zip(runs[(job, "old")], runs[(job, "new")])]
        distinct, generated, depth, verdict = sorted(counts)[0]
        print(f"| {job} | {distinct} | {generated} | {depth} | {verdict} "
              f"| {wall['old']:.3f} | {wall['new']:.3f} | {wall['new'] / wall['old']:.3f} "
              f"| {cpu['old']:.3f} | {cpu['new']:.3f} | {cpu['new'] / cpu['old']:.3f} "
              f"| {min(pairs):.3f}-{max(pairs):.3f} "
              f"| {'ok' if same else 'FAIL: counts differ'} |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
