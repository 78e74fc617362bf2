"""The metadata-cost study: wide-file generators, metadata byte counts, decode timing, tables,
and the `metadata` Snakemake target on a tiny config.

What must hold for its figures to mean anything: each file has exactly the columns, row groups /
clusters and statistics level asked for (read back with a second library, not the writer's);
the timed call is the decode alone (loading, imports and process start-up are outside it); and
the tables' per-column figures and scaling exponents are the arithmetic they claim.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import uproot
import yaml

from hepfmt.codec import Variant
from hepfmt.errors import ConfigError, InputError, VerificationError
from hepfmt.measure import timing
from hepfmt.metastudy import decode, metabytes, tables, widefiles
from hepfmt.metastudy.rusthelper import BINARY
from hepfmt.plan import metagrid, paths
from hepfmt.plan.config import validate

ROOT = Path(__file__).resolve().parents[2]
LAYOUTS = ["parquet-none", "parquet-chunk", "parquet-page", "ttree", "rntuple"]
CODECS = {"parquet": Variant("snappy", None, True), "ttree": Variant("zstd", 5),
          "rntuple": Variant("zstd", 5)}
COLUMNS, GROUPS, ROWS = 7, 3, 120  # 120 rows: the 100-row block repeats, then a partial block


def _write(tmp: Path, name: str, layout: str, source: Path | None = None) -> tuple[Path, dict]:
    lay = widefiles.WideFileLayout.parse(layout)
    ds = widefiles.dataset(name, GROUPS, ROWS, seed=3, source=source)
    out = tmp / f"{name}-{layout}.{lay.extension}"
    return out, widefiles.write(ds, lay, out, CODECS[lay.format], {})


@pytest.fixture(scope="module")
def wide(tmp_path_factory: pytest.TempPathFactory):
    """Factory ``wide(type, layout) -> (path, record)``; each file is written once."""
    tmp = tmp_path_factory.mktemp("wide")
    cache: dict[tuple[str, str], tuple[Path, dict]] = {}

    def get(dtype: str, layout: str) -> tuple[Path, dict]:
        if (dtype, layout) not in cache:
            cache[dtype, layout] = _write(tmp, f"{dtype}-c{COLUMNS}", layout)
        return cache[dtype, layout]

    return get


# --- generators: read back with a library other than the writer's checks ---------------------

@pytest.mark.parametrize("dtype", widefiles.TYPES)
@pytest.mark.parametrize("stats", widefiles.STATS)
def test_parquet_has_requested_columns_row_groups_and_statistics(wide, dtype, stats):
    path, record = wide(dtype, f"parquet-{stats}")
    md = pq.ParquetFile(path).metadata
    assert md.num_columns == COLUMNS
    assert [md.row_group(i).num_rows for i in range(md.num_row_groups)] == [ROWS] * GROUPS
    chunks = [md.row_group(i).column(j) for i in range(GROUPS) for j in range(COLUMNS)]
    assert all(c.is_stats_set for c in chunks) == (stats != "none")
    assert any(c.is_stats_set for c in chunks) == (stats != "none")
    assert all(c.has_offset_index and c.has_column_index for c in chunks) == (stats == "page")
    assert record["stats"] == stats
    assert (record["page_index_bytes"] > 0) == (stats == "page")


@pytest.mark.parametrize("dtype", widefiles.TYPES)
def test_ttree_has_requested_branches_and_clusters(wide, dtype):
    path, record = wide(dtype, "ttree")
    with uproot.open(path) as f:
        tree = f["Events"]
        assert len(tree.branches) == COLUMNS
        assert list(tree.common_entry_offsets()) == [i * ROWS for i in range(GROUPS + 1)]
    assert record["groups"] == [ROWS] * GROUPS and record["columns"] == COLUMNS


@pytest.mark.parametrize("dtype", widefiles.TYPES)
def test_rntuple_has_requested_fields_and_clusters(wide, dtype):
    path, record = wide(dtype, "rntuple")
    with uproot.open(path) as f:
        nt = f["Events"]
        top = [r for i, r in enumerate(nt.field_records) if r.parent_field_id == i]
        assert len(top) == COLUMNS
        assert [c.num_entries for c in nt.cluster_summaries] == [ROWS] * GROUPS
    assert record["groups"] == [ROWS] * GROUPS and record["columns"] == COLUMNS


@pytest.mark.parametrize("dtype", widefiles.TYPES)
def test_every_layout_holds_the_same_values(wide, dtype):
    """The synthetic block (100 rows), repeated: identical data in every format."""
    block = widefiles.synthetic_block(dtype, COLUMNS, widefiles.BLOCK_ROWS, seed=3)
    want = [block.column(c).to_pylist() * 2 for c in ("col_0", f"col_{COLUMNS - 1}")]
    want = [w[:ROWS] * GROUPS for w in want]
    for layout in LAYOUTS:
        path, _ = wide(dtype, layout)
        if layout.startswith("parquet"):
            t = pq.read_table(path, columns=["col_0", f"col_{COLUMNS - 1}"])
            got = [t.column(i).to_pylist() for i in range(2)]
        else:
            with uproot.open(path) as f:
                arrays = f["Events"].arrays(["col_0", f"col_{COLUMNS - 1}"], library="np")
            got = [[v.decode() if isinstance(v, bytes) else v for v in arrays[c].tolist()]
                   for c in ("col_0", f"col_{COLUMNS - 1}")]
        if dtype == "float32":
            np.testing.assert_array_equal(np.asarray(got, np.float32), np.asarray(want))
        else:
            assert got == want, layout


def test_synthetic_strings_average_ten_characters():
    block = widefiles.synthetic_block("string", 50, widefiles.BLOCK_ROWS, seed=1)
    lengths = [len(s) for c in block.columns for s in c.to_pylist()]
    assert min(lengths) == 0 and max(lengths) == widefiles.MAX_STRING - 1
    assert 9.0 < np.mean(lengths) < 10.0


def test_nanoaod_sample_is_written_at_its_real_width(tmp_path, source, schema):
    """The study's own sample: every branch, real types, jagged collections, 3 row groups."""
    n = len(schema.branches)
    for layout in ("parquet-page", "ttree", "rntuple"):
        _, record = _write(tmp_path, "nanoaod-dy", layout, source=source)
        assert record["columns"] == n > 1000
        assert record["groups"] == [200, 200, 200]
    with uproot.open(tmp_path / "nanoaod-dy-rntuple.root") as f:
        nt = f["Events"]
        got = nt.arrays(["nMuon", "Muon_pt"])
    want = pq.read_table(tmp_path / "nanoaod-dy-parquet-page.parquet", columns=["Muon_pt"])
    assert got["Muon_pt"].to_list() == want.column("Muon_pt").to_pylist()
    assert [len(x) for x in got["Muon_pt"].to_list()] == got["nMuon"].to_list()


