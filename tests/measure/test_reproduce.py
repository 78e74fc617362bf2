"""``hepfmt bench reproduce`` (hepfmt.measure.reproduce): two passes over real files, the
second after the first; the report's lines and agreement; the busy processes' lifetime; the
missing-file and filter errors; the command's glue to the plan."""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from conftest import CLUSTER_SIZE, N_EVENTS, PROCESS, SEED, SELECTION
from helpers import ROOT, write_config
from hepfmt.cli import main
from hepfmt.errors import InputError, UsageError
from hepfmt.measure import reproduce as rp
from hepfmt.measure.pairs import PairSide, PairSpec
from hepfmt.paired import QUANTITIES, READS
from hepfmt.report.compare_runs import consistent, two_passes
from hepfmt.samples.source import sidecar_path

SUMMARY = re.compile(r"^(\d+) of (\d+) ratios agree \((\d+%|n/a): medians consistent with both "
                     r"intervals(; \d+% expected if nothing changed)?\); each median inside "
                     r"the other's interval: (\d+) of \d+ \((\d+%|n/a)(; \d+% expected if "
                     r"nothing changed)?\), (idle|with \d+ CPU-bound process(es)?), CPU .+, "
                     r"load: worst other-CPU share \d+%$")


@pytest.fixture(scope="module")
def sides(source: Path, tmp_path_factory) -> tuple[PairSide, PairSide]:
    """A TTree and a Parquet file converted as the workflow converts them: proven at convert,
    with their size records (bytes per branch, proofs, digest)."""
    root = tmp_path_factory.mktemp("reproduce")
    out = []
    for fmt, variant, reader, ext in (("ttree", "zstd-5", "rdf", "root"),
                                      ("parquet", "zstd-3", "pyarrow", "parquet")):
        path, record = root / f"{fmt}.{ext}", root / f"{fmt}.json"
        assert main(["convert", str(source), "--format", fmt, "--variant", variant,
                     "--cluster-size", str(CLUSTER_SIZE), "--prove", reader, "-o", str(path),
                     "--size-output", str(record)]) == 0
        out.append(PairSide(str(path), fmt, fmt, variant, reader, str(record)))
    return out[0], out[1]


def _spec(sides, source, **kw) -> PairSpec:
    # max_load 1: the suite may share the machine with other work; load is not tested here
    base = {"cluster_size": CLUSTER_SIZE, "selections": {"ten": list(SELECTION)},
            "rounds": 1, "min_repetitions": 3, "max_repetitions": 3, "budget_s": 5.0,
            "max_load": 1.0, "timeout": 600.0}
    return PairSpec("zstd", str(source), ttree=sides[0], parquet=sides[1], **(base | kw))


@pytest.fixture(scope="module")
def twice(sides, source, tmp_path_factory) -> tuple[rp.Reproduction, Path, list[str]]:
    scratch = tmp_path_factory.mktemp("scratch")
    job = rp.Job(rp.job_name("dy", "zstd", CLUSTER_SIZE, "ten"), _spec(sides, source))
    said: list[str] = []
    return rp.reproduce([job], scratch, progress=said.append), scratch, said


def test_every_job_is_measured_twice_one_pass_after_the_other(twice) -> None:
    rep, scratch, said = twice
    assert said == ["run1: 1/1 dy/zstd/c250/ten", "run2: 1/1 dy/zstd/c250/ten"]
    first, second = scratch / "run1" / "0000.json", scratch / "run2" / "0000.json"
    assert first.stat().st_mtime <= second.stat().st_mtime
    keys = ["selection", "read", "quantity"]
    for rows in (rep.first, rep.second):
        assert [[r[k] for k in keys] for r in rows] == \
            [["ten", read, q] for read in READS for q in QUANTITIES]
        assert {r["n_pairs"] for r in rows if r["read"] == "repeats"} == {3}


