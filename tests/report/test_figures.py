"""Figures from tables that ``tabulate`` made out of synthetic size records and read measurements.

The records are built for any config's grid (``synthetic_study``) with made-up but plausible
numbers, so the figures are drawn from exactly what a real run's tables look like, columns and
all. What is checked: every family writes a non-empty PNG and PDF, the Pareto front on a hand
example, that unverified cold reads are flagged, that missing pieces (no reads, one cluster size,
one sample) still give a figure, and that a malformed table is an error naming the file.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from paired_records import record, with_selections
from paired_records import write as write_pair

from hepfmt.cli import main
from hepfmt.plan import study as grid
from hepfmt.plan.config import validate
from hepfmt.plan.record import record as plan_of
from hepfmt.report import direction, figures, plan_record
from hepfmt.report.figures import axes, inputs, memory, ratios, tradeoff
from hepfmt.report.style import provenance_footer
from hepfmt.report.tables import tabulate

PROV = {"date": "2026-01-01T00:00:00+00:00",
        "versions": {"pyarrow": "26.0.1", "ROOT": "6.40.00", "uproot": "5.7.7"},
        "machine": {"cpu": "test cpu", "cores": 2, "memory_bytes": 2**30, "kernel": "k",
                    "hostname": "h"},
        "filesystem": {"type": "ext4", "mount": "/", "kind": "local", "cold_verifiable": True}}

#: Made-up normalised sizes per algorithm and per adapter: only their shape matters.
ALGO_SIZE = {"none": 1.2, "zlib": 0.55, "gzip": 0.55, "lz4": 0.7, "lzma": 0.42, "zstd": 0.5,
             "snappy": 0.7, "brotli": 0.48, "lzf": 0.75, "default": 0.6, "compact": 0.5}
ADAPTER_SIZE = {"ttree": 1.1, "rntuple": 0.95, "parquet": 1.0, "feather": 1.2, "hdf5": 1.3,
                "lance": 1.0, "vortex": 0.9}
#: ... and made-up read-time factors, not proportional to size (a trade-off to draw).
ALGO_TIME = {"none": 0.6, "zlib": 2.0, "gzip": 2.2, "lz4": 0.7, "lzma": 5.0, "zstd": 1.0,
             "snappy": 0.8, "brotli": 1.8, "lzf": 1.0, "default": 0.9, "compact": 1.2}
ADAPTER_TIME = {"ttree": 1.0, "rntuple": 0.6, "parquet": 0.8, "feather": 0.4, "hdf5": 1.5,
                "lance": 0.7, "vortex": 0.5}
NAIVE_PER_EVENT = 5000.0
#: Shares of the data bytes: more collections than the figure gives a segment of their own.
GROUP_SHARES = {"triggers": 0.15, "event": 0.1, "Jet": 0.2, "GenPart": 0.15,
                **{c: 0.025 for c in ("Muon", "Electron", "Photon", "Tau", "FatJet", "SV",
                                      "TrigObj", "GenJet", "IsoTrack", "SubJet", "OtherPV",
                                      "LHEPart", "PSWeight", "LHEPdfWeight")}}


def _size(spec: grid.FileSpec, i_sample: int) -> float:
    algo = spec.variant.split("+")[0].split("-")[0]
    dict_factor = 0.8 if spec.variant.endswith("+dict") else 1.0
    return (ALGO_SIZE[algo] * ADAPTER_SIZE[spec.adapter] * dict_factor
            * (1 + 3 / spec.cluster_size ** 0.5) * (1 + 0.03 * i_sample))


def _size_record(spec: grid.FileSpec, n_events: int, i_sample: int) -> dict:
    norm = _size(spec, i_sample)
    file_bytes = round(norm * NAIVE_PER_EVENT * n_events)  # a file holds whole bytes
    data = 0.95 * file_bytes
    groups = {} if spec.adapter == "vortex" else {g: s * data for g, s in GROUP_SHARES.items()}
    return {"sample": spec.sample, "process": "p", "format": spec.format,
            "adapter": spec.adapter, "variant": spec.variant, "cluster_size": spec.cluster_size,
            "n_events": n_events, "provenance": PROV, "file_bytes": file_bytes,
            "naive_bytes": NAIVE_PER_EVENT * n_events, "normalized_size": norm,
            "normalized_size_no_triggers": norm * 0.9, "zip_bytes_by_group": groups}


#: Shares of a read's time spent opening and setting up; the rest reads at a steady rate.
OPEN_SHARE, SETUP_SHARE = 0.1, 0.1
#: Each read's repetitions, as factors of its median time.
SPREAD = (0.96, 0.98, 1.0, 1.02, 1.04)


def _marks(seconds: float, n_events: int, cluster_size: int) -> dict:
    """A repetition's marks: opened after OPEN_SHARE of the time, the first event after
    SETUP_SHARE more, then the clusters at a steady rate to the end."""
    ends = [*range(cluster_size, n_events, cluster_size), n_events]
    start = (OPEN_SHARE + SETUP_SHARE) * seconds
    rate = n_events / (seconds - start)
    return {"opened_s": OPEN_SHARE * seconds, "chunks": [[e, start + e / rate] for e in ends]}


def _read(reader: str, rank: int, threads: int, sel: str, mode: str, seconds: float,
          verified: bool | None, n_events: int, cluster_size: int | None) -> dict:
    """One read's record; with a ``cluster_size``, its repetitions carry the marks of a read's
    parts (without, it is a record from before them)."""
    reps = []
    for factor in SPREAD:
        rep = {"wall_s": seconds * factor, "cpu_s": seconds, "disk_read_bytes": 0}
        if cluster_size is not None:
            rep.update(_marks(seconds * factor, n_events, cluster_size))
        if mode == "cold":
            rep["cold_verified"] = verified
        reps.append(rep)
    return {"reader": reader, "threads": threads, "selection": sel, "mode": mode,
            "cpu_median_s": seconds, "disk_read_bytes_median": 0.0, "median_s": seconds,
            "iqr_s": 0.0, "std_s": 0.0, "min_s": seconds, "n": 5,
            "cold_verified": verified if mode == "cold" else None,
            "mb_per_s_compressed": 1.0, "mb_per_s_naive": 1.0,
            "events_per_s": n_events / seconds, "peak_rss_bytes": (200 + 50 * rank) * 2**20,
            "baseline_rss_bytes": 150 * 2**20, "repetitions": reps}


def _seconds(spec: grid.FileSpec, n_events: int, i_sample: int, branches: object,
             rank: int = 0, mode: str = "warm", threads: int = 1) -> float:
    """A read's made-up median time."""
    share = 1.0 if branches == "*" else 0.1
    algo = spec.variant.split("+")[0].split("-")[0]
    return (n_events * 1e-4 * share * (1 + rank) * ALGO_TIME[algo] * ADAPTER_TIME[spec.adapter]
            * (1 + 0.05 * i_sample) * (1.3 if mode == "cold" else 1.0) / threads ** 0.5)


