"""Fault-injection study: many damaged files of every format through `measure` (with and
without the size record from convert) and `import`, as a user runs them.

Not a test (it takes ~30-60 min on 2 cores); `tests/test_faults.py` runs a seeded subset in
`make test`. This is the evidence behind the fault study's table (results/reference/faults/,
docs/how-it-measures.md): per damage kind and command, how runs ended, the largest memory any
process tree reached (its own peak RSS and its waited-for children's, from ``wait4``), and the
kernel's out-of-memory kills during the study.

    .venv/bin/python tools/fault_study.py --out /tmp/faults --seeds 2 \
        --table results/reference/faults/faults.md

Every run must end in one of two ways: exit 0 with a result the checksums proved, or exit 2
with at most one short line naming the file. Anything else (a signal, a traceback, a long
dump, a line that names no file, a time-out) is counted as ``bad`` and listed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

from analysis import formats

HEPFMT = [sys.executable, "-m", "analysis.cli"]
EVENTS, CLUSTER = 600, 250
#: Each format's first compressed test variant (the registry's, as tests/test_faults.py).
PLAIN = {f: formats.get(f).compressed_variant for f in formats.names()}
IMPORTABLE = {"ttree", "rntuple", "parquet"}
BLOCK = 4096

Damage = Callable[[bytearray, random.Random], None]


def _flips(n: int) -> Damage:
    def damage(d: bytearray, rng: random.Random) -> None:
        for _ in range(n):
            d[rng.randrange(len(d))] ^= 1 << rng.randrange(8)
    return damage


def _blocks(d: bytearray, rng: random.Random) -> tuple[int, int]:
    n = max(1, len(d) // BLOCK)
    a, b = rng.sample(range(n), 2) if n > 1 else (0, 0)
    return a * BLOCK, b * BLOCK


def _swap(d: bytearray, rng: random.Random) -> None:
    a, b = _blocks(d, rng)
    x, y = bytes(d[a:a + BLOCK]), bytes(d[b:b + BLOCK])
    if len(x) == len(y):
        d[a:a + BLOCK], d[b:b + BLOCK] = y, x


def _copy(d: bytearray, rng: random.Random) -> None:
    a, b = _blocks(d, rng)
    src = bytes(d[a:a + BLOCK])
    d[b:b + len(src)] = src[:len(d) - b]


def _zero_page(d: bytearray, rng: random.Random) -> None:
    s = rng.randrange(max(1, len(d) - BLOCK))
    d[s:s + BLOCK] = bytes(min(BLOCK, len(d) - s))


def _truncate_random(d: bytearray, rng: random.Random) -> None:
    del d[rng.randrange(1, max(2, len(d))):]


def _garbage(d: bytearray, rng: random.Random) -> None:
    d[:] = rng.randbytes(len(d))


#: kind -> (damage, whether it is random: random kinds are made once per seed)
DAMAGE: dict[str, tuple[Damage, bool]] = {
    "empty": (lambda d, rng: d.clear(), False),
    "truncated-half": (lambda d, rng: d.__delitem__(slice(len(d) // 2, None)), False),
    "truncated-tail": (lambda d, rng: d.__delitem__(slice(len(d) - 100, None)), False),
    "header-zeroed": (lambda d, rng: d.__setitem__(slice(0, 512), bytes(min(512, len(d)))),
                      False),
    "tail-zeroed": (lambda d, rng: d.__setitem__(slice(-BLOCK, None), bytes(min(BLOCK, len(d)))),
                    False),
    "truncated-random": (_truncate_random, True),
    "1-flip": (_flips(1), True),
    "10-flips": (_flips(10), True),
    "100-flips": (_flips(100), True),
    "zeroed-page": (_zero_page, True),
    "block-swap": (_swap, True),
    "block-copy": (_copy, True),
    "garbage": (_garbage, True),
    "appended": (lambda d, rng: d.extend(rng.randbytes(BLOCK)), True),
}


@dataclass
class Run:
    format: str
    kind: str
    seed: int
    command: str
    outcome: str  # proven | refused | bad
    rc: int
    signal: int
    peak_rss_mb: float
    seconds: float
    line: str


def _largest_file(path: Path) -> Path:
    if path.is_file():
        return path
    return max((p for p in path.rglob("*") if p.is_file()), key=lambda p: p.stat().st_size)


def damage(good: Path, dst: Path, kind: str, seed: int) -> Path:
    """A copy of ``good`` (a file or a dataset directory, whose largest file is damaged)."""
    if good.is_dir():
        shutil.copytree(good, dst)
        target = _largest_file(dst)
    else:
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(good, dst)
        target = dst
    data = bytearray(target.read_bytes())
    fn, _ = DAMAGE[kind]
    fn(data, random.Random(f"{seed}-{kind}-{good.name}"))
    target.write_bytes(bytes(data))
    return dst


def run(argv: list[str], names: Path, timeout: float, log: Path) -> tuple[int, int, float,
                                                                           float, str, str]:
    """(exit code, signal, peak RSS in MB of the process tree, seconds, outcome, last line)."""
    t0 = time.monotonic()
    with open(log, "w") as err:
        proc = subprocess.Popen([*HEPFMT, *map(str, argv)], stdout=subprocess.DEVNULL,
                                stderr=err, env={**os.environ, "PYTHONWARNINGS": "ignore"},
                                start_new_session=True)
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - t0 > timeout:
                os.killpg(proc.pid, 9)  # the whole tree: a reader child may be the one stuck
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.05)
        proc.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.monotonic() - t0
    text = log.read_text(errors="replace")
    lines = [x for x in text.splitlines() if x.strip()]
    last = lines[-1] if lines else ""
    rc = proc.returncode
    sig = -rc if rc < 0 else 0
    if rc == 0:
        outcome = "proven"
    elif (rc == 2 and "Traceback" not in text and len(lines) <= 3 and len(last) <= 400
          and names.name in last):
        outcome = "refused"
    else:
        outcome = "bad"
    if seconds > timeout:
        outcome, last = "bad", f"timed out after {timeout:.0f} s"
    return rc, sig, usage.ru_maxrss / 1024, seconds, outcome, last[:400]


def oom_kills() -> int | None:
    try:
        out = subprocess.run(["dmesg"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return sum("killed process" in x.lower() for x in out.splitlines())


def prepare(work: Path) -> tuple[Path, dict[str, Path], dict[str, Path]]:
    """The source sample, one proven file per format and its size record."""
    src = work / "src" / "dy.arrow"
    if not src.exists():
        subprocess.run([*HEPFMT, "generate", "--process", "DYJetsToLL", "--events", str(EVENTS),
                        "--seed", "7", "-o", str(src)], check=True)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from analysis import formats

    good, records = {}, {}
    for fmt, variant in PLAIN.items():
        out = work / "good" / f"{fmt}.{formats.extension(fmt)}"
        rec = work / "good" / f"{fmt}.size.json"
        if not rec.exists():
            readers = ",".join(formats.get(fmt).readers)
            subprocess.run([*HEPFMT, "convert", str(src), "--format", fmt, "--variant", variant,
                            "--cluster-size", str(CLUSTER), "-o", str(out), "--size-output",
                            str(rec), "--prove", readers], check=True)
        good[fmt], records[fmt] = out, rec
    return src, good, records


def commands(fmt: str, bad: Path, src: Path, record: Path, out: Path) -> dict[str, list]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from analysis import formats

    measure = ["measure", bad, "--source", src, "--format", fmt, "--variant", PLAIN[fmt],
               "--cluster-size", CLUSTER, "--readers", ",".join(formats.get(fmt).readers),
               "--selection", "all=*", "--selection", "ten=nMuon,Muon_pt,Jet_pt",
               "--modes", "warm", "--repetitions", 3, "--min-repetitions", 3]
    cmds = {"measure": [*measure, "-o", out / "m.json"],
            "measure --size-record": [*measure, "--size-record", record, "-o", out / "r.json"]}
    if fmt in IMPORTABLE:
        cmds["import"] = ["import", bad, "-o", out / "s.arrow"]
    return cmds


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="scratch directory (deleted files kept small)")
    ap.add_argument("--seeds", type=int, default=2, help="seeds per random damage kind")
    ap.add_argument("--first-seed", type=int, default=0, help="seeds are FIRST .. FIRST+SEEDS-1; "
                    "the fixed kinds (empty, truncations, zeroed header/tail) run at seed 0 only")
    ap.add_argument("--formats", default=",".join(PLAIN))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=900.0)
    ap.add_argument("--table", help="write the Markdown table here (and its JSON beside it)")
    a = ap.parse_args()
    work = Path(a.out)
    src, good, records = prepare(work)
    cases = [(fmt, kind, seed) for fmt in a.formats.split(",") for kind, (_, rnd) in
             DAMAGE.items() for seed in (range(a.first_seed, a.first_seed + a.seeds) if rnd
                                          else [0] if a.first_seed == 0 else [])]
    oom_before = oom_kills()

    def one(case: tuple[str, str, int]) -> list[Run]:
        fmt, kind, seed = case
        where = work / "cases" / f"{fmt}-{kind}-{seed}"
        shutil.rmtree(where, ignore_errors=True)
        bad = damage(good[fmt], where / good[fmt].name, kind, seed)
        runs = []
        for name, argv in commands(fmt, bad, src, records[fmt], where).items():
            rc, sig, rss, sec, outcome, line = run(argv, bad, a.timeout, where / "stderr.txt")
            runs.append(Run(fmt, kind, seed, name, outcome, rc, sig, round(rss, 1),
                            round(sec, 2), line))
            print(f"{fmt:8} {kind:16} {seed} {name:22} {outcome:8} rc={rc:<4} "
                  f"{rss:7.0f} MB {sec:6.1f} s  {line[:110]}", flush=True)
        shutil.rmtree(where, ignore_errors=True)
        return runs

    with ThreadPoolExecutor(a.jobs) as pool:
        runs = [r for rs in pool.map(one, cases) for r in rs]
    oom_after = oom_kills()
    text = table(runs, len(cases), oom_before, oom_after)
    print(text)
    if a.table:
        Path(a.table).parent.mkdir(parents=True, exist_ok=True)
        Path(a.table).write_text(text)
        Path(a.table).with_suffix(".json").write_text(json.dumps([asdict(r) for r in runs],
                                                                 indent=1))
    return 1 if any(r.outcome == "bad" for r in runs) else 0


def table(runs: list[Run], files: int, oom_before: int | None, oom_after: int | None) -> str:
    out = [f"# Fault injection: {files} damaged files, {len(runs)} runs", "",
           "| format | command | runs | proven (exit 0) | refused (exit 2, one line) | bad "
           "| largest peak RSS (MB) |", "|---|---|---|---|---|---|---|"]
    keys = sorted({(r.format, r.command) for r in runs})
    for fmt, cmd in keys:
        rs = [r for r in runs if (r.format, r.command) == (fmt, cmd)]
        c = Counter(r.outcome for r in rs)
        out.append(f"| {fmt} | {cmd} | {len(rs)} | {c['proven']} | {c['refused']} | {c['bad']} "
                   f"| {max(r.peak_rss_mb for r in rs):.0f} |")
    c = Counter(r.outcome for r in runs)
    out.append(f"| **all** | | {len(runs)} | {c['proven']} | {c['refused']} | {c['bad']} | "
               f"{max(r.peak_rss_mb for r in runs):.0f} |")
    out += ["", "By damage kind:", "", "| kind | runs | proven | refused | bad |",
            "|---|---|---|---|---|"]
    for kind in DAMAGE:
        rs = [r for r in runs if r.kind == kind]
        k = Counter(r.outcome for r in rs)
        out.append(f"| {kind} | {len(rs)} | {k['proven']} | {k['refused']} | {k['bad']} |")
    killed = (None if oom_before is None or oom_after is None else oom_after - oom_before)
    out += ["", f"Kernel out-of-memory kills during the study (dmesg): "
                f"{'unreadable' if killed is None else killed}.",
            f"Processes ended by a signal: {sum(r.signal != 0 for r in runs)}."]
    bad = [r for r in runs if r.outcome == "bad"]
    if bad:
        out += ["", "Bad outcomes:", ""]
        out += [f"- {r.format} {r.kind} seed {r.seed} {r.command}: rc {r.rc}: {r.line}"
                for r in bad]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
