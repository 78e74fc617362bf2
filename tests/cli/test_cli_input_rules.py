"""One set of input rules for the command line and the config (issue 42, item 4).

Every count and size is refused before anything is written, in the words ``hepfmt
check-config`` uses for the config key that sets the same value, as one line naming the option;
a file the user passed is named as given when it is missing, before any sidecar beside it is
looked at; a mistyped command, subcommand or option gets the closest known one; an unknown
format, variant or reader is refused with the known ones.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from conftest import N_EVENTS
from helpers import ROOT
from hepfmt.cli import build_parser, main
from hepfmt.cli.arguments import fits_source, known_readers
from hepfmt.errors import ConfigError, UsageError
from hepfmt.formats import FASTEST
from hepfmt.plan import config as cfg


def run(capsys: pytest.CaptureFixture, *argv: object) -> tuple[int, str]:
    """``hepfmt argv``'s exit status and standard error (argparse's refusals exit, the
    commands' return)."""
    try:
        rc = main([str(a) for a in argv])
    except SystemExit as exc:
        rc = exc.code
    return rc, capsys.readouterr().err


def one_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1, err[:2000]
    return lines[0]


def convert(source: Path, out: Path, *extra: object, fmt: str = "parquet",
            variant: str = "zstd-3", cluster_size: object = 250) -> list[object]:
    return ["convert", source, "--format", fmt, "--variant", variant,
            "--cluster-size", cluster_size, "-o", out, *extra]


# --- counts and sizes ---------------------------------------------------------------------------

@pytest.mark.parametrize(("fmt", "variant", "size", "problem"), [
    ("parquet", "zstd-3", "0", "0 is less than the minimum of 1"),
    ("parquet", "zstd-3", "-5", "-5 is less than the minimum of 1"),
    ("ttree", "zstd-5", "-5", "-5 is less than the minimum of 1"),
    ("parquet", "zstd-3", "100000001", "100000001 is greater than the maximum of 100000000"),
    ("parquet", "zstd-3", str(N_EVENTS + 1),
     f"{N_EVENTS + 1} is above the {N_EVENTS} events of sample 'dy' (its files would hold one "
     f"cluster of {N_EVENTS}, not {N_EVENTS + 1})"),
    ("ttree", "zstd-5", str(N_EVENTS + 1),
     f"{N_EVENTS + 1} is above the {N_EVENTS} events of sample 'dy'"),
    ("parquet", "zstd-3", "abc", "invalid int value: 'abc'"),
])
def test_a_cluster_size_out_of_bounds_is_refused_before_anything_is_written(
        capsys, tmp_path, source, fmt, variant, size, problem) -> None:
    out = tmp_path / "out" / f"x.{'root' if fmt == 'ttree' else 'parquet'}"
    rc, err = run(capsys, *convert(source, out, fmt=fmt, variant=variant, cluster_size=size))
    assert rc == 2
    assert one_line(err).startswith(f"hepfmt convert: error: option --cluster-size: {problem}")
    assert not out.parent.exists() or list(out.parent.iterdir()) == []


def test_a_cluster_size_of_every_event_fits(source, source_meta) -> None:
    assert fits_source(N_EVENTS, source_meta) == N_EVENTS
    args = build_parser().parse_args([str(a) for a in convert(source, Path("x.parquet"),
                                                               cluster_size=N_EVENTS)])
    assert args.cluster_size == N_EVENTS


@pytest.mark.parametrize(("sizes", "cli"), [([0], "0"), ([N_EVENTS + 100], str(N_EVENTS + 100))])
def test_the_cluster_size_rule_is_check_configs(capsys, tmp_path, monkeypatch, source, sizes,
                                                cli) -> None:
    """The same numbers, refused in the same words by check-config (naming the key) and by
    convert (naming the option)."""
    c = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())
    c["results"] = str(tmp_path / "results")
    c["samples"]["dy"] = {**c["samples"].pop("DYJetsToLL"), "n_events": N_EVENTS}
    c["cluster_sizes"] = sizes
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as refused:
        cfg.validate(c)
    assert refused.value.key == "cluster_sizes[0]"
    rc, err = run(capsys, *convert(source, tmp_path / "x.parquet", cluster_size=cli))
    assert rc == 2
    assert one_line(err) == f"hepfmt convert: error: option --cluster-size: {refused.value.problem}"


