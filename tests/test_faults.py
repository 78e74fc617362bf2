"""Fault injection: corrupted files, made here from small valid ones with seeded damage, through
every command that reads a file. Whatever the damage, a command ends in one of two ways: exit 0
with a result its checksums proved, or exit 2 with one line naming the file. Never a signal
death, a traceback, or exit 0 with an unproven result.

The commands run as a user runs them (the ``hepfmt`` entry point of this environment, in a
child process), so a segfault in a library would show as a negative return code here.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import CLUSTER_SIZE

from analysis import formats

HEPFMT = [sys.executable, "-m", "analysis.cli"]
#: Per command: generous for a machine several times slower than an idle one.
TIMEOUT_S = 600
#: The plainest variant of each format, and the reader that proves it.
PLAIN = {"ttree": "zstd-5", "rntuple": "zstd-5", "parquet": "zstd-3", "feather": "zstd",
         "hdf5": "gzip-4", "lance": "zstd", "vortex": "default"}
SEED = 20261124


def _flip(n: int) -> Callable[[bytearray, random.Random], None]:
    def damage(data: bytearray, rng: random.Random) -> None:
        for _ in range(n):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    return damage


def _zero_page(data: bytearray, rng: random.Random) -> None:
    start = rng.randrange(max(1, len(data) - 4096))
    data[start:start + 4096] = bytes(min(4096, len(data) - start))


#: kind -> damage done in place to the file's bytes (the file's length may change)
DAMAGE: dict[str, Callable[[bytearray, random.Random], None]] = {
    "truncated-half": lambda d, rng: d.__delitem__(slice(len(d) // 2, None)),
    "truncated-tail": lambda d, rng: d.__delitem__(slice(len(d) - 100, None)),
    "1-flip": _flip(1),
    "10-flips": _flip(10),
    "100-flips": _flip(100),
    "zeroed-page": _zero_page,
    "empty": lambda d, rng: d.clear(),
}


def damaged(src: Path, dst: Path, kind: str) -> Path:
    data = bytearray(src.read_bytes())
    DAMAGE[kind](data, random.Random(f"{SEED}-{kind}-{src.name}"))
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_bytes(bytes(data))
    return dst


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*HEPFMT, *map(str, args)], capture_output=True, text=True,
                          timeout=TIMEOUT_S, env={**os.environ, "PYTHONWARNINGS": "ignore"})


def assert_clean_outcome(proc: subprocess.CompletedProcess, *paths: Path) -> None:
    """Exit 0, or exit 2 with one line naming one of ``paths``; never a signal or a
    traceback."""
    assert proc.returncode >= 0, f"killed by signal {-proc.returncode}: {proc.stderr[-500:]}"
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert proc.returncode in (0, 2), proc.stderr[-500:]
    if proc.returncode == 2:
        lines = [x for x in proc.stderr.splitlines() if x.strip()]
        assert lines and any(p.name in lines[-1] for p in paths), proc.stderr[-500:]
        assert len(lines) <= 3, proc.stderr[-2000:]  # one line, not a library's dump


@pytest.mark.parametrize("kind", list(DAMAGE))
@pytest.mark.parametrize("fmt", list(PLAIN))
def test_measure_on_a_damaged_file(fmt, kind, written, source, tmp_path) -> None:
    good = written(fmt, PLAIN[fmt])
    bad = damaged(good, tmp_path / good.name, kind)
    out = tmp_path / "m.json"
    reader = formats.get(fmt).verifier or next(iter(formats.get(fmt).readers))
    proc = run("measure", bad, "--source", source, "--format", fmt, "--variant", PLAIN[fmt],
               "--cluster-size", CLUSTER_SIZE, "--readers", reader, "--selection", "all=*",
               "--modes", "warm", "--repetitions", 5, "-o", out)
    assert_clean_outcome(proc, bad)
    if proc.returncode == 0:  # the damage missed every value: the checksums proved the reads
        assert all(r["n"] == 5 for r in json.loads(out.read_text())["reads"])
    else:
        assert not out.exists()


@pytest.mark.parametrize("kind", list(DAMAGE))
@pytest.mark.parametrize("fmt", ["parquet", "ttree"])
def test_convert_from_a_damaged_source(fmt, kind, source, tmp_path) -> None:
    bad = damaged(source, tmp_path / "src" / source.name, kind)
    shutil.copy(source.with_suffix(".json"), bad.with_suffix(".json"))
    out = tmp_path / f"out.{formats.extension(fmt)}"
    proc = run("convert", bad, "--format", fmt, "--variant", PLAIN[fmt], "--cluster-size",
               CLUSTER_SIZE, "-o", out, "--size-output", tmp_path / "size.json")
    assert_clean_outcome(proc, bad, out)
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
    assert_clean_outcome(proc, bad)