def test_the_report_is_every_ratio_then_one_summary_line(twice) -> None:
    rep, _, _ = twice
    out = two_passes(rep.first, rep.second, rep.conditions())
    n = len(READS) * len(QUANTITIES)
    assert len(out) == 1 + n + 2 and out[-2] == ""
    assert out[0].split()[:7] == ["pair", "cluster", "selection", "read", "quantity", "run",
                                  "1"]
    m = SUMMARY.match(out[-1])
    assert m and m.group(8) == "idle", out[-1]
    # the counts the report gives, from the rows themselves: each median inside the other's
    # interval (a median inside one interval is always consistent), ratios without an interval
    # not counted
    agree = inside = total = 0
    for a, b, line in zip(rep.first, rep.second, out[1:1 + n], strict=True):
        assert line.split()[:5] == ["zstd", "250", "ten", a["read"], a["quantity"]]
        if any(math.isnan(r[k]) for r in (a, b) for k in ("ratio_lo", "ratio_hi")):
            assert line.split()[-3:] == ["n/a"] * 3
            continue
        both = (b["ratio_lo"] <= a["ratio"] <= b["ratio_hi"]
                and a["ratio_lo"] <= b["ratio"] <= a["ratio_hi"])
        ok = consistent(a["ratio"], a["ratio_lo"], a["ratio_hi"], b["ratio"], b["ratio_lo"],
                        b["ratio_hi"])
        assert line.split()[-1] == ("yes" if ok else "no") and (ok or not both)
        agree, inside, total = agree + ok, inside + both, total + 1
    assert (int(m.group(1)), int(m.group(2)), int(m.group(5))) == (agree, total, inside)
    assert total > 0


def _fake_record(spec: PairSpec, out: Path) -> dict:
    """What :func:`measure_pair` returns, enough of it for a pass: one rate ratio."""
    out.write_text("{}")
    return {"summary": {"ratios": [{
        "pair": spec.label, "sample": "dy", "cluster_size": spec.cluster_size, "threads": 1,
        "selection": next(iter(spec.selections)), "read": "repeats", "quantity": "rate",
        "ratio": 1.0, "ratio_lo": 0.9, "ratio_hi": 1.1, "coverage": 0.9,
        "worst_other_cpu_share": spec.max_load / 2}]}}


def _busy_pids() -> set[int]:
    """Every running busy loop, whoever started it."""
    out = set()
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if rp.BUSY_LOOP.encode() in (d / "cmdline").read_bytes():
                    out.add(int(d.name))
            except OSError:
                continue  # gone meanwhile
    return out


def test_busy_processes_run_through_both_passes_and_end_with_them(sides, source,
                                                                  tmp_path) -> None:
    seen: list[tuple[float, set[int]]] = []

    def measure(spec: PairSpec, out: Path) -> dict:
        # a process just started shows no command line in /proc for a moment
        assert _until(lambda: len(_busy_pids() - before) >= 2)
        seen.append((spec.max_load, _busy_pids() - before))
        return _fake_record(spec, out)

    before = _busy_pids()
    rep = rp.reproduce([rp.Job("dy/zstd/c250/ten", _spec(sides, source, max_load=0.25))],
                       tmp_path, loads=2, measure=measure)
    assert len(seen) == 2
    ours = seen[0][1]
    assert len(ours) == 2 and ours == seen[1][1]  # the same two, through both passes
    assert all(ml == pytest.approx(min(1.0, 0.25 + 2 / os.cpu_count())) for ml, _ in seen)
    assert not ours & _busy_pids()  # gone
    assert rep.conditions().startswith("with 2 CPU-bound processes, CPU ")


def test_busy_processes_end_on_an_error_too() -> None:
    with pytest.raises(KeyboardInterrupt), rp.busy(1) as procs:
        assert procs[0].poll() is None
        raise KeyboardInterrupt
    assert procs[0].poll() is not None


def test_busy_processes_end_when_their_parent_is_killed(tmp_path) -> None:
    """SIGKILL runs no ``finally``: the busy loop notices its parent is gone by itself."""
    parent = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom hepfmt.measure import reproduce\n"
         "with reproduce.busy(1) as procs:\n    print(procs[0].pid, flush=True)\n"
         "    time.sleep(600)\n"], stdout=subprocess.PIPE, text=True)
    pid = int(parent.stdout.readline())
    assert _until(lambda: pid in _busy_pids())
    parent.kill()
    parent.wait()
    assert _until(lambda: pid not in _busy_pids())


