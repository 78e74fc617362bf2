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

Two families of damage: bytes changed blindly (:data:`DAMAGE`: flips, truncations, swapped
blocks), and structural damage (:data:`STRUCTURAL`) that keeps a file well-formed so that only
a proof that sees order, type and compensating changes refuses it (clusters, i.e. row groups,
stripes, batches or baskets, in another order or duplicated; one branch's clusters swapped; a
float re-declared as int32; two values changed so their sum holds), hostile but valid files (a
huge entry count, a 3 GB sparse tail), and a size record that is not one (``/dev/zero``, a
FIFO, the wrong shape, nested too deep): those run ``measure --size-record`` only.
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

import numpy as np
import pyarrow as pa

from hepfmt import formats

HEPFMT = [sys.executable, "-m", "hepfmt.cli"]
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


# ---- structural damage: a well-formed file (or size record) that is not the source's -----------

#: A float branch of every sample (flat: one value per event) and what damage is done to.
FLOAT_BRANCH = "MET_pt"


@dataclass(frozen=True)
class Case:
    """What a structural damage starts from: a good file of ``format``, its size record, and
    the source it was written from."""

    format: str
    good: Path
    record: Path
    source: Path


@dataclass(frozen=True)
class Structural:
    """A damage that needs the file's structure: ``make(case, dst, rng)`` writes the damaged
    file (or, for ``target == "record"``, the damaged size record) at ``dst``."""

    make: Callable[[Case, Path, random.Random], None]
    random: bool = False
    formats: frozenset[str] | None = None  # None: every format
    target: str = "file"  # "file" or "record" (the size record given to measure)


def _source_table(src: Path) -> pa.Table:
    return pa.ipc.open_file(pa.memory_map(str(src), "r")).read_all()


#: The format's own writer, unchecked (``convert`` would refuse the changed source first).
_WRITE = ("import sys; from pathlib import Path; from hepfmt import formats; "
          "f = formats.get(sys.argv[1]); "
          "f.write(Path(sys.argv[2]), Path(sys.argv[3]), f.variant(sys.argv[4]), "
          "int(sys.argv[5]), {})")


