"""The storage target's tables from hand-made ``hepfmt storage`` records.

Two samples, a TTree (read by RDataFrame, and in sample A also by uproot) and a Parquet file
(pyarrow), on the page cache, an emulated HDD and a LAN; the WAN profile could not be set up
and pyarrow does not read the LAN's URLs. The times are chosen so that every storage time and
ratio can be checked by hand: if they are wrong here, the published storage tables are wrong.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from hepfmt.errors import InputError
from hepfmt.plan.config import validate
from hepfmt.plan.record import record
from hepfmt.report import direction
from hepfmt.report.storage_tables import (
    load_storage,
    storage_means,
    storage_ratios,
    storage_table,
    tabulate_storage,
)

PROV = {"date": "2026-01-01T00:00:00+00:00", "versions": {"pyarrow": "26.0.1", "ROOT": "6.40.00"},
        "machine": {"cpu": "test cpu", "cores": 2, "memory_bytes": 2**30, "kernel": "k",
                    "hostname": "h"},
        "filesystem": {"type": "ext4", "mount": "/"}}
WAN_REASON = "toxiproxy is not installed"
LAN_REASON = "pyarrow reads no URL"
REPETITIONS = 3

#: (sample, format, reader) -> {profile: median seconds}; a profile absent was not measured.
MEDIAN_S = {
    ("A", "ttree", "rdf"): {"page-cache": 1.0, "hdd": 3.0, "lan": 1.5},
    ("A", "ttree", "uproot"): {"page-cache": 4.0, "hdd": 4.5},
    ("A", "parquet", "pyarrow"): {"page-cache": 0.5, "hdd": 2.0},
    ("B", "ttree", "rdf"): {"page-cache": 2.0, "hdd": 5.0, "lan": 2.5},
    ("B", "parquet", "pyarrow"): {"page-cache": 1.0, "hdd": 2.5},
}
PROFILES = {
    "page-cache": {"kind": "page-cache", "description": "the page cache", "status": "measured"},
    "hdd": {"kind": "block", "bandwidth_bps": 150e6, "iops": 120, "latency_s": 0.0,
            "description": "a hard disk", "status": "measured"},
    "lan": {"kind": "remote", "bandwidth_bps": 1.25e9, "iops": None, "latency_s": 1e-3,
            "description": "a LAN", "status": "measured"},
    "wan": {"kind": "remote", "bandwidth_bps": 125e6, "iops": None, "latency_s": 20e-3,
            "description": "a WAN", "status": "skipped", "reason": WAN_REASON},
}


def _read(profile: str, reader: str, median: float) -> dict:
    """One read as ``hepfmt.measure.onstorage._record`` writes it (its fields the tables
    use, with the counters of the view each profile counts in)."""
    reps = [{"wall_s": median, "cpu_s": median / 2}] * REPETITIONS
    rec = {"profile": profile, "kind": PROFILES[profile]["kind"], "reader": reader,
           "library": reader, "selection": "ten", "n_branches": 10,
           "mode": "warm" if profile == "page-cache" else "cold",
           "url": "root://h//f" if profile == "lan" else "",
           "cold_verified": None if profile == "page-cache" else True,
           "selection_zip_bytes": 10**6, "median_s": median, "q25_s": median,
           "q75_s": median, "iqr_s": 0.0, "std_s": 0.0, "min_s": median, "n": REPETITIONS,
           "events_per_s": 100 / median, "mb_per_s_compressed": 1.0 / median,
           "cpu_median_s": median / 2, "reader_missing": None, "repetitions": reps,
           "kernel_syscr": 40, "kernel_rchar": 2 * 10**6, "kernel_read_bytes": 0}
    if profile == "hdd":
        rec.update(device_requests=20, device_bytes=10**6, model_view="device",
                   model_requests=20, model_bytes=10**6, predicted_s=median / 2,
                   predicted_transfer_s=median / 4, predicted_ops_s=median / 4,
                   predicted_latency_s=0.0, predicted_bound="transfer")
    if profile == "lan":
        rec.update(server_requests=8, server_ranges=8, server_bytes=10**6, model_view="server",
                   model_requests=8, model_bytes=10**6, predicted_s=median / 3,
                   predicted_transfer_s=0.0, predicted_ops_s=0.0,
                   predicted_latency_s=median / 3, predicted_bound="latency")
    return rec


def _write(tmp: Path) -> list[Path]:
    """One record per file: every reader of it on every profile measured."""
    files: dict[tuple[str, str], list[dict]] = {}
    for (sample, fmt, reader), times in MEDIAN_S.items():
        files.setdefault((sample, fmt), []).extend(
            _read(profile, reader, t) for profile, t in times.items())
    paths = []
    for (sample, fmt), reads in files.items():
        skipped_reads = [{"profile": "lan", "reader": "pyarrow", "selection": "ten",
                          "reason": LAN_REASON}] if fmt == "parquet" else []
        doc = {"file": f"/r/{sample}.{fmt}", "sample": sample, "process": "DYJetsToLL",
               "format": fmt, "adapter": fmt, "variant": "none", "cluster_size": 100,
               "n_events": 100, "file_bytes": 2 * 10**6, "profiles": PROFILES,
               "skipped_reads": skipped_reads, "reads": reads, "provenance": PROV}
        p = tmp / f"storage-{sample}-{fmt}.json"
        p.write_text(json.dumps(doc))
        paths.append(p)
    return paths


def _plan() -> dict:
    return record(validate({
        "samples": {"A": {"process": "DYJetsToLL", "n_events": 100},
                    "B": {"process": "TTJets", "n_events": 100}},
        "cluster_sizes": [100],
        "formats": {"ttree": {"variants": ["none"]}, "parquet": {"variants": ["none"]}},
        "measure": {"readers": {"ttree": ["rdf", "uproot"], "parquet": ["pyarrow"]}},
        "compare": {"pairs": [{"ttree": "none", "parquet": "none", "label": "uncompressed"}]},
    }))


@pytest.fixture
def table(tmp_path: Path) -> pd.DataFrame:
    rows, provs = load_storage(_write(tmp_path))
    assert len(provs) == 4
    return storage_table(rows)


def _row(t: pd.DataFrame, sample: str, fmt: str, reader: str, profile: str) -> pd.Series:
    hit = t[(t["sample"] == sample) & (t["format"] == fmt) & (t["reader"] == reader)
            & (t["profile"] == profile)]
    assert len(hit) == 1, hit
    return hit.iloc[0]


def test_every_measured_read_is_a_row(table: pd.DataFrame) -> None:
    measured = table[table["status"] == "measured"]
    assert len(measured) == sum(len(times) for times in MEDIAN_S.values())
    assert set(measured["profile"]) == {"page-cache", "hdd", "lan"}


def test_a_skipped_profile_is_a_row_with_its_reason(table: pd.DataFrame) -> None:
    wan = table[table["profile"] == "wan"]
    assert len(wan) == 4  # one per file: shown, never dropped
    assert (wan["status"] == "skipped").all()
    assert (wan["reason"] == WAN_REASON).all()
    assert wan["median_s"].isna().all() and wan["storage_s"].isna().all()


def test_a_skipped_read_is_a_row_with_its_reason(table: pd.DataFrame) -> None:
    lan = table[(table["profile"] == "lan") & (table["format"] == "parquet")]
    assert len(lan) == 2  # one per sample
    assert (lan["status"] == "skipped").all() and (lan["reader"] == "pyarrow").all()
    assert (lan["reason"] == LAN_REASON).all()


def test_storage_time_is_above_the_same_reads_page_cache_time(table: pd.DataFrame) -> None:
    """storage_s = median_s − page_cache_s of the same file, reader and selection: uproot's
    reads of sample A's TTree are set against uproot's page-cache read, not RDataFrame's."""
    for (sample, fmt, reader), times in MEDIAN_S.items():
        for profile, median in times.items():
            row = _row(table, sample, fmt, reader, profile)
            assert row["median_s"] == median
            assert row["page_cache_s"] == times["page-cache"]
            if profile == "page-cache":
                assert pd.isna(row["storage_s"])
            else:
                assert row["storage_s"] == pytest.approx(median - times["page-cache"])
    assert _row(table, "A", "ttree", "uproot", "hdd")["storage_s"] == pytest.approx(0.5)
    assert _row(table, "A", "ttree", "rdf", "hdd")["storage_s"] == pytest.approx(2.0)


