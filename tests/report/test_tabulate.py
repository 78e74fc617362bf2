"""Tables from a small, hand-made set of size records and read measurements.

The numbers are chosen so that every mean, std and ratio can be checked by hand: if the tables
are wrong here, every published table is wrong.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from hepfmt.errors import InputError
from hepfmt.plan.config import validate
from hepfmt.plan.record import record
from hepfmt.report import table_names
from hepfmt.report.tables import tabulate

PROV = {"date": "2026-01-01T00:00:00+00:00", "versions": {"pyarrow": "26.0.1", "ROOT": "6.40.00"},
        "machine": {"cpu": "test cpu", "cores": 2, "memory_bytes": 2**30, "kernel": "k",
                    "hostname": "h"},
        "filesystem": {"type": "ext4", "mount": "/"}}

#: (sample, format, variant) -> file bytes; naive bytes are 1000 for every sample.
FILE_BYTES = {("A", "ttree", "none"): 1500, ("B", "ttree", "none"): 1700,
              ("A", "parquet", "none"): 1000, ("B", "parquet", "none"): 1000}
#: (sample, format) -> median read seconds (warm); cold is twice that.
READ_S = {("A", "ttree"): 1.0, ("B", "ttree"): 2.0, ("A", "parquet"): 2.0,
          ("B", "parquet"): 2.0}


def _config() -> dict:
    """The plan record of a two-sample, two-format study."""
    return record(validate({
        "samples": {"A": {"process": "DYJetsToLL", "n_events": 100},
                    "B": {"process": "TTJets", "n_events": 100}},
        "cluster_sizes": [100],
        "formats": {"ttree": {"variants": ["none"]}, "parquet": {"variants": ["none"]}},
        "measure": {"readers": {"ttree": ["rdf"], "parquet": ["pyarrow"]}},
        "compare": {"pairs": [{"ttree": "none", "parquet": "none", "label": "uncompressed"}]},
    }))


def _base(sample: str, fmt: str) -> dict:
    return {"sample": sample, "process": "p", "format": fmt, "variant": "none",
            "cluster_size": 100, "n_events": 100, "provenance": PROV}


def _write(tmp: Path) -> tuple[list[Path], list[Path]]:
    sizes, reads = [], []
    for (sample, fmt, _), nbytes in FILE_BYTES.items():
        p = tmp / f"size-{sample}-{fmt}.json"
        p.write_text(json.dumps({
            **_base(sample, fmt), "file_bytes": nbytes, "naive_bytes": 1000.0,
            "normalized_size": nbytes / 1000, "normalized_size_no_triggers": nbytes / 1000,
            "zip_bytes_by_group": {"triggers": 100, "event": nbytes - 100}}))
        sizes.append(p)
        t = READ_S[sample, fmt]
        reader = "rdf" if fmt == "ttree" else "pyarrow"
        recs = []
        for mode, factor in (("warm", 1.0), ("cold", 2.0)):
            reps = [{"wall_s": t * factor, "cpu_s": t, "disk_read_bytes": 0,
                     **({"cold_verified": sample == "A"} if mode == "cold" else {})}] * 5
            recs.append({"reader": reader, "threads": 1, "selection": "ten", "mode": mode,
                         "cpu_median_s": t, "disk_read_bytes_median": 0.0,
                         "median_s": t * factor, "iqr_s": 0.0, "std_s": 0.0, "min_s": t * factor,
                         "n": 5, "cold_verified": (sample == "A") if mode == "cold" else None,
                         "mb_per_s_compressed": 1.0, "mb_per_s_naive": 1.0,
                         "events_per_s": 100 / (t * factor), "peak_rss_bytes": 2**20,
                         "baseline_rss_bytes": 0, "repetitions": reps})
        p = tmp / f"read-{sample}-{fmt}.json"
        p.write_text(json.dumps({**_base(sample, fmt), "reads": recs}))
        reads.append(p)
    return sizes, reads


@pytest.fixture
def tables(tmp_path: Path) -> Path:
    sizes, reads = _write(tmp_path)
    tabulate(_config(), sizes, reads, tmp_path / "tables")
    return tmp_path / "tables"


def _csv(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, comment="#")


def test_size_table_mean_and_std_over_samples(tables: Path) -> None:
    st = _csv(tables / "size.csv").set_index("format")
    assert st.loc["ttree", "normalized_size_mean"] == pytest.approx(1.6)
    assert st.loc["ttree", "normalized_size_std"] == pytest.approx(0.1414, abs=1e-4)  # ddof=1
    assert st.loc["parquet", "normalized_size_mean"] == pytest.approx(1.0)
    assert st.loc["parquet", "normalized_size_std"] == 0.0
    assert (st["n_samples"] == 2).all()


def test_ratios_are_taken_per_sample_then_averaged(tables: Path) -> None:
    r = _csv(tables / "ratios.csv")
    size = r[r.quantity == "size"].iloc[0]
    assert size.ratio_mean == pytest.approx((1.5 * 1.7) ** 0.5)  # geometric mean of 1.5, 1.7


def test_separate_read_records_give_no_read_ratio(tables: Path) -> None:
    """Two sides timed in different jobs see different machines: their reads are in the reads
    table, and only a paired measurement gives a ratio of them."""
    assert set(_csv(tables / "ratios.csv").quantity) == {"size"}
    assert len(_csv(tables / "reads.csv")) == 4


def test_unverified_cold_reads_are_flagged(tables: Path) -> None:
    rt = _csv(tables / "reads.csv")
    cold = rt[rt["mode"] == "cold"]
    assert not cold.cold_verified.astype(bool).all()  # sample B was not verified cold
    assert "†" in (tables / "reads.md").read_text()


def test_every_table_carries_provenance(tables: Path) -> None:
    for name in ("size.csv", "reads.csv", "ratios.csv", "groups.csv", "repetitions.csv"):
        head = (tables / name).read_text().splitlines()[:6]
        assert any(line.startswith("# versions:") and "pyarrow 26.0.1" in line for line in head)
        assert any("test cpu" in line for line in head)
    for name in ("size", "reads", "ratios", "formats"):
        assert "## Provenance" in (tables / f"{name}.md").read_text()
        html = (tables / f"{name}.html").read_text()  # the report's inline view of the table
        assert "<h2>Provenance</h2>" in html and "pyarrow 26.0.1" in html
        md_rules = [ln for ln in (tables / f"{name}.md").read_text().splitlines()
                    if ln.startswith(("|:", "|-"))]  # one header rule per Markdown table
        assert html.count("<table") == len(md_rules) >= 1
    prov = json.loads((tables / "provenance.json").read_text())
    assert prov["versions"]["ROOT"] == "6.40.00"
    assert prov["repetitions"] == 5 and prov["n_files"] == 4 and prov["mixed"] == []


def test_tabulate_writes_exactly_the_named_tables(tables: Path) -> None:
    """What the tabulate rule lists as its outputs (hepfmt.report.table_names): every table
    as CSV, the documents also as Markdown and HTML; nothing more."""
    written = {p.name for p in tables.iterdir()} - {"provenance.json"}
    assert written == {f"{n}.csv" for n in table_names.CSV} | {
        f"{n}.{ext}" for n in table_names.DOCUMENTS for ext in ("md", "html")}


def test_repetitions_table_has_every_timed_repetition(tables: Path) -> None:
    assert len(_csv(tables / "repetitions.csv")) == 4 * 2 * 5  # files x modes x repetitions


def test_group_table_is_bytes_per_event(tables: Path) -> None:
    g = _csv(tables / "groups.csv").set_index("format")
    assert g.loc["parquet", "triggers"] == pytest.approx(1.0)  # 100 bytes / 100 events
    assert g.loc["ttree", "event"] == pytest.approx(15.0)  # mean(1400, 1600) / 100


def test_incomplete_measurement_is_refused(tmp_path: Path) -> None:
    sizes, reads = _write(tmp_path)
    doc = json.loads(reads[0].read_text())
    del doc["reads"]
    reads[0].write_text(json.dumps(doc))
    with pytest.raises(InputError, match=re.escape(reads[0].name)):
        tabulate(_config(), sizes, reads, tmp_path / "tables")
    reads[0].write_text('{"sample": ')  # truncated JSON
    with pytest.raises(InputError, match=re.escape(reads[0].name)):
        tabulate(_config(), sizes, reads, tmp_path / "tables")
    assert not (tmp_path / "tables" / "size.csv").exists()


def test_mixed_versions_are_reported(tmp_path: Path) -> None:
    sizes, reads = _write(tmp_path)
    doc = json.loads(reads[0].read_text())
    doc["provenance"] = {**PROV, "versions": {"pyarrow": "25.0.0", "ROOT": "6.40.00"}}
    reads[0].write_text(json.dumps(doc))
    prov = tabulate(_config(), sizes, reads, tmp_path / "tables")
    assert prov["mixed"] == ["versions"]
    assert "WARNING: measurements mixed" in (tmp_path / "tables" / "size.md").read_text()


def test_formats_table_names_files_that_were_only_sized() -> None:
    """A variant written but not read-measured is a row of its own, without a 'nan' reader."""
    from hepfmt.report.sections import format_sections

    ft = pd.DataFrame({"label": ["TTree", "TTree"], "variant": ["zstd-5", "lzma-1"],
                       "cluster_size": [100, 100], "normalized_size_mean": [0.5, 0.4],
                       "normalized_size_std": [0.01, 0.01], "reader": ["rdf", None],
                       "threads": [1, None], "all_warm_s": [1.0, None],
                       "all_cold_s": [1.1, None], "cold_verified": [True, None],
                       "rss_over_baseline_mb": [100.0, None], "rss_exact": [True, None]})
    (_, table), = format_sections(ft)
    assert list(table.reader) == ["rdf", "(size only)"]
    assert "nan" not in table.to_markdown(index=False)


def test_table_documents_leave_unmeasured_cells_empty(tmp_path: Path) -> None:
    from hepfmt.report.documents import write_doc

    df = pd.DataFrame({"implementation": ["uproot", "pyarrow"], "1000 columns": [1.5, 2.5],
                       "10000 columns": [None, 3.5]})
    write_doc("t", [("widths", df)], tmp_path / "t.md", ["generated: now"])
    for name in ("t.md", "t.html"):
        assert not re.search(r"\bnan\b", (tmp_path / name).read_text(), re.I), name


def test_reads_from_before_the_cpu_split_tabulate_with_its_columns_empty(tables: Path) -> None:
    rt = _csv(tables / "reads.csv")
    assert rt[["user_s_mean", "sys_s_mean", "wait_s_mean", "majflt"]].isna().all(axis=None)
    assert "user_s" not in _csv(tables / "repetitions.csv").columns


def test_reads_with_the_cpu_split_carry_it_to_both_tables(tmp_path: Path) -> None:
    sizes, reads = _write(tmp_path)
    for p in reads:
        doc = json.loads(p.read_text())
        for row in doc["reads"]:
            t = row["cpu_median_s"]
            row.update(user_median_s=0.75 * t, sys_median_s=0.25 * t, wait_median_s=0.0,
                       majflt_median=2.0)
            row["repetitions"] = [{**r, "user_s": 0.75 * t, "sys_s": 0.25 * t, "wait_s": 0.0,
                                   "majflt": 2} for r in row["repetitions"]]
        p.write_text(json.dumps(doc))
    tabulate(_config(), sizes, reads, tmp_path / "tables")
    rt = _csv(tmp_path / "tables" / "reads.csv").set_index(["format", "mode"])
    assert rt.loc[("ttree", "warm"), "user_s_mean"] == pytest.approx(0.75 * 1.5)  # A 1, B 2
    assert rt.loc[("ttree", "warm"), "sys_s_mean"] == pytest.approx(0.25 * 1.5)
    assert (rt.majflt == 2).all()
    reps = _csv(tmp_path / "tables" / "repetitions.csv")
    assert {"user_s", "sys_s", "wait_s", "majflt"} <= set(reps.columns)