def _rewritten(change: Callable[[pa.Table, random.Random], pa.Table]):
    """A file written by the format's own writer from the source with ``change`` made to its
    values (the source's sidecar kept): a valid file of the format whose row groups, stripes,
    batches or baskets hold what ``change`` made of them."""
    def make(case: Case, dst: Path, rng: random.Random) -> None:
        fake = dst.parent / "changed-source" / case.source.name
        fake.parent.mkdir(parents=True, exist_ok=True)
        table = change(_source_table(case.source), rng)
        with pa.OSFile(str(fake), "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
            for batch in table.to_batches(max_chunksize=CLUSTER):
                w.write_batch(batch)
        # the sidecar of what was written (a writer sizes its datasets by it: HDF5); what is
        # measured is still proven against the real source's
        meta = json.loads(case.source.with_suffix(".json").read_text())
        fake.with_suffix(".json").write_text(json.dumps({**meta, "n_events": table.num_rows}))
        # in a process of its own: the study's threads never share a writer's library (ROOT)
        subprocess.run([sys.executable, "-c", _WRITE, case.format, str(fake), str(dst),
                        PLAIN[case.format], str(CLUSTER)], check=True, capture_output=True,
                       timeout=600)
        shutil.rmtree(fake.parent)
    return make


def _clusters_swapped(t: pa.Table, rng: random.Random) -> pa.Table:
    """The first two clusters swapped: row groups, stripes, batches, baskets in another order."""
    return pa.concat_tables([t.slice(CLUSTER, CLUSTER), t.slice(0, CLUSTER), t.slice(2 * CLUSTER)])


def _cluster_duplicated(t: pa.Table, rng: random.Random) -> pa.Table:
    """The first cluster in place of the second: as many entries, one cluster twice."""
    return pa.concat_tables([t.slice(0, CLUSTER), t.slice(0, CLUSTER), t.slice(2 * CLUSTER)])


def _set_flat(t: pa.Table, name: str, values: np.ndarray, type_: pa.DataType) -> pa.Table:
    return t.set_column(t.schema.get_field_index(name), name, pa.array(values, type=type_))


def _one_branch_swapped(t: pa.Table, rng: random.Random) -> pa.Table:
    """One branch's first two clusters swapped, every other branch intact: that branch's
    baskets (pages, chunks) in another order."""
    v = t.column(FLOAT_BRANCH).to_numpy()
    v = np.concatenate([v[CLUSTER:2 * CLUSTER], v[:CLUSTER], v[2 * CLUSTER:]])
    return _set_flat(t, FLOAT_BRANCH, v, t.schema.field(FLOAT_BRANCH).type)


def _sum_kept(t: pa.Table, rng: random.Random) -> pa.Table:
    """``d`` added to one value's bit pattern and taken from another's: the sum of the bit
    patterns (what a count-and-sum checksum compares) holds, two values differ."""
    v = t.column(FLOAT_BRANCH).to_numpy().copy()
    bits = v.view(np.uint32)
    i, j = rng.sample(range(len(v)), 2)
    d = rng.randrange(1, 1 << 12)
    bits[i] += np.uint32(d)
    bits[j] -= np.uint32(d)
    return _set_flat(t, FLOAT_BRANCH, v, t.schema.field(FLOAT_BRANCH).type)


def _parquet_row_groups(order: Callable[[int], list[int]]):
    """The good Parquet file's row groups written again in ``order`` (same compression)."""
    def make(case: Case, dst: Path, rng: random.Random) -> None:
        import pyarrow.parquet as pq

        f = pq.ParquetFile(case.good)
        with pq.ParquetWriter(dst, f.schema_arrow, compression="zstd") as w:
            for i in order(f.metadata.num_row_groups):
                w.write_table(f.read_row_group(i), row_group_size=CLUSTER)
    return make


def _redeclared(store_schema: bool):
    """A float branch's bits re-declared as int32: in the Parquet schema (with or without the
    Arrow schema beside it), or the Arrow IPC one; counts and bit patterns kept."""
    def make(case: Case, dst: Path, rng: random.Random) -> None:
        t = _source_table(case.source)
        t = _set_flat(t, FLOAT_BRANCH, t.column(FLOAT_BRANCH).to_numpy().view(np.int32),
                      pa.int32())
        if dst.suffix == ".parquet":
            import pyarrow.parquet as pq

            pq.write_table(t, dst, row_group_size=CLUSTER, compression="zstd",
                           store_schema=store_schema)
            return
        with pa.OSFile(str(dst), "wb") as sink, pa.ipc.new_file(sink, t.schema) as w:
            for batch in t.to_batches(max_chunksize=CLUSTER):
                w.write_batch(batch)
    return make


def _huge_entries(case: Case, dst: Path, rng: random.Random) -> None:
    """The TTree's entry count raised to 10^12 (a new cycle of the tree's key, its baskets
    unchanged): what made ``import`` run until it was killed."""
    shutil.copy(case.good, dst)
    code = ("import ROOT, sys; f = ROOT.TFile.Open(sys.argv[1], 'UPDATE'); "
            "t = f.Get('Events'); t.SetEntries(10**12); "
            "t.Write('', ROOT.TObject.kOverwrite); f.Close()")
    subprocess.run([sys.executable, "-c", code, str(dst)], check=True, capture_output=True,
                   timeout=300)


def _sparse_tail(case: Case, dst: Path, rng: random.Random) -> None:
    """3 GB of holes after the file's end (no block allocated): a file that claims to be huge."""
    target = _largest_file(_copy_good(case.good, dst))
    os.truncate(target, target.stat().st_size + (3 << 30))


def _copy_good(good: Path, dst: Path) -> Path:
    dst.parent.mkdir(parents=True, exist_ok=True)
    if good.is_dir():
        shutil.copytree(good, dst)
    else:
        shutil.copy(good, dst)
    return dst


def _record_link(target: str):
    def make(case: Case, dst: Path, rng: random.Random) -> None:
        dst.symlink_to(target)
    return make


def _record_fifo(case: Case, dst: Path, rng: random.Random) -> None:
    os.mkfifo(dst)


def _record_text(text: str):
    def make(case: Case, dst: Path, rng: random.Random) -> None:
        dst.write_text(text)
    return make


def _record_wrong_shape(case: Case, dst: Path, rng: random.Random) -> None:
    """The good record with every object value turned into a string: keys right, shape not."""
    doc = json.loads(case.record.read_text())
    dst.write_text(json.dumps({k: (json.dumps(v) if isinstance(v, dict | list) else v)
                               for k, v in doc.items()}))


#: kind -> how it is made; see :class:`Structural`
STRUCTURAL: dict[str, Structural] = {
    "clusters-swapped": Structural(_rewritten(_clusters_swapped)),
    "cluster-duplicated": Structural(_rewritten(_cluster_duplicated)),
    "one-branch-swapped": Structural(_rewritten(_one_branch_swapped)),
    "sum-kept": Structural(_rewritten(_sum_kept), random=True),
    "row-groups-reversed": Structural(_parquet_row_groups(lambda n: list(range(n))[::-1]),
                                      formats=frozenset({"parquet"})),
    "row-group-duplicated": Structural(_parquet_row_groups(lambda n: [0, *range(n)]),
                                       formats=frozenset({"parquet"})),
    "float-as-int32": Structural(_redeclared(True),
                                 formats=frozenset({"parquet", "feather"})),
    "float-as-int32-no-arrow-schema": Structural(_redeclared(False),
                                                 formats=frozenset({"parquet"})),
    "huge-entry-count": Structural(_huge_entries, formats=frozenset({"ttree"})),
    "sparse-3gb-tail": Structural(_sparse_tail),
    "record-dev-zero": Structural(_record_link("/dev/zero"), target="record"),
    "record-fifo": Structural(_record_fifo, target="record"),
    "record-wrong-shape": Structural(_record_wrong_shape, target="record"),
    "record-list": Structural(_record_text("[1, 2, 3]"), target="record"),
    "record-deep": Structural(_record_text("[" * 100_000 + "]" * 100_000), target="record"),
    "record-huge-naive": Structural(_record_text('{"naive_bytes": 1e300}'), target="record"),
}


def kinds() -> list[str]:
    """Every damage kind, blind then structural."""
    return [*DAMAGE, *STRUCTURAL]


def applies(kind: str, fmt: str) -> bool:
    s = STRUCTURAL.get(kind)
    return s is None or s.formats is None or fmt in s.formats


def is_random(kind: str) -> bool:
    return DAMAGE[kind][1] if kind in DAMAGE else STRUCTURAL[kind].random


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


def damage(good: Path, dst: Path, kind: str, seed: int, case: Case | None = None) -> Path:
    """A copy of ``good`` (a file or a dataset directory, whose largest file is damaged); for a
    structural kind, what it makes from ``case`` (a record kind makes the size record at
    ``dst`` and leaves the good file alone)."""
    if kind in STRUCTURAL:
        if case is None:
            raise ValueError(f"damage {kind!r} needs its case (format, record, source)")
        dst.parent.mkdir(parents=True, exist_ok=True)
        STRUCTURAL[kind].make(case, dst, random.Random(f"{seed}-{kind}-{good.name}"))
        return dst
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


def record_in_place(record: Path, bad: Path, dst: Path) -> Path:
    """The good file's size record, naming the damaged copy: as if the file had been damaged
    where ``convert`` wrote it, so that what refuses it is the record's size and digest, not
    the name of another file."""
    doc = json.loads(record.read_text())
    doc["file"] = str(bad)
    dst.write_text(json.dumps(doc))
    return dst


def run(argv: list[str], names: tuple[Path, ...], timeout: float,
        log: Path) -> tuple[int, int, float, float, str, str]:
    """(exit code, signal, peak RSS in MB of the process tree, seconds, outcome, last line);
    a refusal must name one of ``names`` (the data file, or the size record it was given)."""
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
          and any(n.name in last for n in names)):
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