def _read_record(config: dict, spec: grid.FileSpec, n_events: int, i_sample: int,
                 unverified: set[str], marked: bool) -> dict:
    reads = []
    grid_ = [(rank, reader, threads)
             for rank, reader in enumerate(grid.readers(config, spec.format))
             for threads in grid.thread_counts(config)]
    for rank, reader, threads in grid_:
        for sel, branches in config["measure"]["selections"].items():
            for mode in config["measure"]["modes"]:
                t = _seconds(spec, n_events, i_sample, branches, rank, mode, threads)
                verified = spec.sample not in unverified if mode == "cold" else None
                reads.append(_read(reader, rank, threads, sel, mode, t, verified, n_events,
                                   spec.cluster_size if marked else None))
    return {**{k: v for k, v in _size_record(spec, n_events, i_sample).items()
               if k in ("sample", "process", "format", "adapter", "variant", "cluster_size",
                        "n_events", "provenance")}, "reads": reads}


def _parts(seconds: float, n_events: int) -> tuple[float, float, float]:
    """(open, set-up, steady rate) of a scan of ``seconds``, in the shares :func:`_marks`
    gives."""
    return (OPEN_SHARE * seconds, SETUP_SHARE * seconds,
            n_events / ((1 - OPEN_SHARE - SETUP_SHARE) * seconds))


