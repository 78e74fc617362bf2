"""Bad inputs give one-line errors naming the file (or key); failed writes leave nothing behind."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from hepfmt import formats
from hepfmt.cli import main
from hepfmt.errors import MAX_CHARS, VERBOSE, InputError, VerificationError, brief
from hepfmt.samples.schema import Schema
from hepfmt.samples.source import open_source, read_source_meta

# ROOT reports its recovery attempt on a truncated file as a Python warning; expected here.
pytestmark = pytest.mark.filterwarnings("ignore:no keys recovered:RuntimeWarning")

READERS = [(f, r) for f in formats.names() for r in formats.get(f).readers]


def _ext(fmt: str) -> str:
    return formats.extension(fmt)


def _truncated(src: Path, dst: Path) -> Path:
    data = src.read_bytes()
    dst.write_bytes(data[: len(data) // 2])
    return dst


@pytest.fixture(scope="module")
def bad_files(written, tmp_path_factory) -> dict[tuple[str, str], Path]:
    """(format, kind) -> a broken file of that kind."""
    d = tmp_path_factory.mktemp("bad")
    garbage = d / "garbage.bin"
    garbage.write_bytes(os.urandom(4096))
    files = {}
    for fmt in formats.names():
        good = written(fmt, formats.get(fmt).plain)
        files[fmt, "truncated"] = _truncated(good, d / f"truncated-{fmt}.{_ext(fmt)}")
        files[fmt, "missing"] = d / f"missing-{fmt}.{_ext(fmt)}"
        files[fmt, "garbage"] = garbage
    return files


def _describe_param(fmt: str, kind: str):
    return pytest.param(fmt, kind, id=f"{fmt}-{kind}")


@pytest.mark.parametrize(("fmt", "kind"), [
    _describe_param(f, k) for f in formats.names() for k in ("truncated", "missing", "garbage")])
def test_describe_bad_file_is_input_error(bad_files, fmt, kind):
    """A truncated, missing or foreign file is an InputError naming the path, not a traceback."""
    path = bad_files[fmt, kind]
    with pytest.raises(InputError) as exc:
        formats.get(fmt).describe(path)
    assert str(path) in str(exc.value)


@pytest.mark.parametrize("kind", ["truncated", "missing", "garbage"])
@pytest.mark.parametrize(("fmt", "reader"), READERS, ids=[f"{f}-{r}" for f, r in READERS])
def test_read_bad_file_is_input_error(bad_files, selection, fmt, reader, kind):
    """Every reader turns its library's failure on a broken file into an InputError."""
    r = formats.get(fmt).readers[reader]
    r.prepare(1)
    path = bad_files[fmt, kind]
    with pytest.raises(InputError) as exc:
        r.read(str(path), selection)
    assert str(path) in str(exc.value)


@pytest.mark.parametrize(("fmt", "reader"), READERS, ids=[f"{f}-{r}" for f, r in READERS])
def test_missing_branch_is_input_error(written, fmt, reader):
    """A selection naming a branch the file lacks must say which branch."""
    r = formats.get(fmt).readers[reader]
    r.prepare(1)
    path = str(written(fmt, formats.get(fmt).plain))
    with pytest.raises(InputError) as exc:
        r.read(path, ["nJet", "Jet_pt", "Jet_nosuchthing"])
    assert "Jet_nosuchthing" in str(exc.value)
    assert path in str(exc.value)


@pytest.fixture(scope="module")
def root_without_events(tmp_path_factory) -> Path:
    import ROOT

    path = tmp_path_factory.mktemp("notree") / "histogram.root"
    f = ROOT.TFile(str(path), "RECREATE")
    h = ROOT.TH1F("h", "h", 10, 0.0, 1.0)
    h.Write()
    t = ROOT.TTree("Other", "not the events")
    t.Write()
    f.Close()
    return path


def test_root_file_without_events_tree(root_without_events, selection):
    """A valid ROOT file that is not an event file: describe and every reader name the file."""
    fmt = formats.get("ttree")
    with pytest.raises(InputError, match="no TTree named 'Events'") as exc:
        fmt.describe(root_without_events)
    assert str(root_without_events) in str(exc.value)
    for r in fmt.readers.values():
        r.prepare(1)
        with pytest.raises(InputError) as exc:
            r.read(str(root_without_events), selection)
        assert str(root_without_events) in str(exc.value)