def test_metadata_bytes_grow_with_columns(tmp_path):
    sizes = {}
    for n in (10, 100):
        for layout in ("parquet-none", "ttree", "rntuple"):
            lay = widefiles.WideFileLayout.parse(layout)
            ds = widefiles.dataset(f"float32-c{n}", 2, 10, seed=1)
            rec = widefiles.write(ds, lay, tmp_path / f"{n}-{layout}.{lay.extension}",
                                  CODECS[lay.format])
            sizes[n, layout] = rec
    for layout in ("parquet-none", "ttree", "rntuple"):  # ROOT's compression hides some
        small, large = sizes[10, layout], sizes[100, layout]
        assert large["metadata_bytes_uncompressed"] > 5 * small["metadata_bytes_uncompressed"]
        assert large["metadata_bytes"] > 2 * small["metadata_bytes"]
        assert large["metadata_bytes_uncompressed"] >= large["metadata_bytes"]
    parts = sizes[100, "rntuple"]["parts"]
    assert sizes[100, "rntuple"]["metadata_bytes"] == sum(parts.values())
    assert sizes[100, "parquet-none"]["metadata_bytes"] == \
        pq.ParquetFile(tmp_path / "100-parquet-none.parquet").metadata.serialized_size


@pytest.mark.parametrize("layout", ["parquet-page", "ttree", "rntuple"])
def test_metadata_barely_depends_on_rows_per_group(tmp_path, layout):
    """The default config writes 100 rows per group where the paper writes 1000, which makes
    its writes cheaper; the metadata must stay the same (one page / basket per column and group
    either way): ROOT's uncompressed, Parquet's within 1 % (only varint offsets grow)."""
    lay = widefiles.WideFileLayout.parse(layout)
    rec = {}
    for rows in (100, 1000):
        ds = widefiles.dataset("float32-c7", GROUPS, rows, seed=3)
        rec[rows] = widefiles.write(ds, lay, tmp_path / f"{rows}.{lay.extension}",
                                    CODECS[lay.format], {"data_page_size": 1 << 20})
    few, many = rec[100], rec[1000]
    if lay.format == "parquet":
        assert few["metadata_bytes"] == pytest.approx(many["metadata_bytes"], rel=0.01)
        assert few["page_index_bytes"] == pytest.approx(many["page_index_bytes"], rel=0.01)
    else:
        assert few["metadata_bytes_uncompressed"] == many["metadata_bytes_uncompressed"]