def prepare(work: Path, names: list[str]) -> tuple[Path, dict[str, Path], dict[str, Path]]:
    """The source sample, one proven file per format of ``names`` and its size record."""
    src = work / "src" / "dy.arrow"
    if not src.exists():
        subprocess.run([*HEPFMT, "generate", "--process", "DYJetsToLL", "--events", str(EVENTS),
                        "--seed", "7", "-o", str(src)], check=True)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "analysis"))
    from hepfmt import formats

    good, records = {}, {}
    for fmt in names:
        variant = PLAIN[fmt]
        out = work / "good" / f"{fmt}.{formats.extension(fmt)}"
        rec = work / "good" / f"{fmt}.size.json"
        if not rec.exists():
            readers = ",".join(formats.get(fmt).readers)
            subprocess.run([*HEPFMT, "convert", str(src), "--format", fmt, "--variant", variant,
                            "--cluster-size", str(CLUSTER), "-o", str(out), "--size-output",
                            str(rec), "--prove", readers], check=True)
        good[fmt], records[fmt] = out, rec
    return src, good, records


def commands(fmt: str, bad: Path, src: Path, record: Path, out: Path,
             kind: str = "") -> dict[str, list]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "analysis"))
    from hepfmt import formats

    measure = ["measure", bad, "--source", src, "--format", fmt, "--variant", PLAIN[fmt],
               "--cluster-size", CLUSTER, "--readers", ",".join(formats.get(fmt).readers),
               "--selection", "all=*", "--selection", "ten=nMuon,Muon_pt,Jet_pt",
               "--modes", "warm", "--repetitions", 3, "--min-repetitions", 3]
    cmds = {"measure": [*measure, "-o", out / "m.json"],
            "measure --size-record": [*measure, "--size-record", record, "-o", out / "r.json"]}
    if kind in STRUCTURAL and STRUCTURAL[kind].target == "record":
        return {"measure --size-record": cmds["measure --size-record"]}
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
    ap.add_argument("--kinds", default=",".join(kinds()),
                    help="damage kinds to make (default: every kind)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=900.0)
    ap.add_argument("--table", help="write the Markdown table here (and its JSON beside it)")
    a = ap.parse_args()
    work = Path(a.out)
    src, good, records = prepare(work, a.formats.split(","))
    cases = [(fmt, kind, seed) for fmt in a.formats.split(",") for kind in a.kinds.split(",")
             if applies(kind, fmt)
             for seed in (range(a.first_seed, a.first_seed + a.seeds) if is_random(kind)
                          else [0] if a.first_seed == 0 else [])]
    oom_before = oom_kills()
    began = time.monotonic()
    unmade: list[str] = []  # cases the format's own writer could not make

    def one(case: tuple[str, str, int]) -> list[Run]:
        fmt, kind, seed = case
        where = work / "cases" / f"{fmt}-{kind}-{seed}"
        shutil.rmtree(where, ignore_errors=True)
        bad, record = good[fmt], records[fmt]
        case = Case(fmt, good[fmt], records[fmt], src)
        try:
            if kind in STRUCTURAL and STRUCTURAL[kind].target == "record":
                record = damage(good[fmt], where / "size.json", kind, seed, case)
            else:
                bad = damage(good[fmt], where / good[fmt].name, kind, seed, case)
                record = record_in_place(records[fmt], bad, where / "size.json")
        except subprocess.CalledProcessError as exc:  # the format's own writer refused it
            why = (exc.stderr or b"").decode(errors="replace").strip().splitlines()
            unmade.append(f"{fmt} {kind}: {why[-1] if why else exc}")
            print(f"{fmt:8} {kind:16} {seed} not made: {unmade[-1]}", flush=True)
            shutil.rmtree(where, ignore_errors=True)
            return []
        runs = []
        for name, argv in commands(fmt, bad, src, record, where, kind).items():
            named = (bad, record) if "--size-record" in name else (bad,)
            rc, sig, rss, sec, outcome, line = run(argv, named, a.timeout,
                                                   where / "stderr.txt")
            runs.append(Run(fmt, kind, seed, name, outcome, rc, sig, round(rss, 1),
                            round(sec, 2), line))
            print(f"{fmt:8} {kind:16} {seed} {name:22} {outcome:8} rc={rc:<4} "
                  f"{rss:7.0f} MB {sec:6.1f} s  {line[:110]}", flush=True)
        shutil.rmtree(where, ignore_errors=True)
        return runs

    with ThreadPoolExecutor(a.jobs) as pool:
        runs = [r for rs in pool.map(one, cases) for r in rs]
    oom_after = oom_kills()
    text = made_by(began) + table(runs, len(cases) - len(unmade), oom_before, oom_after)
    if unmade:
        text += "\nCases the format's own writer could not make (not counted):\n\n" + \
            "".join(f"- {u}\n" for u in sorted(unmade))
    print(text)
    if a.table:
        Path(a.table).parent.mkdir(parents=True, exist_ok=True)
        Path(a.table).write_text(text)
        Path(a.table).with_suffix(".json").write_text(json.dumps([asdict(r) for r in runs],
                                                                 indent=1))
    return 1 if any(r.outcome == "bad" for r in runs) else 0


def made_by(began: float) -> str:
    """How the table was made: the command, the date, the commit and the CPU, and how long it
    took (a table of results is generated, never typed)."""
    from hepfmt.provenance import git_commit, machine

    m = machine()
    return (f"<!-- made by: {' '.join([Path(sys.executable).name, *sys.argv])}; "
            f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; commit {git_commit()}; "
            f"{m['cpu']}, {m['cores']} cores; {time.monotonic() - began:.0f} s -->\n")


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
    for kind in kinds():
        rs = [r for r in runs if r.kind == kind]
        if not rs:
            continue
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