@pytest.mark.parametrize(("argv", "line"), [
    (["generate", "--process", "ZZ", "--events", "0", "-o", "g.arrow"],
     "hepfmt generate: error: option --events: 0 is less than the minimum of 1"),
    (["generate", "--process", "ZZ", "--events", "10", "--seed", "-1", "-o", "g.arrow"],
     "hepfmt generate: error: option --seed: -1 is less than the minimum of 0"),
    (["measure", "f.parquet", "--threads", "1,0"],
     "hepfmt measure: error: option --threads: 0 is less than the minimum of 1"),
    (["measure", "f.parquet", "--timeout", "nan"],
     "hepfmt measure: error: option --timeout: nan is not a finite number"),
    (["measure", "f.parquet", "--budget-s", "0"],
     "hepfmt measure: error: option --budget-s: 0.0 is less than or equal to the minimum of 0"),
    (["pair", "--rounds", "0"],
     "hepfmt pair: error: option --rounds: 0 is less than the minimum of 1"),
    (["pair", "--max-load", "2"],
     "hepfmt pair: error: option --max-load: 2.0 is greater than the maximum of 1"),
    (["storage", "f.parquet", "--threads", "0"],
     "hepfmt storage: error: option --threads: 0 is less than the minimum of 1"),
    (["query", "f.parquet", "--repetitions", "2"],
     "hepfmt query: error: option --repetitions: 2 is less than the minimum of 3"),
    (["bench", "layers", "f.root", "--seconds", "0"],
     "hepfmt bench layers: error: option --seconds: 0.0 is less than or equal to the minimum "
     "of 0"),
    (["bench", "overhead", "f.root", "--runs", "0"],
     "hepfmt bench overhead: error: option --runs: 0 is less than the minimum of 1"),
    (["metadata", "write", "float32-c10", "--row-groups", "0"],
     "hepfmt metadata write: error: option --row-groups: 0 is less than the minimum of 1"),
    (["metadata", "time", "f.parquet", "--budget", "-1"],
     "hepfmt metadata time: error: option --budget-s/--budget: -1.0 is less than or equal to "
     "the minimum of 0"),
    (["--memory-cap", "8Q", "measure"],
     "hepfmt: error: option --memory-cap: '8q' is not a memory size (8G, 512M, bytes) or 'off'"),
])
def test_a_count_or_amount_is_refused_in_one_line_naming_the_option(capsys, tmp_path,
                                                                     monkeypatch, argv,
                                                                     line) -> None:
    monkeypatch.chdir(tmp_path)
    rc, err = run(capsys, *argv)
    assert rc == 2
    assert one_line(err) == line
    assert list(tmp_path.iterdir()) == []


# --- files the user passed ----------------------------------------------------------------------