def test_bad_names_are_refused():
    with pytest.raises(ConfigError, match="float64-c10"):
        widefiles.dataset("float64-c10", 2, 10, seed=1)
    with pytest.raises(ConfigError, match="float32-c0"):
        widefiles.dataset("float32-c0", 2, 10, seed=1)
    with pytest.raises(ConfigError, match="parquet-rowgroup"):
        widefiles.WideFileLayout.parse("parquet-rowgroup")
    with pytest.raises(ConfigError, match="needs its source"):
        widefiles.dataset("nanoaod-DY", 2, 10, seed=1)


def test_a_corrupt_file_is_named(tmp_path, wide):
    path, _ = wide("float32", "ttree")
    bad = tmp_path / "bad.root"
    bad.write_bytes(path.read_bytes()[:2000])
    with pytest.raises(InputError, match=re.escape("bad.root")):
        metabytes.describe(bad, "ttree")
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"PAR1 not a parquet file")
    with pytest.raises(InputError, match=re.escape("bad.parquet")):
        metabytes.describe(bad, "parquet")


# --- timing: only the decode is timed ---------------------------------------------------------

class _Clock:
    """decode's clocks (wall and CPU) in a test: time passes only when the test says, so what
    falls inside a timed span is known exactly, whatever the machine's load."""

    def __init__(self) -> None:
        self.now = 0.0

    def advance(self, seconds: float) -> None:
        self.now += seconds

    def perf_counter(self) -> float:
        return self.now

    def process_time(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch) -> _Clock:
    fake = _Clock()
    monkeypatch.setattr(decode, "time", fake)
    monkeypatch.setattr(timing, "time", fake)  # the repeat loop's budget clock
    return fake


def test_repeat_times_only_the_call_and_checks_every_result(clock):
    slow_setup = {"n": 0}

    def decode_once():
        slow_setup["n"] += 1
        clock.advance(0.25)  # the decode
        return (3, 4)

    clock.advance(100.0)  # "loading" before repeat() is never part of its figures
    out = decode.repeat({"memory": decode_once}, (3, 4), 7, 10.0, "x")
    assert slow_setup["n"] == 7
    assert out["memory"]["wall_s"] == out["memory"]["cpu_s"] == [0.25] * 7  # the calls alone
    with pytest.raises(VerificationError, match=r"\(3, 5\)"):
        decode.repeat({"memory": lambda: (3, 5)}, (3, 4), 5, 10.0, "x")


def test_repeat_stops_at_the_budget_but_never_below_five(clock):
    def quarter():
        clock.advance(0.25)
        return (1, 1)

    out = decode.repeat({"m": quarter}, (1, 1), 100, 1e-9, "x")
    assert len(out["m"]["wall_s"]) == decode.MIN_REPETITIONS
    # 2 s of quarter-second decodes: the eighth spends the budget, and no ninth starts (the
    # one repeat loop's rule, hepfmt.measure.timing.interleaved)
    out = decode.repeat({"m": quarter}, (1, 1), 100, 2.0, "x")
    assert len(out["m"]["wall_s"]) == 8