def test_each_read_is_counted_in_the_view_the_model_was_given(table: pd.DataFrame) -> None:
    hdd = _row(table, "A", "ttree", "rdf", "hdd")
    assert (hdd["counted_by"], hdd["requests"], hdd["predicted_s"]) == ("device", 20, 1.5)
    lan = _row(table, "A", "ttree", "rdf", "lan")
    assert (lan["counted_by"], lan["requests"]) == ("server", 8)
    warm = _row(table, "A", "parquet", "pyarrow", "page-cache")  # no model: kernel syscalls
    assert (warm["counted_by"], warm["requests"]) == ("syscalls", 40)


def test_ratios_are_root_speed_over_parquet_speed_per_profile(table: pd.DataFrame) -> None:
    r = storage_ratios(table)
    rdf = r[r["root"] == "ttree/none rdf"].set_index("profile")
    assert set(rdf["parquet"]) == {"parquet/none pyarrow"}
    # Parquet time / ROOT time; page cache: A 0.5/1.0, B 1.0/2.0; HDD: A 2.0/3.0, B 2.5/5.0
    assert rdf.loc["page-cache", "mean"] == pytest.approx(0.5)
    assert rdf.loc["page-cache", "std"] == pytest.approx(0.0)
    assert rdf.loc["hdd", "mean"] == pytest.approx((2 / 3 + 0.5) / 2)
    assert rdf.loc["hdd", "std"] == pytest.approx(math.sqrt(2) * (2 / 3 - 0.5) / 2)  # ddof=1
    assert (rdf["n_samples"] == 2).all()
    # no Parquet read on the LAN (skipped) and no WAN at all: no ratio there
    assert set(r["profile"]) == {"page-cache", "hdd"}
    uproot = r[r["root"] == "ttree/none uproot"].set_index("profile")
    assert uproot.loc["hdd", "mean"] == pytest.approx(2.0 / 4.5)
    assert (uproot["n_samples"] == 1).all()  # uproot read sample A only


