"""The small files beside the data are read bounded (issue 44, item 6): a size record, a source's
sidecar, a model, a plan or record JSON is opened only if it is a regular file, read with a
size limit, parsed with a depth limit and checked key by key, and refused in one line naming
the file and the key otherwise; a FIFO given as the data itself is refused, not waited on.

Before: ``measure --size-record R`` with R a link to /dev/zero grew the hepfmt process to 24 GB
until the kernel ended it, with R a FIFO it hung, a record claiming 10^300 naive bytes or
naming another file was measured (exit 0), a record of the wrong shape ended in ``TypeError:
string indices must be integers`` and a deeply nested one in ``RecursionError``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import SELECTION
from hepfmt import records
from hepfmt.cli import main
from hepfmt.errors import InputError
from hepfmt.samples.source import read_source_meta

HEPFMT = [sys.executable, "-m", "hepfmt.cli"]


@pytest.fixture(scope="module")
def converted(source: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """A Parquet file written by ``hepfmt convert`` with pyarrow proven, and its size record."""
    tmp = tmp_path_factory.mktemp("side-files")
    out, size = tmp / "f.parquet", tmp / "f.json"
    assert main(["convert", str(source), "--format", "parquet", "--variant", "zstd-3",
                 "--cluster-size", "250", "--prove", "pyarrow", "-o", str(out),
                 "--size-output", str(size)]) == 0
    return out, json.loads(size.read_text())


def _measure_args(path: Path, source: Path, size: Path, out: Path) -> list[str]:
    return ["measure", str(path), "--source", str(source), "--format", "parquet",
            "--variant", "zstd-3", "--cluster-size", "250", "--readers", "pyarrow",
            "--selection", "ten=" + ",".join(SELECTION), "--modes", "warm",
            "--repetitions", "3", "--size-record", str(size), "-o", str(out)]


def _one_line(proc: subprocess.CompletedProcess) -> str:
    err = proc.stderr.strip()
    assert proc.returncode == 2, err[-2000:]
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err[-2000:]
    return err


def _run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """hepfmt in a process of its own, so that a hang is a failed test, not a stuck suite."""
    return subprocess.run([*HEPFMT, *args], capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


# -- size records -------------------------------------------------------------------------------

def _edited(**keys: object) -> Callable[[dict, Path], object]:
    return lambda doc, tmp: {**doc, **keys}


def _deep(doc: dict, tmp: Path) -> str:
    return json.dumps({**doc, "layout": "@"}).replace('"@"', "[" * 100_000 + "]" * 100_000)


def _another_file(doc: dict, tmp: Path) -> dict:
    """The record of another file: its name, and a digest of other bytes."""
    other = tmp / "other.parquet"
    other.write_bytes(b"PAR1 another file")
    return {**doc, "file": str(other), "digest": "xxh3_128:" + "0" * 32}


#: name -> (what the record becomes, the words of the refusal after "<record>: ")
RECORDS: dict[str, tuple[Callable[[dict, Path], object], str]] = {
    "a JSON array": (lambda doc, tmp: [doc], "not a JSON object"),
    "a string where a mapping belongs": (_edited(zip_bytes_by_branch="Muon_pt"),
                                         "key 'zip_bytes_by_branch' is a string, not dict"),
    "a number as a string": (_edited(file_bytes="12345"), "key 'file_bytes' is a string"),
    "a proof that is no proof": (_edited(proofs={"pyarrow": "ok"}), "key 'proofs.pyarrow'"),
    "nested past Python's recursion": (_deep, "nested too deeply"),
    "10^300 naive bytes": (_edited(naive_bytes=1e300), "key 'naive_bytes' is 1e+300"),
    "an integer of 400 digits": (_edited(naive_bytes=10**400), "key 'naive_bytes'"),
    "negative naive bytes": (_edited(naive_bytes=-5.0), "key 'naive_bytes' is -5.0"),
    "branch bytes above the file's": (_edited(zip_bytes_by_branch={"Muon_pt": 10**12}),
                                      "key 'zip_bytes_by_branch.Muon_pt'"),
    "another file named": (_another_file, "key 'file' names"),
    "another file's size": (_edited(file_bytes=1), "key 'file_bytes'"),
}


@pytest.mark.parametrize("name", list(RECORDS))
def test_a_size_record_of_the_wrong_kind_is_refused_naming_the_key(
        name: str, converted, source: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture) -> None:
    path, doc = converted
    make, words = RECORDS[name]
    record = tmp_path / "size.json"
    made = make(doc, tmp_path)
    record.write_text(made if isinstance(made, str) else json.dumps(made))
    out = tmp_path / "m.json"
    assert main(_measure_args(path, source, record, out)) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err[-2000:]
    assert err.startswith(f"hepfmt measure: error: {record}: "), err[:500]
    assert words in err, err[:500]
    assert not out.exists()


def _fifo(tmp: Path) -> Path:
    os.mkfifo(tmp / "size.json")
    return tmp / "size.json"


def _zero(tmp: Path) -> Path:
    (tmp / "size.json").symlink_to("/dev/zero")
    return tmp / "size.json"


def _directory(tmp: Path) -> Path:
    (tmp / "size.json").mkdir()
    return tmp / "size.json"


def _huge(tmp: Path) -> Path:
    path = tmp / "size.json"
    with open(path, "wb") as f:
        f.truncate(records.MAX_BYTES + 1)  # sparse: no disk, and too large
    return path


NOT_FILES: dict[str, tuple[Callable[[Path], Path], str]] = {
    "a FIFO": (_fifo, "a FIFO, not a regular file"),
    "a link to /dev/zero": (_zero, "a character device, not a regular file"),
    "a directory": (_directory, "a directory, not a regular file"),
    "larger than the limit": (_huge, f"more than the {records.MAX_BYTES:,}"),
}


@pytest.mark.parametrize("name", list(NOT_FILES))
def test_a_size_record_that_is_no_regular_file_is_refused_at_once(
        name: str, converted, source: Path, tmp_path: Path) -> None:
    """In a process of its own, with a time-out: a hang or a 24 GB read fails the test."""
    path, _ = converted
    make, words = NOT_FILES[name]
    record = make(tmp_path)
    out = tmp_path / "m.json"
    err = _one_line(_run(*_measure_args(path, source, record, out), timeout=60))
    assert err.startswith(f"hepfmt measure: error: {record}: ") and words in err, err
    assert not out.exists()


def test_the_record_convert_wrote_is_taken(converted, source: Path, tmp_path: Path) -> None:
    path, doc = converted
    record = tmp_path / "size.json"
    record.write_text(json.dumps(doc))
    out = tmp_path / "m.json"
    assert main(_measure_args(path, source, record, out)) == 0
    assert [r["proven_by"] for r in json.loads(out.read_text())["reads"]] == ["convert"]


def test_a_copy_of_the_file_it_names_is_its_file(converted, source: Path,
                                                 tmp_path: Path) -> None:
    """A results tree copied elsewhere: the record names the original, the copy holds the
    bytes of its digest."""
    path, doc = converted
    copy = tmp_path / "copied.parquet"
    shutil.copy(path, copy)
    record = tmp_path / "size.json"
    record.write_text(json.dumps(doc))
    assert main(_measure_args(copy, source, record, tmp_path / "m.json")) == 0


# -- the source's sidecar -----------------------------------------------------------------------

def _copy_source(source: Path, tmp: Path) -> Path:
    copy = tmp / "src" / source.name
    copy.parent.mkdir()
    shutil.copy(source, copy)
    shutil.copy(source.with_suffix(".json"), copy.with_suffix(".json"))
    return copy


def _sidecar(edit: Callable[[dict], object]) -> Callable[[dict], dict]:
    def make(meta: dict) -> dict:
        meta = json.loads(json.dumps(meta))
        edit(meta)
        return meta
    return make


SIDECARS: dict[str, tuple[Callable[[dict], object], str]] = {
    "a JSON array": (lambda meta: [meta], "not a JSON object"),
    "checksums a string": (_sidecar(lambda m: m.update(checksums="none")),
                           "key 'checksums' is a string"),
    "a branch claiming 10^300 bytes": (_sidecar(lambda m: m["naive_bytes_by_branch"].update(
        Muon_pt=1e300)), "key 'naive_bytes_by_branch.Muon_pt' is 1e+300"),
    "naive bytes not its branches'": (_sidecar(lambda m: m.update(naive_bytes=1.0)),
                                      "key 'naive_bytes' is 1"),
    "a branch without a checksum": (_sidecar(lambda m: m["checksums"].pop("Muon_pt")),
                                    "key 'checksums.Muon_pt'"),
    "a schema entry that is no branch": (_sidecar(lambda m: m["schema"].__setitem__(0, "x")),
                                         "key 'schema[0]'"),
}


@pytest.mark.parametrize("name", list(SIDECARS))
def test_a_sidecar_of_the_wrong_kind_is_refused_naming_the_key(name: str, source: Path,
                                                               tmp_path: Path) -> None:
    copy = _copy_source(source, tmp_path)
    make, words = SIDECARS[name]
    copy.with_suffix(".json").write_text(json.dumps(make(read_source_meta(source))))
    with pytest.raises(InputError) as exc:
        read_source_meta(copy)
    assert str(exc.value).startswith(f"{copy.with_suffix('.json')}: ")
    assert words in str(exc.value)


def test_convert_refuses_a_fifo_sidecar_in_one_line(source: Path, tmp_path: Path) -> None:
    copy = _copy_source(source, tmp_path)
    side = copy.with_suffix(".json")
    side.unlink()
    os.mkfifo(side)
    out = tmp_path / "f.parquet"
    err = _one_line(_run("convert", str(copy), "--format", "parquet", "--variant", "zstd-3",
                         "--cluster-size", "250", "-o", str(out), timeout=60))
    assert f"{side}: a FIFO, not a regular file" in err
    assert not out.exists()


# -- the data itself ----------------------------------------------------------------------------

def test_a_fifo_to_measure_is_refused_not_waited_on(source: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "f.parquet"
    os.mkfifo(fifo)
    args = _measure_args(fifo, source, tmp_path / "none.json", tmp_path / "m.json")
    args = args[:args.index("--size-record")] + args[args.index("-o"):]
    err = _one_line(_run(*args, timeout=60))
    assert err.startswith(f"hepfmt measure: error: {fifo}: a FIFO, not a regular file"), err


def test_a_fifo_to_import_is_refused_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "nano.root"
    os.mkfifo(fifo)
    out = tmp_path / "imported.arrow"
    err = _one_line(_run("import", str(fifo), "-o", str(out), timeout=60))
    assert f"{fifo}: a FIFO, not a regular file" in err, err
    assert not out.exists()


# -- the bounded reader itself ------------------------------------------------------------------

def test_every_json_side_file_goes_through_the_bounded_reader() -> None:
    """No module of the package reads JSON from a file but through records.read_json (the
    exceptions: what a child process of hepfmt's own wrote, or a service answered)."""
    root = Path(records.__file__).parent
    allowed = {"records.py", "measure/isolated.py", "measure/layers.py", "measure/pairs.py",
               "measure/storage/shaping.py", "measure/storage/ledger.py",
               "metastudy/decode.py"}
    readers = []
    for f in root.rglob("*.py"):
        rel = str(f.relative_to(root))
        if rel in allowed or rel.startswith("report/"):  # the report reads its own tables
            continue
        text = f.read_text()
        if "json.load(" in text or ("json.loads(" in text and "read_text()" in text):
            readers.append(rel)
    assert readers == []


def test_read_json_refuses_deep_and_large_documents(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * (records.MAX_DEPTH + 2) + "]" * (records.MAX_DEPTH + 2))
    with pytest.raises(InputError, match="nested deeper than"):
        records.read_json(deep, "thing")
    fine = tmp_path / "fine.json"
    fine.write_text(json.dumps({"a": [[1]]}))
    assert records.read_json(fine) == {"a": [[1]]}