def test_slow_loading_and_preparing_are_not_timed(tmp_path, monkeypatch, clock):
    """A decoder whose preparation and loading take 100 s each, and whose decodes take 1/8 s
    from memory and 1/4 s from disk, must come out at exactly those: run_decoder times the
    decode and nothing else (neither the loading nor the untimed first calls)."""
    path = tmp_path / "f.bin"
    path.write_bytes(b"x" * 100)

    def takes(seconds: float, result):
        clock.advance(seconds)
        return result

    fake = decode.Decoder("fake", "parquet", "none", lambda: clock.advance(100.0),
                            lambda data: takes(100.0, data),
                            lambda data: takes(0.125, (len(data), 1)),
                            lambda p: takes(0.25, (Path(p).stat().st_size, 1)))
    monkeypatch.setitem(decode.DECODERS, "fake", fake)
    res = decode.run_decoder(decode.TimingSpec(str(path), "fake", 100, 1, 5, 10.0))
    for mode, seconds in (("memory", 0.125), ("disk", 0.25)):
        assert res[mode]["wall_s"] == res[mode]["cpu_s"] == [seconds] * 5, mode
        assert res[mode]["resident_fraction"] == 1.0
    assert set(res) == set(decode.MODES)


@pytest.mark.parametrize("impl", sorted(decode.DECODERS))
def test_memory_decode_never_touches_the_file(wide, tmp_path, impl):
    """Each decoder is handed the loaded bytes; the file is gone before it decodes."""
    dec = decode.DECODERS[impl]
    src, _ = wide("float32", "parquet-page" if dec.format == "parquet" else dec.format)
    copy = tmp_path / src.name
    copy.write_bytes(src.read_bytes())
    dec.prepare()
    loaded = dec.load(copy.read_bytes())
    copy.unlink()
    dec.memory(loaded)  # first call: lazy imports and JIT, as the untimed warm-up
    out = decode.repeat({"memory": lambda: dec.memory(loaded)},
                          (COLUMNS, GROUPS * ROWS), 5, 10.0, impl)
    assert len(out["memory"]["wall_s"]) == len(out["memory"]["cpu_s"]) == 5
    assert all(0 < t < math.inf for t in out["memory"]["wall_s"])  # a real clock's times
    assert all(0 <= t < math.inf for t in out["memory"]["cpu_s"])


def test_time_file_runs_each_implementation_in_a_fresh_process(wide, tmp_path):
    path, record = wide("string", "rntuple")
    out = tmp_path / "t.json"
    doc = decode.time_file(path, record, ["root-rntuple"], 5, 10.0, out)
    assert json.loads(out.read_text()) == doc
    rows = {(t["implementation"], t["mode"]): t for t in doc["timings"]}
    assert set(rows) == {("root-rntuple", "memory"), ("root-rntuple", "disk")}
    assert all(t["n"] == 5 and len(t["wall_s"]) == 5 and t["q25_s"] <= t["median_s"] <= t["q75_s"]
               for t in rows.values())
    assert doc["provenance"]["versions"]["ROOT"].startswith("6.")
    assert doc["columns"] == COLUMNS and doc["metadata_bytes"] == record["metadata_bytes"]


def test_failed_timing_leaves_no_result(wide, tmp_path):
    path, record = wide("float32", "ttree")
    bad = tmp_path / "cut.root"
    bad.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    out = tmp_path / "t.json"
    with pytest.raises(VerificationError, match=re.escape("cut.root")):
        decode.time_file(bad, record, ["root-ttree"], 5, 10.0, out)
    assert not out.exists()
    with pytest.raises(VerificationError, match="does not read"):
        decode.time_file(path, record, ["pyarrow"], 5, 10.0, out)


@pytest.mark.skipif(not BINARY.exists(), reason="Rust helper not built (optional)")
def test_rust_helper_times_footer_and_page_index(wide, tmp_path):
    path, record = wide("float32", "parquet-page")
    doc = decode.time_file(path, record, ["arrow-rs"], 5, 10.0, tmp_path / "t.json",
                             rust_binary=str(BINARY))
    names = {(t["implementation"], t["mode"]) for t in doc["timings"]}
    assert names == {("arrow-rs", "memory"), ("arrow-rs", "disk"),
                     ("arrow-rs+page-index", "memory")}


# --- tables from a known input ----------------------------------------------------------------

