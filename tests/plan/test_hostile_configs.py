"""Configs of issue 44, round three: each was accepted by ``check-config`` and ``snakemake -n``
(or ran code, or gave a traceback, or hung); now each is refused before any job, in one line
naming the key (or the file), exit status 2, by both.

- where results go: a system directory, ``..`` into one, ``.git`` and inside it, the project's
  own config and package directories, ``/proc/self/cwd``, a symlink to the project, a
  directory of tracked files (``results/reference/amd-epyc``, or any repository's), an
  existing directory of someone else's; the default ``results``, a new, an empty, a marked
  and an earlier run's directory are taken;
- labels and names with a newline, an ANSI escape, a right-to-left override; two names or two
  labels that are one after Unicode normalisation; a seed of 10^100;
- a sample URL whose server does not answer: a warning naming it, an error under --strict;
- a YTE config under plain ``snakemake -n``: nothing of it runs; a UTF-16 config, a FIFO, a
  device or a directory given as the config, a FIFO given as a sample file: one line, no
  traceback, no hang.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from helpers import ROOT, SNAKEMAKE, run_snakemake
from hepfmt import atomic
from hepfmt.cli import main
from hepfmt.plan import config as cfg
from hepfmt.plan import lock, resultsdir

SNAKEMAKE_BIN = Path(sys.executable).parent / "snakemake"


def _base(tmp: Path) -> dict:
    c = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())
    c["results"] = str(tmp / "results")
    return c


def _write(tmp: Path, config: dict, name: str = "hostile.yaml") -> Path:
    path = tmp / name
    path.write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True))
    return path


def _check(path: Path, capsys: pytest.CaptureFixture, *extra: str) -> tuple[int, list[str]]:
    """``hepfmt check-config``'s status and stderr lines, from the project root."""
    rc = main(["check-config", str(path), *extra])
    return rc, capsys.readouterr().err.splitlines()


def _refused(path: Path, capsys: pytest.CaptureFixture, key: str | None) -> str:
    """The one line check-config refuses ``path`` with, naming ``key`` (None: the file)."""
    rc, lines = _check(path, capsys)
    assert rc == 2 and len(lines) == 1, lines
    named = f"config key {key!r}: " if key is not None else f"{path}: "
    assert lines[0].startswith("hepfmt check-config: error: " + named), lines[0]
    return lines[0]


# -- where results go ---------------------------------------------------------------------------

def _link_to_project(tmp: Path) -> str:
    link = tmp / "project-link"
    link.symlink_to(ROOT)
    return str(link)


def _link_into_package(tmp: Path) -> str:
    link = tmp / "package-link"
    link.symlink_to(ROOT / "analysis")
    return str(link / "new")


def _foreign(tmp: Path) -> str:
    d = tmp / "mine"
    d.mkdir()
    (d / "thesis.tex").write_text("my own work\n")
    return str(d)


def _up_into_etc(tmp: Path) -> str:
    return "../" * len(ROOT.parts) + "etc/hepfmt-results"


REFUSED_RESULTS: dict[str, tuple[Callable[[Path], str], str]] = {
    "/etc": (lambda tmp: "/etc", "inside the system directory '/etc'"),
    "a new directory in /usr": (lambda tmp: "/usr/local/hepfmt-results", "system directory"),
    "'..' into /etc": (_up_into_etc, "inside the system directory '/etc'"),
    "/proc/self/cwd": (lambda tmp: "/proc/self/cwd", "the project root"),
    # a checkout under /tmp is refused first for holding the project
    "/tmp itself": (lambda tmp: "/tmp", "is a system directory" if not str(ROOT).startswith(
        "/tmp/") else "is a directory holding the project"),
    ".git": (lambda tmp: ".git", "inside a .git directory"),
    "inside .git": (lambda tmp: ".git/objects/results", "inside a .git directory"),
    "config": (lambda tmp: "config", "the project's own config/"),
    "analysis": (lambda tmp: "analysis", "the project's own analysis/"),
    "a new directory in workflow": (lambda tmp: "workflow/results", "own workflow/"),
    "a symlink to the project": (_link_to_project, "the project root"),
    "a symlink into the package": (_link_into_package, "the project's own analysis/"),
    "the committed reference run": (lambda tmp: "results/reference/amd-epyc",
                                    "results/reference/"),
    "an existing directory of someone else's": (_foreign, "exists and is not hepfmt's"),
}