def test_source_errors(tmp_path, source):
    """A missing sidecar, a non-Arrow source or a bad schema file name the offending file."""
    garbage = tmp_path / "garbage.arrow"
    garbage.write_bytes(b"not arrow at all" * 100)
    with pytest.raises(InputError, match="Arrow IPC") as exc:
        open_source(garbage)
    assert str(garbage) in str(exc.value)
    with pytest.raises(InputError, match="sidecar") as exc:
        read_source_meta(garbage)
    assert str(tmp_path / "garbage.json") in str(exc.value)
    with pytest.raises(InputError, match="schema") as exc:
        Schema.from_json(garbage)
    assert str(garbage) in str(exc.value)
    # a source copied without its sidecar cannot be converted, and nothing is written
    lone = tmp_path / "lone.arrow"
    shutil.copy(source, lone)
    out = tmp_path / "out" / "lone.parquet"
    fmt = formats.get("parquet")
    with pytest.raises(InputError, match="sidecar"):
        fmt.write(lone, out, fmt.variant("none"), 250, {})
    assert not out.exists()


# --- the command line --------------------------------------------------------------------------

@pytest.mark.parametrize(("fmt", "variant", "problem"), [
    ("ttree", "brotli", "algorithm 'brotli'"),
    ("ttree", "zstd+dict", "no dictionary encoding"),
    ("parquet", "zstd_3", "is not <algorithm>"),
    ("parquet", "none-1", "'none' takes no level"),
])
def test_cli_convert_bad_variant(capsys, tmp_path, source, fmt, variant, problem):
    """A bad variant exits with status 2 and one error line naming the config key."""
    out = tmp_path / f"x.{_ext(fmt)}"
    rc = main(["convert", str(source), "--format", fmt, "--variant", variant,
               "--cluster-size", "250", "-o", str(out)])
    err = capsys.readouterr().err
    assert rc == 2
    assert "hepfmt convert: error:" in err
    assert re.search(r"config key '(--)?variant'", err), err
    assert problem in err
    assert len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_cli_convert_unknown_format(capsys, tmp_path, source):
    rc = main(["convert", str(source), "--format", "zarr", "--variant", "none",
               "--cluster-size", "250", "-o", str(tmp_path / "x.zarr")])
    err = capsys.readouterr().err
    assert rc == 2
    assert "option --format: unknown format 'zarr'" in err


@pytest.mark.parametrize("command", ["measure", "storage", "query"])
def test_cli_unknown_format_names_the_flag(capsys, tmp_path, command):
    """--format is a flag, not the config key 'formats': its error names the flag, before any
    file is opened."""
    timed = ["--readers", "pyarrow", "--selection", "all=*"] if command != "query" else []
    rc = main([command, str(tmp_path / "x.zarr"), "--source", str(tmp_path / "missing"),
               "--format", "zarr", "--variant", "none", "--cluster-size", "250", *timed,
               "-o", str(tmp_path / "out.json")])
    err = capsys.readouterr().err
    assert rc == 2
    assert f"hepfmt {command}: error: option --format: unknown format 'zarr'" in err, err
    assert "config key" not in err


# --- atomic writes -----------------------------------------------------------------------------

@pytest.mark.parametrize(("fmt", "options"), [
    ("parquet", {"data_page_size": "abc"}),
    ("parquet", {"no_such_option": 1}),
    ("ttree", {"basket_policy": "bogus"}),
    ("rntuple", {"page_size": 1}),
], ids=["parquet-bad-value", "parquet-unknown-option", "ttree-bad-policy", "rntuple-tiny-page"])
def test_failed_write_leaves_nothing(tmp_path, source, fmt, options):
    """A refused writer option is a VerificationError naming the output, and neither the output
    nor a temporary file is left for Snakemake to mistake for a result."""
    f = formats.get(fmt)
    outdir = tmp_path / "out"
    out = outdir / f"sample.{formats.extension(fmt)}"
    with pytest.raises(VerificationError) as exc:
        f.write(source, out, f.variant("none"), 250, options)
    assert str(out) in str(exc.value)
    assert not out.exists()
    assert not outdir.exists() or list(outdir.iterdir()) == []


def test_failed_write_keeps_no_partial_file_via_cli(capsys, tmp_path, source):
    out = tmp_path / "out" / "sample.parquet"
    rc = main(["convert", str(source), "--format", "parquet", "--variant", "zstd-3",
               "--cluster-size", "250", "--option", "data_page_size=abc", "-o", str(out)])
    assert rc == 2
    assert str(out) in capsys.readouterr().err
    assert list(out.parent.iterdir()) == []


# --- a library's message, made one short line ---------------------------------------------------