PROV = {"date": "2026-01-01T00:00:00+00:00", "versions": {"pyarrow": "26.0.1", "ROOT": "6.40.00"},
        "machine": {"cpu": "test cpu", "cores": 2, "memory_bytes": 2**30, "kernel": "k",
                    "hostname": "h"}, "filesystem": {"type": "ext4", "mount": "/"}}


def _timing(tmp: Path, n: int, layout: str, impl: str, seconds: float, nbytes: int) -> Path:
    fmt = layout.split("-")[0]
    doc = {"dataset": f"float32-c{n}", "layout": layout, "format": fmt, "columns": n,
           "stats": layout.split("-")[1] if fmt == "parquet" else None,
           "metadata_bytes": nbytes, "metadata_bytes_uncompressed": nbytes,
           "page_index_bytes": 0, "file_bytes": 10 * nbytes, "provenance": PROV,
           "timings": [{"implementation": impl, "library": "x", "mode": "memory",
                        **decode.summarize([seconds * f for f in (0.9, 1.0, 1.0, 1.1, 1.2)]),
                        "wall_s": [seconds] * 5, "cpu_s": [seconds] * 5,
                        "resident_fraction": 1.0}]}
    p = tmp / f"{n}-{layout}-{impl}.json"
    p.write_text(json.dumps(doc))
    return p


def test_tables_per_column_ratios_and_exponents(tmp_path):
    """pyarrow linear (1 ms per 100 columns), TTree quadratic; bytes 700 per column."""
    files = []
    for n in (100, 1000, 10000):
        files.append(_timing(tmp_path, n, "parquet-chunk", "pyarrow", n * 1e-5, 700 * n))
        files.append(_timing(tmp_path, n, "ttree", "root-ttree", (n / 1000) ** 2 * 1e-2, 50 * n))
    config = validate(yaml.safe_load((ROOT / "config" / "test.yaml").read_text()))
    df = tables.tabulate(config, files, tmp_path / "tables")
    t = df.set_index(["implementation", "n_columns"])
    assert t.loc[("pyarrow", 1000), "us_per_column"] == pytest.approx(10.0)
    assert t.loc[("pyarrow", 1000), "bytes_per_column"] == pytest.approx(700)
    assert t.loc[("root-ttree", 10000), "ratio_to_pyarrow"] == pytest.approx(1.0 / 0.1)
    sl = pd.read_csv(tmp_path / "tables" / "slopes.csv", comment="#")
    steps = list(zip(sl.from_columns, sl.to_columns, strict=True))
    assert steps == [(100, 1000), (1000, 10000)] * 2
    py, tt = sl[sl.implementation == "pyarrow"], sl[sl.implementation == "root-ttree"]
    assert py.exponent.to_list() == pytest.approx([1.0, 1.0])
    assert tt.exponent.to_list() == pytest.approx([2.0, 2.0])
    assert py.marginal_us_per_column.to_list() == pytest.approx([10.0, 10.0])
    assert tt.marginal_us_per_column.to_list() == pytest.approx([11.0, 110.0])  # (t2-t1)/(n2-n1)
    md = (tmp_path / "tables" / "metadata.md").read_text()
    # pyarrow at 1000 columns: median 10 ms, IQR (1.1 - 1.0) x 10 ms, half of it shown
    assert "| 10 ms ± 0.5 (10 µs/col) |" in md
    assert "7,000,000 B (700 B/col)" in md
    for name in ("metadata.csv", "slopes.csv", "repetitions.csv"):
        head = (tmp_path / "tables" / name).read_text().splitlines()[:8]
        assert any(line.startswith("# versions:") and "pyarrow 26.0.1" in line for line in head)
        assert any("spread = interquartile range" in line for line in head)
    assert "## Provenance" in md


def test_tables_refuse_an_incomplete_timing(tmp_path):
    p = _timing(tmp_path, 10, "ttree", "root-ttree", 1e-3, 100)
    doc = json.loads(p.read_text())
    del doc["timings"]
    p.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=re.escape(p.name)):
        tables.tabulate({}, [p], tmp_path / "tables")
    assert not (tmp_path / "tables" / "metadata.csv").exists()