def _until(condition, timeout_s: float = 30.0) -> bool:
    """Whether ``condition`` came true within ``timeout_s`` (a bound, not a timing)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_a_missing_file_is_named_before_anything_is_timed(sides, source, tmp_path) -> None:
    gone = PairSide(str(tmp_path / "gone.parquet"), "parquet", "parquet", "zstd-3", "pyarrow")
    spec = PairSpec("zstd", str(source), CLUSTER_SIZE, sides[0], gone, {"ten": SELECTION})

    def measure(spec: PairSpec, out: Path) -> dict:
        raise AssertionError("timed although a file is missing")

    with pytest.raises(InputError, match=r"gone\.parquet.*run make run first"):
        rp.reproduce([rp.Job("dy/zstd/c250/ten", spec)], tmp_path, measure=measure)


def test_jobs_are_chosen_by_a_piece_of_their_name() -> None:
    names = [rp.job_name("dy", "zstd", c, s) for c in (250, 1000) for s in ("ten", "all")]
    assert rp.select(names, "c1000/") == ["dy/zstd/c1000/ten", "dy/zstd/c1000/all"]
    assert rp.select(names, None) == names
    with pytest.raises(UsageError, match=r"--jobs.*dy/zstd/c250/ten"):
        rp.select(names, "c9")


def _config(results: Path) -> Path:
    """A study of one sample, one pairing, one cluster size: its results go to ``results``."""
    c = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())
    c.update(results=str(results), cluster_sizes=[CLUSTER_SIZE],
             samples={"dy": {"process": PROCESS, "n_events": N_EVENTS, "seed": SEED}},
             formats={"ttree": {"variants": ["zstd-5"]}, "parquet": {"variants": ["zstd-3"]}})
    c["measure"] = {"readers": {"ttree": ["rdf"], "parquet": ["pyarrow"]}, "repetitions": 5}
    c["compare"].update(samples=["dy"], cluster_sizes=[CLUSTER_SIZE], pairs=[
        {"ttree": "zstd-5", "parquet": "zstd-3", "label": "zstd"}])
    return write_config(results.parent / "study.yaml", c)


def _as_make_run_leaves_them(config: Path, source: Path, sides) -> None:
    """The sample and both files where ``make run`` writes them."""
    from hepfmt.plan import config as cfg
    from hepfmt.plan import paths, study

    c = cfg.load(config)
    results = c["results"]
    Path(paths.source(results, "dy")).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(source, paths.source(results, "dy"))
    shutil.copy(sidecar_path(source), paths.source_meta(results, "dy"))
    (job, *_) = study.pair_plan(c)
    for f, side in ((job.ttree, sides[0]), (job.parquet, sides[1])):
        for src, dst in ((side.path, paths.written(results, f)),
                         (side.size_record, paths.size(results, f))):
            Path(dst).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(src, dst)


def test_the_command_measures_the_plans_jobs_after_make_run(sides, source, tmp_path,
                                                            capsys) -> None:
    config = _config(tmp_path / "results")
    assert main(["bench", "reproduce", str(config), "--jobs", "/ten"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "sources/dy.json" in err and "run make run first" in err
    _as_make_run_leaves_them(config, source, sides)
    out = tmp_path / "reproduce.txt"
    assert main(["bench", "reproduce", str(config), "--jobs", "/ten", "-o", str(out)]) == 0
    printed, said = capsys.readouterr()
    assert said.splitlines() == ["run1: 1/1 dy/zstd/c250/ten", "run2: 1/1 dy/zstd/c250/ten"]
    assert out.read_text() == printed
    lines = printed.splitlines()
    assert len(lines) == 1 + len(READS) * len(QUANTITIES) + 2
    assert SUMMARY.match(lines[-1]) and ", idle, CPU " in lines[-1]
    assert not (tmp_path / "results" / "pairs").exists()  # the records went to scratch
    assert main(["bench", "reproduce", str(config), "--jobs", "nothing"]) == 2
    assert "--jobs" in capsys.readouterr().err
    with pytest.raises(SystemExit) as refused:  # argparse's refusal: one line, status 2
        main(["bench", "reproduce", str(config), "--load", "-1"])
    assert refused.value.code == 2
    assert "option --load: -1 is less than the minimum of 0" in capsys.readouterr().err
