"""Real and synthetic samples side by side: the per-sample table marks the real one, and no mean
is taken over samples of different kinds unless the config asks for it."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from paired_records import record, write

from hepfmt.report.tables import tabulate

PROV = {"date": "2026-01-01T00:00:00+00:00", "versions": {"pyarrow": "26.0.1"},
        "machine": {"cpu": "test cpu", "cores": 2, "memory_bytes": 2**30, "kernel": "k"},
        "filesystem": {"type": "ext4", "mount": "/"}}
#: sample -> (process, {format: file bytes}); naive bytes are 1000 for every file.
SAMPLES = {"dy_real": ("real", {"ttree": 1400, "parquet": 1000}),
           "DY": ("DYJetsToLL", {"ttree": 1600, "parquet": 1000}),
           "TT": ("TTJets", {"ttree": 1800, "parquet": 1200})}


def _plan(mix_kinds: bool) -> dict:
    """A plan record as ``hepfmt plan-record`` writes it (written by hand: the real file of
    ``dy_real`` does not exist here), selections resolved per sample."""
    return {"formats": [{"name": f, "label": f.upper(), "adapter": f, "variants": ["none"],
                         "readers": [r]} for f, r in (("ttree", "rdf"), ("parquet", "pyarrow"))],
            "pairs": [{"label": "uncompressed",
                       "ttree": {"format": "ttree", "variant": "none", "reader": "rdf"},
                       "parquet": {"format": "parquet", "variant": "none",
                                   "reader": "pyarrow"}}],
            "selections": [{"name": "ten", "branches": [["MET_pt", "PFMET_pt"]],
                            "resolved": {"dy_real": ["PFMET_pt"], "DY": ["MET_pt"],
                                         "TT": ["MET_pt"]}}],
            "threads": [1], "mix_kinds": mix_kinds, "config": {"results": "r"}}


def _records(tmp: Path) -> tuple[list[Path], list[Path]]:
    sizes, reads = [], []
    for sample, (process, by_format) in SAMPLES.items():
        for fmt, nbytes in by_format.items():
            base = {"sample": sample, "process": process, "format": fmt, "variant": "none",
                    "cluster_size": 100, "n_events": 100, "provenance": PROV}
            p = tmp / f"size-{sample}-{fmt}.json"
            p.write_text(json.dumps({**base, "file_bytes": nbytes, "naive_bytes": 1000.0,
                                     "normalized_size": nbytes / 1000,
                                     "zip_bytes_by_group": {"event": nbytes}}))
            sizes.append(p)
            t = nbytes / 1000  # seconds: the ratio of times is the ratio of sizes
            rep = {"wall_s": t, "cpu_s": t, "disk_read_bytes": 0}
            p = tmp / f"read-{sample}-{fmt}.json"
            p.write_text(json.dumps({**base, "reads": [{
                "reader": "rdf" if fmt == "ttree" else "pyarrow", "threads": 1,
                "selection": "ten", "mode": "warm", "median_s": t, "iqr_s": 0.0, "n": 3,
                "cpu_median_s": t, "disk_read_bytes_median": 0.0, "cold_verified": None,
                "mb_per_s_compressed": 1.0, "mb_per_s_naive": 1.0, "events_per_s": 100 / t,
                "peak_rss_bytes": 2**20, "baseline_rss_bytes": 0, "repetitions": [rep] * 3}]}))
            reads.append(p)
    return sizes, reads


def _pairs(tmp: Path) -> list[Path]:
    """Each sample's pair record, each side read in as many seconds as its file has kB: the
    ratio of times is the ratio of sizes."""
    out = []
    for sample, (process, by_format) in SAMPLES.items():
        root, parquet = ((0.0, 0.0, 100 / (by_format[f] / 1000)) for f in ("ttree", "parquet"))
        doc = record([(root, parquet)] * 3, [[(root, parquet)] * 2] * 3, sample=sample,
                     process=process, cluster=100, n_events=100, selections=["ten"],
                     provenance=PROV)
        out.append(write(tmp, doc))
    return out


def _tables(tmp: Path, mix_kinds: bool = False) -> Path:
    sizes, reads = _records(tmp)
    tabulate(_plan(mix_kinds), sizes, reads, tmp / "tables", pair_files=_pairs(tmp))
    return tmp / "tables"


def _csv(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, comment="#")


def test_every_sample_is_shown_apart_and_the_real_one_is_marked(tmp_path: Path) -> None:
    tables = _tables(tmp_path)
    s = _csv(tables / "samples.csv").set_index(["sample", "format"])
    assert len(s) == 6
    assert s.loc[("dy_real", "ttree"), "normalized_size"] == pytest.approx(1.4)
    assert s.loc[("dy_real", "ttree"), "kind"] == "real"
    assert s.loc[("TT", "parquet"), "kind"] == "synthetic"
    assert s.loc[("TT", "parquet"), "label"] == "PARQUET"
    md = (tables / "samples.md").read_text()
    assert "dy_real (real)" in md and "| DY " in md
    assert "|              1.4 |" in md  # the real sample's TTree, in its own column
    # what each selection read in each sample: the real file names MET as NanoAOD v15 does
    assert "| dy_real (real) | PFMET_pt |" in md and "| DY             | MET_pt   |" in md
    assert (tables / "samples.html").read_text().count("<table") == 3


def test_kinds_are_not_averaged_together(tmp_path: Path) -> None:
    tables = _tables(tmp_path)
    st = _csv(tables / "size.csv").set_index(["kind", "format"])
    assert st.loc[("real", "ttree"), "normalized_size_mean"] == pytest.approx(1.4)
    assert st.loc[("real", "ttree"), "n_samples"] == 1
    assert st.loc[("synthetic", "ttree"), "normalized_size_mean"] == pytest.approx(1.7)
    assert st.loc[("synthetic", "ttree"), "n_samples"] == 2
    r = _csv(tables / "ratios.csv").set_index(["kind", "quantity", "read"])
    assert r.loc[("real", "size"), "ratio_mean"].item() == pytest.approx(1.4)
    for read in ("first", "repeats"):
        assert r.loc[("synthetic", "rate", read), "ratio_mean"] == pytest.approx(
            (1 / 1.6 * 1.2 / 1.8) ** 0.5)  # the geometric mean of the samples' ratios
        assert r.loc[("real", "rate", read), "ratio_mean"] == pytest.approx(1 / 1.4)
    assert set(_csv(tables / "pairs.csv").kind) == {"real", "synthetic"}
    rt = _csv(tables / "reads.csv")
    assert set(rt.kind) == {"real", "synthetic"} and list(rt.columns[:2]) == ["kind", "format"]
    assert set(_csv(tables / "formats.csv").kind) == {"real", "synthetic"}
    md = (tables / "size.md").read_text()
    assert "## Real samples: mean ± std over samples" in md
    assert "## Synthetic samples: mean ± std over samples" in md


def test_kinds_are_mixed_when_asked(tmp_path: Path) -> None:
    tables = _tables(tmp_path, mix_kinds=True)
    st = _csv(tables / "size.csv").set_index("format")
    assert "kind" not in st
    assert st.loc["ttree", "normalized_size_mean"] == pytest.approx(1.6)
    assert st.loc["ttree", "n_samples"] == 3
    assert "Real samples" not in (tables / "size.md").read_text()