@pytest.mark.parametrize("name", list(REFUSED_RESULTS))
def test_a_results_directory_not_hepfmts_is_refused(name: str, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture) -> None:
    where, words = REFUSED_RESULTS[name]
    monkeypatch.chdir(ROOT)
    c = _base(tmp_path)
    c["results"] = where(tmp_path)
    line = _refused(_write(tmp_path, c), capsys, "results")
    assert words in line


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"})


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_tracked_files_are_never_where_a_run_writes(tmp_path: Path) -> None:
    """The general rule, in a repository of its own: a results directory that is, or is
    inside, a directory of tracked files is refused, and so is one whose tracked files lie
    where a run writes; one whose tracked files a run never touches (results/ with its
    committed reference/) is taken, as is a new directory beside them."""
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "code.py").write_text("x = 1\n")
    (repo / "out" / "kept").mkdir(parents=True)
    (repo / "out" / "kept" / "notes.md").write_text("committed\n")
    (repo / "runs" / "old" / "tables").mkdir(parents=True)
    (repo / "runs" / "old" / "tables" / "size.csv").write_text("a,b\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "t")

    for where, words in ((repo / "src", "holds files tracked by git"),
                         (repo / "src" / "new", "holds files tracked by git"),
                         (repo / "out" / "kept", "holds files tracked by git"),
                         (repo / "runs" / "old", "tracked by git where a run writes")):
        why = resultsdir.problem(str(where))
        assert why is not None and words in why, (where, why)
    assert resultsdir.problem(str(repo / "out")) is None  # only kept/, which no run writes
    assert resultsdir.problem(str(repo / "fresh")) is None
    assert resultsdir.problem(str(repo / "runs" / "new")) is None


def test_the_results_directories_a_run_may_take(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The default ``results`` of the checkout (its committed reference runs inside), a new
    directory, an empty one, one with hepfmt's marker, one with an earlier run's files from
    before the marker; taking one (the lock) marks it."""
    monkeypatch.chdir(ROOT)
    assert resultsdir.problem("results") is None
    assert resultsdir.problem(str(tmp_path / "new" / "results")) is None
    empty = tmp_path / "empty"
    empty.mkdir()
    assert resultsdir.problem(str(empty)) is None
    marked = Path(_foreign(tmp_path))
    assert resultsdir.problem(str(marked)) is not None
    resultsdir.mark(marked)
    assert resultsdir.problem(str(marked)) is None
    earlier = tmp_path / "earlier"
    (earlier / "sources").mkdir(parents=True)
    (earlier / "notes.txt").write_text("mine, beside an old run's\n")
    assert resultsdir.problem(str(earlier)) is not None  # one directory of a run's name: a
    (earlier / "logs").mkdir()  # home directory's logs/ is no run; two are
    assert resultsdir.problem(str(earlier)) is None
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "report.html").write_text("<html></html>\n")
    (locked / ".hepfmt.lock").write_text("pid 1 in /\n")  # every run since the lock leaves it
    assert resultsdir.problem(str(locked)) is None
    taken = tmp_path / "taken"
    lock.hold(taken)
    lock.release(taken)
    assert (taken / atomic.RESULTS_MARKER).is_file()


@pytest.mark.slow
@pytest.mark.parametrize("where", ["/etc", ".git", "results/reference/amd-epyc"])
def test_snakemake_refuses_the_same_results_in_one_line(where: str, tmp_path: Path) -> None:
    c = _base(tmp_path)
    c["results"] = where
    proc = run_snakemake(tmp_path, "-n", "--configfile", str(_write(tmp_path, c)), timeout=300)
    output = (proc.stdout + proc.stderr).strip()
    assert proc.returncode == 2, output[-2000:]
    assert output.splitlines() == [output], output[-2000:]
    assert output.startswith("hepfmt: error: config key 'results': "), output


# -- labels, names, seeds ---------------------------------------------------------------------

def _label(text: str) -> Callable[[dict], object]:
    return lambda c: c["formats"]["parquet_bss"].update(label=text)


def _pair_label(i: int, text: str) -> Callable[[dict], object]:
    return lambda c: c["compare"]["pairs"][i].update(label=text)


def _sample(name: str) -> Callable[[dict], object]:
    return lambda c: c["samples"].update({name: {"process": "QCD", "n_events": 1500}})


LABELS: dict[str, tuple[Callable[[dict], object], str, str]] = {
    "a newline in a label": (_label("Parquet\nBSS"), "formats.parquet_bss.label", "a newline"),
    "an ANSI escape in a label": (_label("\x1b[31mParquet\x1b[0m"), "formats.parquet_bss.label",
                                  "an escape"),
    "a right-to-left override in a pair label": (_pair_label(0, "none \u202e3-dtsz"),
                                                 "compare.pairs[0].label", "U+202E"),
    "a tab in a sample name": (_sample("QCD\tHT"), "samples", "a tab"),
    "a zero-width space in a sample name": (_sample("DYJets\u200bToLL"), "samples", "U+200B"),
    "two pairings of one label": (lambda c: [_pair_label(0, "zstd")(c),
                                             _pair_label(1, "ｚｓｔｄ")(c)],
                                  "compare.pairs[1].label", "also pairs[0]'s label"),
    "two formats of one label": (lambda c: c["formats"]["parquet"].update(label="Parquet BSS"),
                                 "formats.parquet_bss.label", "also format 'parquet'"),
    "two samples of one name": (_sample("ＤＹJetsToLL"), "samples.ＤＹJetsToLL",
                                "after Unicode normalisation"),
    "a seed of 10^100": (lambda c: c["samples"]["TTJets"].update(seed=10**100),
                         "samples.TTJets.seed", "greater than the maximum"),
    "a seed of 2^63": (lambda c: c["samples"]["TTJets"].update(seed=2**63),
                       "samples.TTJets.seed", "greater than the maximum"),
    "a metadata seed of 10^100": (lambda c: c.update(metadata={"seed": 10**100}),
                                  "metadata.seed", "greater than the maximum"),
}


@pytest.mark.parametrize("name", list(LABELS))
def test_labels_names_and_seeds(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                capsys: pytest.CaptureFixture) -> None:
    change, key, words = LABELS[name]
    monkeypatch.chdir(ROOT)
    c = _base(tmp_path)
    change(c)
    line = _refused(_write(tmp_path, c), capsys, key)
    assert words in line
    assert line.isprintable()  # the refusal itself garbles nothing


def test_the_largest_seed_is_taken(tmp_path: Path) -> None:
    c = _base(tmp_path)
    c["samples"]["TTJets"]["seed"] = 2**63 - 1
    assert cfg.validate(c)["samples"]["TTJets"]["seed"] == 2**63 - 1


# -- sample URLs --------------------------------------------------------------------------------

def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_sample_url_is_a_warning_and_under_strict_an_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    monkeypatch.chdir(ROOT)
    url = f"root://127.0.0.1:{_closed_port()}//store/nano.root"
    c = _base(tmp_path)
    c["samples"]["Remote"] = {"file": url}
    path = _write(tmp_path, c)
    rc, lines = _check(path, capsys)
    assert rc == 0
    warned = [x for x in lines if url in x]
    assert warned == [f"hepfmt check-config: warning: config key 'samples.Remote.file': "
                      f"{url!r} cannot be reached: " + warned[0].split("cannot be reached: ")[1]]
    rc, lines = _check(path, capsys, "--strict")
    assert rc == 2 and len(lines) == 1, lines
    assert lines[0].startswith("hepfmt check-config: error: config key 'samples.Remote.file': "
                               f"{url!r} cannot be reached")


def test_a_reachable_sample_url_is_no_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture) -> None:
    monkeypatch.chdir(ROOT)
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        url = f"root://127.0.0.1:{server.getsockname()[1]}//store/nano.root"
        c = _base(tmp_path)
        c["samples"]["Remote"] = {"file": url}
        rc, lines = _check(_write(tmp_path, c), capsys, "--strict")
    assert rc == 0 and not [x for x in lines if url in x]


# -- no code from configs; configs that are not text, or not files -----------------------------

YTE = """__use_yte__: true
__definitions__:
  - import pathlib
  - pathlib.Path({marker!r}).write_text("ran")
"""
YTE_VALUE = """__use_yte__: true
results: ?__import__("pathlib").Path({marker!r}).write_text("ran") and "results"
"""


@pytest.mark.slow
@pytest.mark.parametrize("template", [YTE, YTE_VALUE], ids=["__definitions__", "?-value"])
def test_plain_snakemake_runs_nothing_of_a_yte_config(template: str, tmp_path: Path) -> None:
    """``snakemake -n --configfile C``, as the README documents it beside ``make run``:
    Snakemake loads C through YTE before the Snakefile; in hepfmt's venv it reads C as hepfmt
    does (analysis/hepfmt/plan/plainconfig.py): the marker C's code would write never appears, and C
    is refused in one line. (``check-config`` refuses it the same way.)"""
    import sysconfig

    from hepfmt.plan import plainconfig

    assert (Path(sysconfig.get_paths()["purelib"]) / plainconfig.PTH).is_file(), (
        "this venv lacks the hook `make` installs: python -m hepfmt.plan.plainconfig")
    marker = tmp_path / "MARKER"
    c = _base(tmp_path)
    path = tmp_path / "yte.yaml"
    path.write_text(template.format(marker=str(marker))
                    + yaml.safe_dump({k: v for k, v in c.items() if k != "results"}))
    proc = subprocess.run([str(SNAKEMAKE_BIN), "-n", "-s", str(ROOT / "Snakefile"),
                           "--directory", str(ROOT), "--configfile", str(path)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    output = (proc.stdout + proc.stderr).strip()
    assert not marker.exists(), "the config's code ran"
    assert proc.returncode == 2, output[-2000:]
    assert output == ("hepfmt: error: config key '__use_yte__': YTE templating (Snakemake "
                      "would run the Python in this config while loading it): a study config "
                      "is plain YAML")
    assert main(["check-config", str(path)]) == 2
    assert not marker.exists()


@pytest.mark.slow
def test_the_snakefile_refuses_a_yte_config_where_snakemake_ran_it(tmp_path: Path) -> None:
    """A Snakemake outside hepfmt's venv (no hook) runs a YTE config's code as it loads it,
    before any hepfmt code can refuse: the Snakefile then refuses it before any rule runs (the
    marker shows the code ran: what `make run` and check-config first avoid)."""
    marker = tmp_path / "MARKER"
    path = tmp_path / "yte.yaml"
    path.write_text(YTE.format(marker=str(marker)) + yaml.safe_dump(
        {k: v for k, v in _base(tmp_path).items() if k != "results"}))
    unhooked = ("import sys; sys.meta_path[:] = [f for f in sys.meta_path "
                "if type(f).__name__ != '_Finder']; from snakemake.cli import main; "
                "sys.exit(main())")
    proc = subprocess.run([sys.executable, "-c", unhooked, "-n", "-s", str(ROOT / "Snakefile"),
                           "--directory", str(ROOT), "--configfile", str(path)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    output = (proc.stdout + proc.stderr).strip()
    assert proc.returncode == 2, output[-2000:]
    assert output.endswith("hepfmt: error: config key '__use_yte__': YTE templating (Snakemake "
                           "would run the Python in this config while loading it): a study "
                           "config is plain YAML")
    assert marker.exists()  # the limit of a check in the Snakefile


def _utf16(tmp: Path) -> Path:
    path = tmp / "utf16.yaml"
    path.write_bytes(yaml.safe_dump(_base(tmp)).encode("utf-16"))
    return path


def _fifo(tmp: Path) -> Path:
    path = tmp / "fifo.yaml"
    os.mkfifo(path)
    return path


def _directory(tmp: Path) -> Path:
    return tmp


NOT_CONFIGS: dict[str, tuple[Callable[[Path], Path], str]] = {
    "UTF-16": (_utf16, "UTF-16 text"),
    "a FIFO": (_fifo, "a FIFO, not a regular file"),
    "/dev/zero": (lambda tmp: Path("/dev/zero"), "a character device, not a regular file"),
    "a directory": (_directory, "a directory, not a regular file"),
}


@pytest.mark.parametrize("name", list(NOT_CONFIGS))
def test_a_config_that_is_no_text_file_is_refused_naming_it(name: str, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture
                                                            ) -> None:
    make, words = NOT_CONFIGS[name]
    path = make(tmp_path)
    assert words in _refused(path, capsys, None)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(NOT_CONFIGS))
def test_snakemake_refuses_a_config_that_is_no_text_file(name: str, tmp_path: Path) -> None:
    """Snakemake itself read these before the Snakefile: a 34-line traceback for UTF-16, a
    hang for a FIFO."""
    make, words = NOT_CONFIGS[name]
    path = make(tmp_path)
    proc = subprocess.run([*SNAKEMAKE, "-n", "-s", str(ROOT / "Snakefile"), "--directory",
                           str(ROOT), "--configfile", str(path)], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path, stdin=subprocess.DEVNULL)
    output = (proc.stdout + proc.stderr).strip()
    assert proc.returncode == 2, output[-2000:]
    assert output == output.splitlines()[0], output[-2000:]
    assert output.startswith(f"hepfmt: error: {path}: ") and words in output


def test_a_fifo_as_a_sample_file_is_refused_not_waited_on(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture) -> None:
    monkeypatch.chdir(ROOT)
    fifo = tmp_path / "nano.root"
    os.mkfifo(fifo)
    c = _base(tmp_path)
    c["samples"]["Real"] = {"file": str(fifo)}
    line = _refused(_write(tmp_path, c), capsys, "samples.Real.file")
    assert "a FIFO, not a regular file" in line
