"""The readers of issue 40: pyarrow per memory pool, each side's stream and hand-over modes, and
two threads. Every one reproduces the source's checksums at one and at two threads; a pool
reader reads from its pool; a pool this pyarrow lacks is refused in one line."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from tests.conftest import CLUSTER_SIZE, N_EVENTS

from hepfmt import formats
from hepfmt.errors import ConfigError
from hepfmt.formats import arrow_pool
from hepfmt.formats.base import HANDOVER, MODES, STREAM, Marks, touch
from hepfmt.samples.source import to_column


def _has_pool(name: str) -> bool:
    try:
        arrow_pool.pool("probe", name)
    except ConfigError:
        return False
    return True


NEW_READERS = [("parquet", "zstd-3", r) for r in formats.get("parquet").readers
               if r.startswith("pyarrow")] + [
    ("parquet", "zstd-3", "polars"), ("ttree", "zstd-5", "columnar"),
    ("ttree", "zstd-5", "columnar-handover"), ("ttree", "zstd-5", "rdf"),
    ("rntuple", "zstd-5", "columnar"), ("rntuple", "zstd-5", "rdf")]


@pytest.fixture(autouse=True)
def _restore_process():
    """Each test leaves the process as it found it: pyarrow's build default pool, ROOT
    without implicit MT (other tests prove RDataFrame on one thread)."""
    yield
    arrow_pool.use("pyarrow", arrow_pool.DEFAULT)
    import sys

    if "ROOT" in sys.modules:
        sys.modules["ROOT"].DisableImplicitMT()


def _skip_missing_pool(reader: str) -> None:
    pool = formats.get("parquet").readers[reader].knobs.get("memory_pool") \
        if reader.startswith("pyarrow") else None
    if pool and not _has_pool(pool):
        pytest.skip(f"this pyarrow has no {pool} pool")


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(("fmt", "variant", "reader"), NEW_READERS,
                         ids=[f"{f}-{r}" for f, _, r in NEW_READERS])
def test_checksums_equal_the_source_at_one_and_two_threads(written, source_meta, fmt, variant,
                                                           reader, threads):
    _skip_missing_pool(reader)
    r = formats.get(fmt).readers[reader]
    r.prepare(threads)
    path = str(written(fmt, variant))
    want = {b: tuple(c) for b, c in source_meta["checksums"].items()}
    got = r.read(path, list(want), threads)
    bad = {b: (got[b], want[b]) for b in want if tuple(got[b]) != want[b]}
    assert not bad, f"{len(bad)} branches differ, e.g. {list(bad.items())[:3]}"


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(("fmt", "variant", "reader"), [
    ("parquet", "zstd-3", "pyarrow"), ("parquet", "zstd-3", "pyarrow-stream"),
    ("ttree", "zstd-5", "columnar"), ("ttree", "zstd-5", "columnar-handover")])
def test_a_stream_scan_keeps_nothing_and_a_hand_over_keeps_everything(
        written, selection, fmt, variant, reader, threads):
    """Both modes mark every cluster; a stream hands nothing to the harness to hold, a
    hand-over holds the read's data until the harness lets it go."""
    r = formats.get(fmt).readers[reader]
    assert r.mode in MODES
    r.prepare(threads)
    marks = Marks()
    n = r.scan(str(written(fmt, variant)), list(selection), threads, marks)
    assert n == N_EVENTS
    assert [e for e, _ in marks.chunks] == [CLUSTER_SIZE, 2 * CLUSTER_SIZE, N_EVENTS]
    assert bool(marks.held) == (r.mode == HANDOVER)


def test_the_twins_have_each_mode_named():
    parquet, ttree = formats.get("parquet").readers, formats.get("ttree").readers
    assert (parquet["pyarrow"].mode, parquet["pyarrow-stream"].mode) == (HANDOVER, STREAM)
    assert (ttree["columnar-handover"].mode, ttree["columnar"].mode) == (HANDOVER, STREAM)


@pytest.mark.parametrize("options", [{}, {"store_offsets": False}],
                         ids=["offsets", "no-offsets"])
def test_the_hand_over_arrays_carry_the_source_offsets(written, source_table, options):
    """The jagged columns ROOT's hand-over fills are values + offsets, as uproot's arrays:
    their offsets are the source's, from the baskets' entry offsets or, in a tree written
    without them, from the counters."""
    from hepfmt.formats.root.backend import READERS, TREE, root

    path = str(written("ttree", "zstd-5", **options))
    for b in ("Muon_pt", "Jet_pt", "GenPart_pdgId", "CorrT1METJet_area"):
        got = np.array(list(root(READERS).hepfmt.handover_offsets(path, TREE, b)))
        want = to_column(source_table.column(b)).offsets
        np.testing.assert_array_equal(got, want - want[0], err_msg=b)


@pytest.mark.skipif(not _has_pool("system"), reason="no system pool")
def test_a_pool_reader_reads_from_its_pool(written, selection):
    """``pyarrow-system`` allocates every decoded buffer from the system pool, and its facts
    (the read's provenance) name the pool pyarrow really used."""
    r = formats.get("parquet").readers["pyarrow-system"]
    r.prepare(1)
    assert r.run_facts() == {"memory_pool": "system"}
    system = pa.system_memory_pool()
    before = system.bytes_allocated()
    marks = Marks()
    r.scan(str(written("parquet", "zstd-3")), list(selection), 1, marks)
    assert system.bytes_allocated() > before  # the held row groups live in the system pool
    marks.held.clear()
    default = formats.get("parquet").readers["pyarrow"]
    default.prepare(1)
    assert default.run_facts()["memory_pool"] == pa.default_memory_pool().backend_name
    assert default.run_facts()["memory_pool"] != "system" or \
        arrow_pool.pool("pyarrow", arrow_pool.DEFAULT).backend_name == "system"


def test_a_pool_this_pyarrow_lacks_is_refused_in_one_line():
    """Named with the reader, never replaced by another pool (tcmalloc: no pyarrow has it)."""
    with pytest.raises(ConfigError) as err:
        arrow_pool.use("pyarrow-tcmalloc", "tcmalloc")
    text = str(err.value)
    assert "pyarrow-tcmalloc: this pyarrow has no tcmalloc pool" in text and "\n" not in text
    for name, reader in formats.get("parquet").readers.items():
        pool = reader.knobs.get("memory_pool")
        if pool and pool != arrow_pool.DEFAULT and not _has_pool(pool):
            with pytest.raises(ConfigError, match=f"{name}: this pyarrow has no {pool} pool"):
                reader.prepare(1)


def test_touch_reads_every_byte():
    """The stream mode's pass over a chunk sees its largest byte wherever it is."""
    values = np.zeros(10001, dtype=np.uint8)
    values[7777] = 0xA5
    assert touch(pa.table({"x": pa.array(values)})) == 0xA5