def _pair_record(config: dict, pair: dict, sides: tuple[grid.FileSpec, grid.FileSpec],
                 n_events: int, i_sample: int) -> dict:
    """A pairing's paired measurement of one sample at one cluster size: three rounds of a
    first pair and two repeat pairs, ROOT's and Parquet's times spread apart (SPREAD)."""
    docs = []
    for sel, branches in config["measure"]["selections"].items():
        root, parquet = (_seconds(s, n_events, i_sample, branches) for s in sides)

        def scans(i: int, root: float = root, parquet: float = parquet) -> tuple:
            return (_parts(root * SPREAD[i], n_events), _parts(parquet * SPREAD[-1 - i],
                                                               n_events))

        docs.append(record([scans(i) for i in (0, 2, 4)], [[scans(1), scans(3)]] * 3,
                           pair=pair["label"], sample=sides[0].sample,
                           cluster=sides[0].cluster_size, n_events=n_events,
                           variants=(pair["ttree"]["variant"], pair["parquet"]["variant"]),
                           readers=(pair["ttree"]["reader"], pair["parquet"]["reader"]),
                           selections=[sel], provenance=PROV))
    return with_selections(docs)


def _pair_records(config: dict, plan: dict, out: Path, real: set[str]) -> list[Path]:
    """The plan's pairings measured as pairs wherever both sides' files are read-measured."""
    measured = {(s.sample, s.format, s.variant, s.cluster_size): s for s in grid.measured(config)}
    samples = list(config["samples"])
    paths = []
    for pair in plan["pairs"]:
        for sample, n in ((s, c) for s in samples for c in config["cluster_sizes"]):
            sides = tuple(measured.get((sample, pair[k]["format"], pair[k]["variant"], n))
                          for k in ("ttree", "parquet"))
            if None in sides:
                continue
            doc = _pair_record(config, pair, sides, config["samples"][sample]["n_events"],
                               samples.index(sample))
            paths.append(write_pair(out, {**doc, "process": "real"} if sample in real
                                    else doc))
    return paths


def _write(path: Path, doc: dict, real: set[str]) -> Path:
    """A record, its sample made an imported (real) one if named in ``real``."""
    path.write_text(json.dumps({**doc, "process": "real"} if doc["sample"] in real else doc))
    return path


def synthetic_study(config: dict, tmp: Path, unverified: set[str] = frozenset(),
                    marked: bool = True, real: set[str] = frozenset()) -> Path:
    """Size and read records for every file of ``config``'s grid, tabulated into tmp/tables
    with the plan record tmp/plan.json; samples named in ``unverified`` have cold reads that
    mincore did not confirm, those in ``real`` are imported ones (tabulated apart); without
    ``marked``, read records from before a read's parts."""
    records = tmp / "records"
    records.mkdir(parents=True, exist_ok=True)
    samples = list(config["samples"])
    sizes, reads = [], []
    for spec in grid.files(config):
        n = config["samples"][spec.sample]["n_events"]
        sizes.append(_write(records / f"{spec.stem.replace('/', '_')}.size.json",
                            _size_record(spec, n, samples.index(spec.sample)), real))
    for spec in grid.measured(config):
        n = config["samples"][spec.sample]["n_events"]
        reads.append(_write(records / f"{spec.stem.replace('/', '_')}.reads.json",
                            _read_record(config, spec, n, samples.index(spec.sample),
                                         unverified, marked), real))
    tables = tmp / "tables"
    (tmp / "plan.json").write_text(json.dumps(plan_of(config), indent=1, sort_keys=True))
    plan = plan_record.load(tmp / "plan.json")
    tabulate(plan, sizes, reads, tables, tmp / "provenance.json",
             _pair_records(config, plan, records / "pairs", real))
    return tmp


def study_config(**overrides: object) -> dict:
    config = {
        "samples": {"A": {"process": "DYJetsToLL", "n_events": 1000},
                    "B": {"process": "TTJets", "n_events": 1000}},
        "cluster_sizes": [100, 1000],
        "formats": {"ttree": {"variants": ["none", "zlib-1", "zstd-5"]},
                    "rntuple": {"variants": ["zstd-5"]},
                    "parquet": {"variants": ["none", "none+dict", "gzip-6", "zstd-3"]},
                    "vortex": {"variants": ["default"]}},
        "measure": {"readers": {"ttree": ["rdf", "uproot"], "parquet": ["pyarrow", "polars"]},
                    "variants": {"ttree": ["none", "zstd-5"], "rntuple": ["zstd-5"],
                                 "parquet": ["none", "zstd-3"], "vortex": ["default"]},
                    "cluster_sizes": [100, 1000]},
        "compare": {"pairs": [{"ttree": "none", "parquet": "none", "label": "uncompressed"},
                              {"ttree": "zstd-5", "parquet": "zstd-3", "label": "zstd"}]},
    }
    config.update(overrides)
    return validate(config)