#: What ROOT prints when its signal handler catches a crash (shortened: two threads of ~40).
ROOT_CRASH = """Error in unzip ZSTD. Type = Data corruption detected . Code = 18446744073709551596
 *** Break *** segmentation violation



===========================================================
There was a crash.
This is the entire stack trace of all threads:
===========================================================

Thread 2 (Thread 0x7f814bdff6c0 (LWP 10365) "python"):
#0  __futex_abstimed_wait_common64 (private=0, cancel=true) at ./nptl/futex-internal.c:57
#1  0x00007f81511f812f in blas_thread_server () from /numpy.libs/libscipy_openblas64_.so
===========================================================
"""
#: A Rust error as vortex-data raises it, backtrace and all.
RUST_ERROR = ("Flat buffers error: Range [268602880, 268602884) is out of bounds.\n"
              "\twhile verifying table field `segments` at position 167412\n"
              "Backtrace:\n   0: <unknown>\n   1: <unknown>\n"
              "  20: start_thread\n             at ./nptl/pthread_create.c:442:8\n"
              "  21: clone3\n             at ./misc/clone3.S:81:0\n")


def test_brief_keeps_roots_message_not_its_crash_dump():
    line = brief(ROOT_CRASH)
    assert line == ("Error in unzip ZSTD. Type = Data corruption detected . Code = "
                    "18446744073709551596 *** Break *** segmentation violation")


def test_brief_drops_a_rust_backtrace_in_lines_or_folded():
    expected = ("not a readable Vortex file (Flat buffers error: Range [268602880, 268602884) "
                "is out of bounds. while verifying table field `segments` at position 167412)")
    assert brief(f"not a readable Vortex file ({RUST_ERROR})") == expected
    folded = " ".join(f"not a readable Vortex file ({RUST_ERROR})".split())
    assert brief(folded) == expected


def test_brief_of_a_rust_panic_drops_its_note():
    text = ("thread '<unnamed>' (5510) panicked at rust/lance-io/src/scheduler.rs:1411:62:\n"
            "called `Option::unwrap()` on a `None` value\nnote: Some details are omitted, run "
            "with `RUST_BACKTRACE=full` for a verbose backtrace.\n")
    assert brief(text) == ("thread '<unnamed>' (5510) panicked at rust/lance-io/src/"
                           "scheduler.rs:1411:62: called `Option::unwrap()` on a `None` value")


def test_brief_of_a_python_traceback_is_its_exception():
    text = ('Traceback (most recent call last):\n  File "x.py", line 1, in <module>\n'
            '    f()\n    ^^^\nValueError: no such column\n')
    assert brief(text) == "ValueError: no such column"


def test_brief_skips_rules_and_is_short():
    assert brief("read failed: ===========================") == "read failed:"
    long = brief("word " * 1000)
    assert len(long) <= MAX_CHARS + 2 and long.endswith("…")


def test_an_error_keeps_the_whole_text_for_verbose():
    exc = InputError("f.vortex", f"not a readable Vortex file ({RUST_ERROR})")
    assert "Backtrace" not in str(exc) and str(exc).startswith("f.vortex: not a readable")
    assert "Backtrace:" in exc.detail and "clone3" in exc.detail


def _vortex_without_footer(written, tmp_path) -> Path:
    good = written("vortex", "default")
    bad = tmp_path / good.name
    data = bytearray(good.read_bytes())
    data[-4096:] = bytes(4096)  # its footer: the layout is unreadable
    bad.write_bytes(bytes(data))
    return bad


def test_a_damaged_vortex_file_is_one_short_line(written, tmp_path):
    """vortex-data's errors carry a Rust backtrace (29 of them were ~3 KB lines)."""
    bad = _vortex_without_footer(written, tmp_path)
    with pytest.raises(InputError) as exc:
        formats.get("vortex").describe(bad)
    assert str(bad) in str(exc.value) and len(str(exc.value)) <= len(str(bad)) + MAX_CHARS
    assert "Backtrace" not in str(exc.value) and "<unknown>" not in str(exc.value)


def test_cli_verbose_prints_the_detail(capsys, monkeypatch, written, source, tmp_path):
    """One short line by default, from a measurement's child process too; the library's whole
    message (the Rust backtrace) with --verbose."""
    monkeypatch.setenv(VERBOSE, "")  # main() sets it for --verbose; undone after the test
    bad = _vortex_without_footer(written, tmp_path)
    args = ["measure", str(bad), "--source", str(source), "--format", "vortex", "--variant",
            "default", "--cluster-size", "250", "--readers", "vortex", "--selection", "all=*",
            "-o", str(tmp_path / "m.json")]
    assert main(args) == 2
    err = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
    assert len(err) == 1 and str(bad) in err[0] and "Backtrace" not in err[0], err
    assert main(["--verbose", *args]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "Backtrace" in err, err