def test_a_missing_source_is_named_as_given_not_its_sidecar(capsys, tmp_path,
                                                           monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    rc, err = run(capsys, *convert(Path("missing.arrow"), Path("out.parquet")))
    assert rc == 2
    assert one_line(err) == ("hepfmt convert: error: missing.arrow: cannot read source sample "
                             "(No such file or directory)")
    assert list(tmp_path.iterdir()) == []


def test_a_directory_as_source_is_named(capsys, tmp_path) -> None:
    rc, err = run(capsys, *convert(tmp_path, tmp_path / "out.parquet"))
    assert rc == 2
    assert one_line(err).startswith(f"hepfmt convert: error: {tmp_path}: a directory, not a "
                                    "regular file")


@pytest.mark.parametrize("command", ["measure", "storage", "query"])
def test_a_missing_written_file_is_named_before_the_source(capsys, tmp_path, monkeypatch,
                                                           command) -> None:
    monkeypatch.chdir(tmp_path)
    timed = ["--readers", "pyarrow", "--selection", "all=*"] if command != "query" else []
    rc, err = run(capsys, command, "gone.parquet", "--source", "missing.arrow",
                  "--format", "parquet", "--variant", "zstd-3", "--cluster-size", "250", *timed,
                  "-o", "out.json")
    assert rc == 2
    assert one_line(err) == (f"hepfmt {command}: error: gone.parquet: cannot read data file "
                             "(No such file or directory)")


def test_a_missing_source_option_is_named_before_its_sidecar(capsys, tmp_path, monkeypatch,
                                                             written) -> None:
    monkeypatch.chdir(tmp_path)
    rc, err = run(capsys, "measure", written("parquet", "zstd-3"), "--source", "missing.arrow",
                  "--format", "parquet", "--variant", "zstd-3", "--cluster-size", "250",
                  "--readers", "pyarrow", "--selection", "all=*", "-o", "out.json")
    assert rc == 2
    assert one_line(err).startswith("hepfmt measure: error: missing.arrow: cannot read source "
                                    "sample"), err
    assert "missing.json" not in err


def test_a_fifo_source_is_refused_not_waited_on(capsys, tmp_path) -> None:
    fifo = tmp_path / "fifo.arrow"
    os.mkfifo(fifo)
    rc, err = run(capsys, *convert(fifo, tmp_path / "out.parquet"))
    assert rc == 2
    assert one_line(err).startswith(f"hepfmt convert: error: {fifo}: a FIFO, not a regular file")


# --- mistyped names -----------------------------------------------------------------------------

@pytest.mark.parametrize(("argv", "prog", "typed", "meant"), [
    (["mesure"], "hepfmt", "mesure", "measure"),
    (["convrt", "x.arrow"], "hepfmt", "convrt", "convert"),
    (["bench", "overhed"], "hepfmt bench", "overhed", "overhead"),
    (["metadata", "tme"], "hepfmt metadata", "tme", "time"),
    (["schema", "extrct", "x.root"], "hepfmt schema", "extrct", "extract"),
])
def test_a_mistyped_command_gets_the_closest(capsys, argv, prog, typed, meant) -> None:
    rc, err = run(capsys, *argv)
    assert rc == 2
    line = err.splitlines()[-1]
    assert line.startswith(f"{prog}: error: argument ")
    assert f"invalid choice: {typed!r}, did you mean {meant!r}? (choose from " in line, line


def test_a_command_like_no_other_gets_no_guess(capsys) -> None:
    rc, err = run(capsys, "xyzzy")
    assert rc == 2
    assert "did you mean" not in err and "invalid choice: 'xyzzy' (choose from" in err


@pytest.mark.parametrize(("argv", "tail"), [
    (["convert", "s.arrow", "--format", "parquet", "--variant", "none", "--cluster-size", "5",
      "-o", "o.parquet", "--sise-output", "x"],
     "hepfmt convert: error: unrecognized arguments: --sise-output x "
     "(did you mean '--size-output'?)"),
    (["metadata", "time", "f", "--layout", "l", "--implementations", "pyarrow", "-o", "x",
      "--budgets", "3"],
     "hepfmt metadata time: error: unrecognized arguments: --budgets 3 "
     "(did you mean '--budget-s'?)"),
    (["bench", "rounds", "p", "--ouput", "x"],
     "hepfmt bench rounds: error: unrecognized arguments: --ouput x (did you mean '--output'?)"),
    (["convert", "s.arrow", "--format", "parquet", "--variant", "none", "--clustr", "5",
      "-o", "o.parquet"],
     "hepfmt convert: error: the following arguments are required: --cluster-size "
     "(did you mean '--cluster-size' for '--clustr'?)"),
])
def test_a_mistyped_option_gets_the_closest_of_its_command(capsys, argv, tail) -> None:
    rc, err = run(capsys, *argv)
    assert rc == 2
    assert err.startswith(f"usage: {tail.split(':')[0]} ")  # that command's usage, not hepfmt's
    assert err.splitlines()[-1] == tail


def test_metadata_time_takes_budget_s_and_still_budget() -> None:
    base = ["metadata", "time", "f", "--layout", "l", "--implementations", "pyarrow", "-o", "x"]
    assert build_parser().parse_args([*base, "--budget-s", "3"]).budget == 3.0
    assert build_parser().parse_args([*base, "--budget", "4"]).budget == 4.0


# --- known formats, variants, readers, processes ------------------------------------------------

@pytest.mark.parametrize(("extra", "line"), [
    ({"fmt": "parqet"}, "option --format: unknown format 'parqet'; known: ['ttree', "),
    ({"variant": "zstdd-3"}, "config key '--variant': algorithm 'zstdd' not one of "),
    ({"variant": "zstd-99"}, "config key '--variant': 'zstd-99': "),
])
def test_an_unknown_format_or_variant_is_refused_with_the_known_ones(capsys, tmp_path, source,
                                                                     extra, line) -> None:
    out = tmp_path / "out.parquet"
    rc, err = run(capsys, *convert(source, out, **extra))
    assert rc == 2
    assert one_line(err).startswith(f"hepfmt convert: error: {line}"), err
    assert not out.exists()


def test_a_close_format_and_variant_are_suggested(capsys, tmp_path, source) -> None:
    _, err = run(capsys, *convert(source, tmp_path / "o.parquet", fmt="parqet"))
    assert one_line(err).endswith("(did you mean 'parquet'?)")
    _, err = run(capsys, *convert(source, tmp_path / "o.parquet", variant="zstdd-3"))
    assert one_line(err).endswith("(did you mean 'zstd'?)")


@pytest.mark.parametrize("command", ["measure", "storage"])
def test_an_unknown_reader_is_refused_before_the_file_is_looked_at(capsys, tmp_path,
                                                                  command) -> None:
    rc, err = run(capsys, command, tmp_path / "gone.parquet", "--source", tmp_path / "gone.arrow",
                  "--format", "parquet", "--variant", "zstd-3", "--cluster-size", "250",
                  "--readers", "pyarrow,polar", "--selection", "all=*", "-o", tmp_path / "o.json")
    assert rc == 2
    line = one_line(err)
    assert line.startswith(f"hepfmt {command}: error: option --readers: no reader 'polar' for "
                           "parquet; known: ['awkward', "), line
    assert line.endswith("(did you mean 'polars'?)")


def test_a_pair_side_reader_may_be_fastest_and_is_else_known() -> None:
    assert known_readers("parquet", [FASTEST], "--parquet-reader", also=(FASTEST,)) == [FASTEST]
    with pytest.raises(UsageError, match=r"option --parquet-reader: no reader 'pyarow'"):
        known_readers("parquet", ["pyarow"], "--parquet-reader", also=(FASTEST,))


def test_an_unknown_process_is_refused_as_check_config_refuses_it(capsys, tmp_path) -> None:
    out = tmp_path / "g.arrow"
    rc, err = run(capsys, "generate", "--process", "DYJetsToL", "--events", "10", "-o", out)
    assert rc == 2
    assert one_line(err).startswith("hepfmt generate: error: option --process: unknown process "
                                    "'DYJetsToL'; known: ['DYJetsToLL', ")
    assert one_line(err).endswith("(did you mean 'DYJetsToLL'?)")
    assert not out.exists()