def test_means_average_the_samples(table: pd.DataFrame) -> None:
    m = storage_means(table).set_index(["file", "reader", "profile"])
    hdd = m.loc[("ttree none c100", "rdf", "hdd")]
    assert hdd["median_s"] == pytest.approx(4.0)  # (3.0 + 5.0) / 2
    assert hdd["storage_s"] == pytest.approx(2.5)  # (2.0 + 3.0) / 2
    assert bool(hdd["verified"])  # both samples' HDD reads were verified cold
    assert ("parquet none c100", "pyarrow", "wan") not in m.index  # skipped: not a mean


def test_tabulate_writes_the_storage_tables(tmp_path: Path) -> None:
    out = tmp_path / "tables"
    files = _write(tmp_path)
    prov = tabulate_storage(_plan(), files, out)
    for name in ("storage.csv", "storage.md", "storage.html", "storage-ratios.csv",
                 "storage-provenance.json"):
        assert (out / name).is_file(), name
    for name in ("storage.csv", "storage-ratios.csv"):
        head = (out / name).read_text().splitlines()[:6]
        assert any(line.startswith("# versions:") and "pyarrow 26.0.1" in line for line in head)
    t = pd.read_csv(out / "storage.csv", comment="#")
    n_reads = sum(len(times) for times in MEDIAN_S.values())
    assert (t["status"] == "measured").sum() == n_reads
    assert (t["status"] == "skipped").sum() == 4 + 2  # the WAN per file, pyarrow's LAN reads
    assert {"label", "adapter"} <= set(t.columns)
    r = pd.read_csv(out / "storage-ratios.csv", comment="#")
    hdd = r[(r["root"] == "ttree/none rdf") & (r["profile"] == "hdd")]
    assert hdd["mean"].iloc[0] == pytest.approx((2 / 3 + 0.5) / 2)
    md = (out / "storage.md").read_text()
    assert WAN_REASON in md and LAN_REASON in md
    assert "## Provenance" in md
    assert "<h2>Provenance</h2>" in (out / "storage.html").read_text()
    assert prov["repetitions"] == REPETITIONS and prov["n_files"] == 4