def draw_all(study: Path, out: Path) -> dict[str, list[Path]]:
    return {name: figures.make(name, study / "tables", study / "provenance.json",
                               study / "plan.json", out / name, config_name="test")
            for name, fam in figures.FAMILIES.items() if fam.target == "all"}


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return synthetic_study(study_config(), tmp_path_factory.mktemp("figures"), unverified={"B"})


def _is_png(path: Path) -> bool:
    return path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_every_family_writes_png_and_pdf(study: Path, tmp_path: Path) -> None:
    written = draw_all(study, tmp_path)
    for name, paths in written.items():
        stem = figures.FAMILIES[name].stem
        assert paths == [tmp_path / name / f"{stem}.png", tmp_path / name / f"{stem}.pdf"]
        assert _is_png(paths[0]) and paths[0].stat().st_size > 10_000, name
        assert paths[1].read_bytes()[:5] == b"%PDF-", name
    assert not list(tmp_path.rglob(".*tmp*"))  # nothing half-written left behind


def test_pareto_front_on_a_hand_example() -> None:
    # (time, size): a fast big file, a slow small one, one between, and two dominated ones;
    # a tie in time with a larger size is dominated, an exact duplicate is not; NaN never counts
    x = [1.0, 10.0, 3.0, 4.0, 3.0, 2.0, 1.0, np.nan]
    y = [1.0, 0.3, 0.5, 0.6, 0.7, 1.2, 1.0, 0.1]
    assert tradeoff.pareto_front(x, y).tolist() == [True, True, True, False, False, False,
                                                   True, False]


def test_tradeoff_draws_every_reader_and_marks_the_fastest(study: Path) -> None:
    plan = plan_record.load(study / "plan.json")
    ft = inputs.read_table(study / "tables" / "formats.csv", inputs.TABLES["formats"])
    col, sel, mode = tradeoff.time_column(ft, plan)
    assert (col, sel, mode) == ("all_warm_s", "all", "warm")
    rows = tradeoff.reader_rows(ft, col, plan)
    assert set(rows[rows.format == "ttree"].reader) == {"rdf", "uproot"}  # every reader
    assert len(rows.drop_duplicates(["format", "variant"])) == 6  # the measured pairs
    for _, g in rows.groupby(["format", "variant"]):
        assert g.fastest.sum() == 1
        assert g.loc[g.fastest, col].iloc[0] == g[col].min()


def _small_plan() -> dict:
    return {"formats": [{"name": "ttree", "label": "TTree", "readers": ["rdf", "columnar"],
                         "variants": ["zstd-5"]},
                        {"name": "parquet", "label": "Parquet", "readers": ["pyarrow"],
                         "variants": ["zstd-3"]}],
            "pairs": [], "selections": [{"name": "all", "branches": "*"}], "threads": [1],
            "config": {}}


def test_pareto_front_is_over_all_readers_not_the_first_listed() -> None:
    """TTree's first-listed reader (rdf) is slow, its columnar reader the fastest of all: the
    front is the columnar point alone (it is smaller and faster than Parquet), and TTree is
    drawn by it; the first-listed reader alone would put TTree and Parquet both on it."""
    ft = pd.DataFrame({"format": ["ttree", "ttree", "parquet"],
                       "label": ["TTree", "TTree", "Parquet"],
                       "variant": ["zstd-5", "zstd-5", "zstd-3"],
                       "reader": ["rdf", "columnar", "pyarrow"], "threads": [1, 1, 1],
                       "cluster_size": [4000] * 3, "normalized_size_mean": [0.3, 0.3, 0.4],
                       "normalized_size_std": [np.nan] * 3, "all_warm_s": [1.5, 0.1, 0.12]})
    fig, notes = tradeoff.draw(inputs.Inputs({"formats": ft}, PROV, _small_plan()))
    ax = fig.axes[0]
    (front,) = [ln for ln in ax.lines if ln.get_label().startswith("Pareto front")]
    assert front.get_xydata().tolist() == [[0.1, 0.3]]
    marked = {ln.get_label(): ln for ln in ax.lines if ln.get_marker() not in (None, "None")}
    assert marked["TTree zstd-5 [columnar]"].get_markeredgecolor() == "black"  # on the front
    assert marked["_TTree zstd-5 [rdf]"].get_markersize() < \
        marked["TTree zstd-5 [columnar]"].get_markersize()  # drawn, not as the format
    assert "TTree zstd-5 [rdf]" not in _legend_labels(fig)
    assert any("fastest reader" in n for n in notes)


