"""The proof sees order, type and changes that keep a sum (issue 44: reversed row groups, swapped
stripes, batches, baskets and pages, a float re-declared as int32, two values moved up and down
by one all passed a proof of counts and sums).

Each case is made for every format the same way: a valid file of that format, written by its
own adapter from a source whose values were reordered or changed, is proven against the
original source's checksums. The file is well-formed; only its values (or their order, or their
declared type) are not the source's, and that is what the proof must refuse, naming the branch.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import CLUSTER_SIZE
from hepfmt import formats
from hepfmt.errors import VerificationError
from hepfmt.measure.verify import check_source, verify_written
from hepfmt.samples.source import sidecar_path


def _source_like(source: Path, table: pa.Table, out: Path) -> Path:
    """An Arrow IPC source holding ``table`` beside the original's sidecar (its checksums)."""
    with pa.OSFile(str(out), "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
        for batch in table.to_batches(max_chunksize=CLUSTER_SIZE):
            w.write_batch(batch)
    shutil.copy(sidecar_path(source), sidecar_path(out))
    return out


def _clusters_swapped(table: pa.Table) -> pa.Table:
    """The same rows with the first two clusters swapped (the clusters keep their sizes):
    every value kept, only their order moved, which is what reordered row groups, stripes,
    batches, baskets or pages read back as."""
    c = CLUSTER_SIZE
    return pa.concat_tables([table.slice(c, c), table.slice(0, c), table.slice(2 * c)])


def _sum_kept(table: pa.Table, name: str) -> pa.Table:
    """One value of a flat integer branch up by one, a later one down by one: the sum holds."""
    values = table.column(name).to_numpy().copy()
    values[1] += 1
    values[-2] -= 1
    return table.set_column(table.schema.get_field_index(name), name,
                            pa.array(values, type=table.schema.field(name).type))


def _proof_fails(fmt: str, made: Path, source: Path, tmp_path: Path, why: str) -> None:
    f = formats.get(fmt)
    out = tmp_path / f"f.{f.extension if hasattr(f, 'extension') else fmt}"
    f.write(made, out, f.variant(f.plain), CLUSTER_SIZE, {})
    with pytest.raises(VerificationError, match=why):
        verify_written(out, fmt, check_source(source))


@pytest.mark.parametrize("fmt", formats.names())
def test_clusters_in_another_order_fail_the_proof(fmt, source, source_table, tmp_path) -> None:
    assert source_table.num_rows >= 2 * CLUSTER_SIZE  # two clusters to swap
    made = _source_like(source, _clusters_swapped(source_table), tmp_path / "moved.arrow")
    _proof_fails(fmt, made, source, tmp_path, r"branches read back .* \(values moved")


@pytest.mark.parametrize("fmt", formats.names())
def test_a_change_that_keeps_the_sum_fails_the_proof(fmt, source, source_table,
                                                     tmp_path) -> None:
    made = _source_like(source, _sum_kept(source_table, "event"), tmp_path / "kept.arrow")
    _proof_fails(fmt, made, source, tmp_path, r"e\.g\. event \(values moved, or changed")


def test_a_float_redeclared_as_int32_fails_the_proof(source, source_table, tmp_path) -> None:
    """The same bytes under another declared type (a Parquet schema edited from float to
    int32): counts and sums agree, the type does not."""
    name = "MET_pt"
    i = source_table.schema.get_field_index(name)
    bits = source_table.column(name).to_numpy().view(np.int32)
    table = source_table.set_column(i, name, pa.array(bits, type=pa.int32()))
    out = tmp_path / "redeclared.parquet"
    pq.write_table(table, out, row_group_size=CLUSTER_SIZE)
    with pytest.raises(VerificationError, match=rf"e\.g\. {name} \(type i4, not f4"):
        verify_written(out, "parquet", check_source(source))


def test_the_original_still_proves(source, source_table, tmp_path) -> None:
    """The control: the same route with nothing changed passes."""
    made = _source_like(source, source_table, tmp_path / "same.arrow")
    f = formats.get("parquet")
    out = tmp_path / "same.parquet"
    f.write(made, out, f.variant(f.plain), CLUSTER_SIZE, {})
    verify_written(out, "parquet", check_source(source))