def test_tabulate_refuses_no_records(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no storage measurements"):
        tabulate_storage(_plan(), [], tmp_path / "tables")


# ---- the storage figure, drawn from these tables ---------------------------------------------


def _figure_inputs(tmp_path: Path, files: list[Path]):
    from hepfmt.report.figures.inputs import load_inputs

    out = tmp_path / "tables"
    tabulate_storage(_plan(), files, out)
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(_plan()))
    return load_inputs("storage", out, out / "storage-provenance.json", plan), out, plan


def test_storage_figure_draws_from_the_storage_tables(tmp_path: Path) -> None:
    from hepfmt.report import figures

    inp, tables, plan = _figure_inputs(tmp_path, _write(tmp_path))
    fig, notes = figures.FAMILIES["storage"].draw(inp)
    per_profile = [ax for ax in fig.axes if ax.get_ylabel() == "time per read (s)"]
    assert len(per_profile) == 1  # one selection: one row of panels
    # the profiles measured, in the order measured; the skipped WAN is not an axis position
    assert [t.get_text() for t in per_profile[0].get_xticklabels()] == ["page-cache", "hdd",
                                                                         "lan"]
    (model,) = [ax for ax in fig.axes if ax.get_xlabel().startswith("cost model")]
    drawn = [(x, y) for line in model.get_lines() if line.get_linestyle() == "None"
             for x, y in zip(*line.get_data(), strict=True)]
    # averaged over samples: TTree rdf hdd (A 1.5, B 2.5 predicted; 2.0, 3.0 measured above
    # the page cache), uproot hdd, pyarrow hdd, TTree rdf lan
    assert len(drawn) == 4
    assert (pytest.approx(2.0), pytest.approx(2.5)) in drawn
    (ratio,) = [ax for ax in fig.axes if ax.get_ylabel() == direction.SPEED_AXIS]
    marks = {(round(x), round(y, 6)) for line in ratio.get_lines()
             if line.get_linestyle() == "None" for x, y in zip(*line.get_data(), strict=True)}
    # ROOT speed / Parquet speed: RDataFrame / pyarrow 0.5 on the page cache (x 0), the mean
    # of 2/3 and 1/2 on the hdd (x 1); uproot: 2/4.5
    assert {(0, 0.5), (1, round((2 / 3 + 0.5) / 2, 6)), (1, round(2 / 4.5, 6))} <= marks
    assert any(WAN_REASON in n for n in notes)  # skipped: said, never drawn
    written = figures.make("storage", tables, tables / "storage-provenance.json", plan,
                           tmp_path / "figures")
    assert [p.suffix for p in written] == [".png", ".pdf"]
    assert written[0].read_bytes()[:4] == b"\x89PNG" and written[0].stat().st_size > 10_000


def test_storage_figure_says_when_nothing_was_measured(tmp_path: Path) -> None:
    from hepfmt.report import figures

    files = _write(tmp_path)
    for f in files:  # every read gone: only the skipped profiles remain
        doc = json.loads(f.read_text())
        f.write_text(json.dumps({**doc, "reads": []}))
    inp, _, _ = _figure_inputs(tmp_path, files)
    fig, _ = figures.FAMILIES["storage"].draw(inp)
    text = " ".join(t.get_text() for ax in fig.axes for t in ax.texts)
    assert "No read was measured" in text and WAN_REASON in text