def test_unverified_cold_reads_are_flagged(study: Path) -> None:
    reads = inputs.read_table(study / "tables" / "reads.csv", inputs.TABLES["reads"])
    table = inputs.read_table(study / "tables" / "ratios.csv", inputs.TABLES["ratios"])
    rate = table[table.quantity == "rate"]
    flags = ratios.ratio_unverified(rate)
    assert flags.tolist() == (rate["mode"] == "cold").tolist()  # sample B spoils every cold one
    assert memory.memory_table(reads).query("mode == 'cold'").hollow.all()
    assert not memory.memory_table(reads).query("mode == 'warm'").hollow.any()


def test_verified_cold_reads_are_not_flagged(tmp_path: Path) -> None:
    s = synthetic_study(study_config(), tmp_path)
    reads = inputs.read_table(s / "tables" / "reads.csv", inputs.TABLES["reads"])
    table = inputs.read_table(s / "tables" / "ratios.csv", inputs.TABLES["ratios"])
    assert not ratios.ratio_unverified(table).any()
    assert not memory.memory_table(reads).hollow.any()


def test_unverified_legend_entry_is_drawn(study: Path) -> None:
    inp = inputs.load_inputs("ratios", study / "tables", study / "provenance.json",
                             study / "plan.json")
    fig, _ = ratios.draw(inp)
    assert axes.UNVERIFIED not in _legend_labels(fig)  # paired reads are warm: none unverified
    inp = inputs.load_inputs("memory", study / "tables", study / "provenance.json",
                             study / "plan.json")
    fig, _ = memory.draw(inp)
    assert axes.UNVERIFIED in _legend_labels(fig)


def test_missing_pieces_still_give_every_figure(tmp_path: Path) -> None:
    # no reads measured at all, one cluster size, one sample
    formats = study_config()["formats"]
    config = study_config(samples={"A": {"process": "DYJetsToLL", "n_events": 500}},
                          cluster_sizes=[500], measure={"variants": {f: [] for f in formats}})
    s = synthetic_study(config, tmp_path / "study")
    assert inputs.read_table(s / "tables" / "reads.csv", inputs.TABLES["reads"]).empty
    written = draw_all(s, tmp_path / "out")
    assert all(p.stat().st_size > 0 for paths in written.values() for p in paths)
    for name in ("tradeoff", "ratios", "memory", "answer"):
        inp = inputs.load_inputs(name, s / "tables", s / "provenance.json", s / "plan.json")
        fig, _ = figures.FAMILIES[name].draw(inp)
        text = " ".join(t.get_text() for ax in fig.axes for t in ax.texts)
        assert "no reads were measured" in text.lower(), name


def _ylabels(fig) -> set[str]:
    return {ax.get_ylabel() for ax in fig.axes if ax.get_ylabel()}


def _legend_labels(fig) -> list[str]:
    return [t.get_text() for legend in fig.legends for t in legend.get_texts()]


def test_ratios_show_throughput_and_whole_file_time_with_intervals(study: Path) -> None:
    inp = inputs.load_inputs("ratios", study / "tables", study / "provenance.json",
                             study / "plan.json")
    fig, notes = ratios.draw(inp)
    assert _ylabels(fig) == {direction.SPEED_AXIS}  # one direction, stated on the axis
    titles = " ".join(ax.get_title() for ax in fig.axes)
    assert "steady throughput" in titles and "whole file of 1,000,000 events" in titles
    assert "error bars: 95% intervals; from samples (t of logs, n=2)" in notes
    # cluster size 1000 is one chunk of these 1000-event files: no throughput, and it is said
    assert "throughput not from the read's own chunks: not separable: one chunk" in notes
    assert any("ratios not drawn" in n for n in notes)
    assert "error bars: 95% intervals" in fig.get_suptitle()
    table = inp.tables["ratios"]
    bars = ratios.error_bars(table[table.quantity == "throughput"])
    assert bars.shape[0] == 2 and (bars >= 0).all()


