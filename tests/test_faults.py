"""Fault injection: corrupted files, made here from small valid ones with seeded damage, through
every command that reads a file. Whatever the damage, a command ends in one of two ways: exit 0
with a result its checksums proved, or exit 2 with one line naming the file. Never a signal
death, a traceback, or exit 0 with an unproven result; and never more memory than the cap of a
process reading an untrusted file (:mod:`hepfmt.measure.memcap`): a damaged TTree once grew a
reader to 22 GB, until the kernel's OOM killer ended it.

The commands run as a user runs them (the ``hepfmt`` entry point of this environment, in a
child process), so a segfault in a library would show as a negative return code here; the
command is waited for with ``wait4``, which gives the peak resident memory of it and of every
process it waited for.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import CLUSTER_SIZE, N_EVENTS, compressed_variant
from hepfmt import formats
from hepfmt.errors import MAX_CHARS
from hepfmt.measure import isolated, memcap
from hepfmt.records import SizeRecord
from hepfmt.samples.source import read_source_meta

HEPFMT = [sys.executable, "-m", "hepfmt.cli"]
#: Per command: generous for a machine several times slower than an idle one.
TIMEOUT_S = 600
#: A compressed variant of each format: the damage meets its decompressor.
VARIANT = {f: compressed_variant(f) for f in formats.names()}
SEED = 20261124
#: Resident memory a process has besides what its cap limits (its writable data): its
#: libraries' code (ROOT's alone is ~0.3 GB) and the files it maps.
MAPPED_BYTES = 10**9


def _flip(n: int) -> Callable[[bytearray, random.Random], None]:
    def damage(data: bytearray, rng: random.Random) -> None:
        for _ in range(n):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    return damage


def _zero_page(data: bytearray, rng: random.Random) -> None:
    start = rng.randrange(max(1, len(data) - 4096))
    data[start:start + 4096] = bytes(min(4096, len(data) - start))


#: Filesystem blocks: what a bad sector, a torn write or a misplaced block damages.
BLOCK = 4096


def _blocks(data: bytearray, rng: random.Random) -> tuple[slice, slice]:
    a, b = rng.sample(range(len(data) // BLOCK), 2)
    return slice(a * BLOCK, (a + 1) * BLOCK), slice(b * BLOCK, (b + 1) * BLOCK)


def _swap_blocks(data: bytearray, rng: random.Random) -> None:
    a, b = _blocks(data, rng)
    data[a], data[b] = data[b], data[a]


def _copy_block(data: bytearray, rng: random.Random) -> None:
    a, b = _blocks(data, rng)
    data[b] = data[a]


def _garble_header(data: bytearray, rng: random.Random) -> None:
    """Random bytes over what follows a file's magic number: the lengths and offsets a reader
    trusts first (random lengths after ROOT's ``root`` crashed TFile::Init)."""
    end = min(len(data), 128)
    data[4:end] = rng.randbytes(max(0, end - 4))


#: kind -> damage done in place to the file's bytes (the file's length may change)
DAMAGE: dict[str, Callable[[bytearray, random.Random], None]] = {
    "truncated-half": lambda d, rng: d.__delitem__(slice(len(d) // 2, None)),
    "truncated-tail": lambda d, rng: d.__delitem__(slice(len(d) - 100, None)),
    "1-flip": _flip(1),
    "10-flips": _flip(10),
    "100-flips": _flip(100),
    "zeroed-page": _zero_page,
    "blocks-swapped": _swap_blocks,
    "block-copied": _copy_block,
    "header-garbled": _garble_header,
    "empty": lambda d, rng: d.clear(),
}


def damaged(src: Path, dst: Path, kind: str) -> Path:
    data = bytearray(src.read_bytes())
    DAMAGE[kind](data, random.Random(f"{SEED}-{kind}-{src.name}"))
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_bytes(bytes(data))
    return dst


@dataclass(frozen=True)
class Outcome:
    returncode: int
    #: the largest resident set of the command and of every process it waited for
    peak_bytes: int
    stderr: str


def run(*args: str) -> Outcome:
    with tempfile.TemporaryFile("w+", errors="replace") as err:
        proc = subprocess.Popen([*HEPFMT, *map(str, args)], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=err,
                                env={**os.environ, "PYTHONWARNINGS": "ignore"})
        ended = isolated.wait(proc, TIMEOUT_S)
        assert ended is not None, f"hepfmt {args[0]} still running after {TIMEOUT_S} s"
        err.seek(0)
        return Outcome(*ended, err.read())


def _oom_kills() -> set[str] | None:
    """The kernel's OOM-killer lines in its log (None where ``dmesg`` cannot be read)."""
    try:
        proc = subprocess.run(["dmesg"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    return {x for x in proc.stdout.splitlines() if "Killed process" in x}


@pytest.fixture(autouse=True)
def no_oom_killer():
    """The kernel's OOM killer never acts while a test runs (where its log can be read)."""
    before = _oom_kills()
    yield
    after = _oom_kills()
    if before is not None and after is not None:
        assert not after - before, f"the kernel's OOM killer acted: {sorted(after - before)}"


def assert_clean_outcome(proc: Outcome, cap: int | None, *paths: Path) -> None:
    """Exit 0, or exit 2 with one line naming one of ``paths``; never a signal or a
    traceback; no process above the memory ``cap`` (by more than its mapped code and files),
    none killed (a SIGKILL: what the kernel's OOM killer sends)."""
    assert proc.returncode >= 0, f"killed by signal {-proc.returncode}: {proc.stderr[-500:]}"
    assert "SIGKILL" not in proc.stderr, proc.stderr[-500:]
    if cap is not None:
        assert proc.peak_bytes <= cap + MAPPED_BYTES, (
            f"peak resident memory {memcap.gb(proc.peak_bytes)} above the cap {memcap.gb(cap)}")
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert proc.returncode in (0, 2), proc.stderr[-500:]
    if proc.returncode == 2:
        lines = [x for x in proc.stderr.splitlines() if x.strip()]
        assert lines and any(p.name in lines[-1] for p in paths), proc.stderr[-500:]
        # one short line ("hepfmt COMMAND: error: " and the message), not a library's dump
        assert len(lines) == 1 and len(lines[0]) <= 40 + MAX_CHARS, proc.stderr[-2000:]


def _cap(path: Path, source: Path) -> int | None:
    """The largest cap of a process reading ``path``, a file written from ``source``."""
    return memcap.cap_for(path, read_source_meta(source)["naive_bytes"])


def _measure(bad: Path, source: Path, fmt: str, reader: str, out: Path, *extra) -> Outcome:
    proc = run("measure", bad, "--source", source, "--format", fmt, "--variant", VARIANT[fmt],
               "--cluster-size", CLUSTER_SIZE, "--readers", reader, "--selection", "all=*",
               "--modes", "warm", "--repetitions", 5, "-o", out, *extra)
    assert_clean_outcome(proc, _cap(bad, source), bad)
    if proc.returncode == 0:  # the damage missed every value: the checksums proved the reads
        assert all(r["n"] == 5 for r in json.loads(out.read_text())["reads"])
    else:
        assert not out.exists()
    return proc


@pytest.mark.parametrize("kind", list(DAMAGE))
@pytest.mark.parametrize("fmt", list(VARIANT))
def test_measure_on_a_damaged_file(fmt, kind, written, source, tmp_path) -> None:
    good = written(fmt, VARIANT[fmt])
    bad = damaged(good, tmp_path / good.name, kind)
    reader = formats.get(fmt).verifier or next(iter(formats.get(fmt).readers))
    _measure(bad, source, fmt, reader, tmp_path / "m.json")


@pytest.mark.parametrize("kind", ["100-flips", "blocks-swapped", "block-copied"])
@pytest.mark.parametrize("reader", ["ttreereader", "rdf"])
def test_root_readers_on_a_damaged_tree(reader, kind, written, source, tmp_path) -> None:
    """The compiled loops themselves open the damaged TTree (the bytes per branch come from a
    size record, so describe does not fail first): the damage that made a TTreeReader loop and
    RDataFrame grow without bound."""
    good = written("ttree", VARIANT["ttree"])
    bad = damaged(good, tmp_path / good.name, kind)
    record = tmp_path / "size.json"
    record.write_text(json.dumps(SizeRecord(
        sample="dy", process="DYJetsToLL", format="ttree", variant=VARIANT["ttree"],
        cluster_size=CLUSTER_SIZE, n_events=N_EVENTS, file_bytes=bad.stat().st_size,
        naive_bytes=read_source_meta(source)["naive_bytes"], normalized_size=1.0,
        provenance={}).as_dict()))
    _measure(bad, source, "ttree", reader, tmp_path / "m.json", "--size-record", record)


@pytest.mark.parametrize("kind", list(DAMAGE))
@pytest.mark.parametrize("fmt", ["parquet", "ttree"])
def test_convert_from_a_damaged_source(fmt, kind, source, tmp_path) -> None:
    bad = damaged(source, tmp_path / "src" / source.name, kind)
    shutil.copy(source.with_suffix(".json"), bad.with_suffix(".json"))
    out = tmp_path / f"out.{formats.extension(fmt)}"
    proc = run("convert", bad, "--format", fmt, "--variant", VARIANT[fmt], "--cluster-size",
               CLUSTER_SIZE, "-o", out, "--size-output", tmp_path / "size.json")
    assert_clean_outcome(proc, _cap(bad, source), bad, out)
    if proc.returncode == 0:  # only if the source still matched its sidecar, every branch
        assert json.loads((tmp_path / "size.json").read_text())["verified"] is True
    else:
        assert not out.exists() and not (tmp_path / "size.json").exists()


def test_convert_refuses_another_samples_sidecar(source, tmp_path) -> None:
    other = tmp_path / "other.arrow"
    assert run("generate", "--process", "TTJets", "--events", 600, "--seed", 3,
               "-o", other).returncode == 0
    shutil.copy(source, tmp_path / "mixed.arrow")
    shutil.copy(other.with_suffix(".json"), tmp_path / "mixed.json")
    out = tmp_path / "out.parquet"
    proc = run("convert", tmp_path / "mixed.arrow", "--format", "parquet", "--variant", "none",
               "--cluster-size", CLUSTER_SIZE, "-o", out)
    assert proc.returncode == 2 and "mixed.arrow" in proc.stderr and "sidecar" in proc.stderr
    assert not out.exists()


@pytest.mark.parametrize("kind", ["truncated-half", "truncated-tail", "100-flips",
                                  "zeroed-page", "empty"])
@pytest.mark.parametrize("command", [("import", "-o", "s.arrow"),
                                     ("schema", "extract", "-o", "m.json")])
def test_import_and_extract_a_damaged_root_file(command, kind, written, tmp_path) -> None:
    bad = damaged(written("ttree", "zstd-5"), tmp_path / "nano.root", kind)
    name, *rest = command
    args = [name, *rest[:-2], bad, rest[-2], tmp_path / rest[-1]] if name == "schema" \
        else [name, bad, *rest[:-1], tmp_path / rest[-1]]
    proc = run(*args)
    assert_clean_outcome(proc, memcap.cap_for(bad), bad)


# ---- structural damage: well-formed files whose values, order or type are not the source's ----

def _study():
    """The fault study's own damage makers (tools/fault_study.py): one home for each kind."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "tools" / "fault_study.py"
    spec = importlib.util.spec_from_file_location("fault_study", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("fault_study", module)
    spec.loader.exec_module(module)
    return module


STUDY = _study()

#: (format, kind): a seeded subset of the study's structural kinds, one or two per format
STRUCTURAL = [("parquet", "row-groups-reversed"), ("parquet", "row-group-duplicated"),
              ("parquet", "float-as-int32-no-arrow-schema"), ("parquet", "sum-kept"),
              ("feather", "clusters-swapped"), ("feather", "float-as-int32"),
              ("orc", "clusters-swapped"), ("ttree", "one-branch-swapped")]


@pytest.mark.parametrize(("fmt", "kind"), STRUCTURAL)
def test_measure_refuses_a_well_formed_file_of_other_values(fmt, kind, written, source,
                                                            tmp_path) -> None:
    """Reordered clusters (row groups, stripes, batches, one branch's baskets), a float
    re-declared as int32, a change that keeps the sum: a valid file every reader reads without
    complaint, refused by the proof against the source's checksums, naming the file."""
    good = written(fmt, VARIANT[fmt])
    case = STUDY.Case(fmt, good, tmp_path / "no-record.json", source)
    bad = STUDY.damage(good, tmp_path / "bad" / good.name, kind, SEED, case)
    reader = formats.get(fmt).verifier or next(iter(formats.get(fmt).readers))
    proc = _measure(bad, source, fmt, reader, tmp_path / "m.json")
    assert proc.returncode == 2 and "differ from the source" in proc.stderr, proc.stderr


@pytest.fixture
def converted(source, tmp_path) -> tuple[Path, Path]:
    """A Parquet file from ``hepfmt convert`` with its size record (proofs and digest)."""
    from hepfmt.cli import main

    out, record = tmp_path / "good" / "f.parquet", tmp_path / "good" / "f.size.json"
    out.parent.mkdir()
    assert main(["convert", str(source), "--format", "parquet", "--variant", VARIANT["parquet"],
                 "--cluster-size", str(CLUSTER_SIZE), "--prove", "pyarrow", "-o", str(out),
                 "--size-output", str(record)]) == 0
    return out, record


@pytest.mark.parametrize("kind", ["record-dev-zero", "record-fifo", "record-wrong-shape",
                                  "record-deep", "sum-kept", "1-flip", "sparse-3gb-tail"])
def test_measure_with_its_size_record_refuses(kind, converted, source, tmp_path) -> None:
    """A size record that is no record (``/dev/zero``, a FIFO, the wrong shape, nested too
    deep) is refused naming it; a file damaged where convert wrote it (its record naming it)
    is refused by the record's size or digest. Never a hang, never a traceback."""
    good, record = converted
    case = STUDY.Case("parquet", good, record, source)
    path = good
    if STUDY.STRUCTURAL.get(kind) and STUDY.STRUCTURAL[kind].target == "record":
        record = STUDY.damage(good, tmp_path / "case" / "size.json", kind, SEED, case)
    else:
        path = STUDY.damage(good, tmp_path / "case" / good.name, kind, SEED, case)
        record = STUDY.record_in_place(record, path, tmp_path / "case" / "size.json")
    out = tmp_path / "m.json"
    proc = run("measure", path, "--source", source, "--format", "parquet", "--variant",
               VARIANT["parquet"], "--cluster-size", CLUSTER_SIZE, "--readers", "pyarrow",
               "--selection", "all=*", "--modes", "warm", "--repetitions", 3,
               "--size-record", record, "-o", out)
    assert_clean_outcome(proc, _cap(good, source), path, record)
    assert proc.returncode == 2 and not out.exists(), proc.stderr