def test_plots_are_written(tmp_path, monkeypatch):
    from hepfmt.metastudy import plots

    files = [_timing(tmp_path, n, "ttree", "root-ttree", n * 1e-6, 50 * n) for n in (10, 100)]
    df = tables.load(files)[0]
    df["ratio_to_pyarrow"] = np.nan
    prov = {"hepfmt_commit": "abc1234", "versions": {"ROOT": "6.40.00", "pyarrow": "26.0.1"},
            "machine": {"cpu": "test cpu", "cores": 2}, "date": "2026-11-23",
            "config_hash": "h"}
    footers = []
    real_render = plots.render

    def render(draw_fn, footer, stem):  # drawn like every other figure, footer recorded
        footers.append(footer)
        return real_render(draw_fn, footer, stem)

    monkeypatch.setattr(plots, "render", render)
    out = plots.plot(df, tmp_path / "plots", prov, "default.yaml")
    assert sorted(p.name for p in out) == ["decode_time.pdf", "decode_time.png",
                                           "metadata_size.pdf", "metadata_size.png"]
    assert all(p.stat().st_size > 1000 for p in out)
    assert len(footers) == 2 and all("abc1234" in f and "default.yaml" in f for f in footers)


# --- the grid and the workflow ----------------------------------------------------------------

def _config(**metadata_keys) -> dict:
    config = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())
    config["metadata"] = metadata_keys
    return validate(config)


def test_grid_limits_implementations_and_skips_unread_formats():
    c = _config(columns=[10, 5000], types=["float32"], stats_levels=["page"],
                implementations=["pyarrow", "uproot-ttree"], max_columns={"uproot-ttree": 1000})
    files = {(f.dataset, f.layout) for f in metagrid.files(c)}
    assert files == {("float32-c10", "parquet-page"), ("float32-c10", "ttree"),
                     ("float32-c5000", "parquet-page")}
    assert paths.meta("r", "timings", metagrid.find(c, "float32-c10", "ttree")) == \
        "r/metadata/timings/float32-c10/ttree.root.json"


def test_grid_checks_name_the_key():
    with pytest.raises(ConfigError, match=re.escape("metadata.nanoaod")):
        metagrid.check(_config(nanoaod="NoSuchSample"))
    with pytest.raises(ConfigError, match=re.escape("metadata.max_columns.pyarow")):
        metagrid.check(_config(max_columns={"pyarow": 10}))
    with pytest.raises(ConfigError, match=re.escape("metadata.codecs.ttree")):
        metagrid.check(_config(codecs={"ttree": "snappy"}))
    with pytest.raises(ConfigError, match=re.escape("metadata.columns")):
        _config(columns=[0])


def _snakemake(tmp: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    return subprocess.run([sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"),
                           "--directory", str(ROOT), "--cores", "2", *args,
                           "--configfile", str(tmp / "config.yaml")],
                          capture_output=True, text=True, timeout=600, env=env, cwd=tmp)


@pytest.mark.slow
def test_metadata_target_runs_on_a_tiny_config(tmp_path):
    config = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())
    config["results"] = str(tmp_path / "results")
    config["metadata"] = {"columns": [10, 50], "types": ["float32"], "row_groups": 2,
                          "rows_per_group": 10, "stats_levels": ["page"],
                          "implementations": ["pyarrow", "root-rntuple", "uproot-ttree"],
                          "repetitions": 5, "budget_s": 0.5}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    default = _snakemake(tmp_path, "-n")  # the default target does not include the study
    assert default.returncode == 0 and "rule generate" in default.stdout
    assert "rule metadata" not in default.stdout
    proc = _snakemake(tmp_path, "metadata")
    assert proc.returncode == 0, proc.stderr[-3000:]
    meta = tmp_path / "results" / "metadata"
    df = pd.read_csv(meta / "tables" / "metadata.csv", comment="#")
    assert set(zip(df.implementation, df.n_columns, df["mode"], strict=True)) == {
        (i, n, m) for i in ("pyarrow", "root-rntuple", "uproot-ttree") for n in (10, 50)
        for m in ("memory", "disk")}
    assert (df.n == 5).all() and (df.resident_fraction == 1.0).all()
    for plot in ("decode_time", "metadata_size"):
        assert (meta / "plots" / f"{plot}.png").stat().st_size > 0
    assert "Nothing to be done" in _snakemake(tmp_path, "metadata", "-n").stdout