def test_records_from_before_the_parts_still_give_every_figure(tmp_path: Path) -> None:
    s = synthetic_study(study_config(), tmp_path / "study", marked=False)
    written = draw_all(s, tmp_path / "out")
    assert all(p.stat().st_size > 0 for paths in written.values() for p in paths)
    # a ratios table from before throughput, whole-file time and paired reads
    path = s / "tables" / "ratios.csv"
    old = pd.read_csv(path, comment="#")
    old = old[old.quantity.isin(["size", "rate"]) & (old.read.fillna("repeats") == "repeats")]
    old.drop(columns=["read", "ratio_lo", "ratio_hi", "coverage"]).to_csv(path, index=False)
    inp = inputs.load_inputs("ratios", s / "tables", s / "provenance.json", s / "plan.json")
    fig, notes = ratios.draw(inp)
    assert _ylabels(fig) == {direction.SPEED_AXIS}  # no throughput: the 2018 figure
    assert all(ax.get_title().startswith("read rate") for ax in fig.axes if ax.get_title())
    assert any("from before throughput" in n for n in notes)
    inp = inputs.load_inputs("tradeoff", s / "tables", s / "provenance.json", s / "plan.json")
    fig, _ = tradeoff.draw(inp)
    assert len([ax for ax in fig.axes if ax.get_xlabel()]) == 1  # read time only


def test_real_and_synthetic_samples_are_drawn_apart(tmp_path: Path) -> None:
    s = synthetic_study(study_config(), tmp_path / "study", real={"A"})
    for name in ("size", "ratios"):
        inp = inputs.load_inputs(name, s / "tables", s / "provenance.json", s / "plan.json")
        assert set(inp.tables[name].kind) == {"real", "synthetic"}, name
        fig, _ = figures.FAMILIES[name].draw(inp)
        labels = [t.get_text() for ax in fig.axes if ax.get_legend()
                  for t in ax.get_legend().get_texts()] + _legend_labels(fig)
        for kind in ("real", "synthetic"):
            assert any(label.endswith(f", {kind} samples") for label in labels), (name, kind)


def test_provenance_footer_names_versions_and_config(study: Path) -> None:
    prov = json.loads((study / "provenance.json").read_text())
    line = provenance_footer(prov, "default.yaml")
    assert "ROOT 6.40.00" in line and "pyarrow 26.0.1" in line
    assert line.startswith("measured on test cpu, 2 cores")  # the CPU: here, not in a title
    assert "config default.yaml" in line and prov["config_hash"] in line


def test_malformed_table_is_an_error_naming_the_file(study: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture) -> None:
    tables = tmp_path / "tables"
    tables.mkdir()
    size = pd.read_csv(study / "tables" / "size.csv", comment="#")
    size.drop(columns="normalized_size_mean").to_csv(tables / "size.csv", index=False)
    args = ["figure", "size", "--tables", str(tables), "--provenance",
            str(study / "provenance.json"), "--plan", str(study / "plan.json"),
            "-o", str(tmp_path / "out")]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert str(tables / "size.csv") in err and "normalized_size_mean" in err
    size.assign(cluster_size="many").to_csv(tables / "size.csv", index=False)
    assert main(args) == 2
    assert "cluster_size" in capsys.readouterr().err
    (tables / "size.csv").unlink()
    assert main(args) == 2
    assert "no such table" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_malformed_provenance_is_an_error_naming_the_file(study: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture) -> None:
    prov = tmp_path / "provenance.json"
    prov.write_text('{"versions": ')  # truncated
    assert main(["figure", "size", "--tables", str(study / "tables"), "--provenance", str(prov),
                 "--plan", str(study / "plan.json"), "-o", str(tmp_path / "out")]) == 2
    assert str(prov) in capsys.readouterr().err


def test_unknown_family_is_refused(study: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["figure", "pie", "--tables", str(study / "tables"), "--provenance",
                 str(study / "provenance.json"), "--plan", str(study / "plan.json"),
                 "-o", str(study / "out")]) == 2
    assert "unknown 'pie'" in capsys.readouterr().err


def test_cli_writes_the_family(study: Path, tmp_path: Path) -> None:
    assert main(["figure", "groups", "--tables", str(study / "tables"), "--provenance",
                 str(study / "provenance.json"), "--plan", str(study / "plan.json"),
                 "--config-name", "test.yaml", "-o", str(tmp_path)]) == 0
    assert _is_png(tmp_path / "bytes_by_group.png")
