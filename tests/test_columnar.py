"""The newer columnar formats (Arrow IPC, HDF5, Lance, Vortex): codecs that act, and bad files
or branches that give an error naming the file."""

from __future__ import annotations

import pytest

from analysis import formats
from analysis.errors import InputError

NEWER = {"feather": "zstd-3", "hdf5": "gzip-4", "lance": "default", "vortex": "default"}


@pytest.mark.parametrize(("fmt", "small", "large"), [
    ("feather", "zstd-3", "none"), ("feather", "lz4", "none"), ("hdf5", "gzip-4", "none"),
    ("vortex", "compact", "default")])
def test_codec_shrinks_the_file(written, fmt, small, large):
    d = formats.get(fmt).describe
    assert d(written(fmt, small))["file_bytes"] < d(written(fmt, large))["file_bytes"]


def test_feather_per_column_bytes_add_up(written):
    """Per-column stored bytes are recomputed from the buffers; they must match the batch
    bodies the file holds to within 1% (Arrow stores a buffer raw when compressing it does
    not pay, which recompression cannot see)."""
    d = formats.get("feather").describe(written("feather", "zstd-3"))
    assert d["compression"] == "zstd"
    assert abs(sum(d["zip_bytes_by_branch"].values()) - d["zip_bytes"]) < 0.01 * d["zip_bytes"]


@pytest.mark.parametrize("fmt", NEWER)
def test_truncated_file_names_the_file(written, tmp_path, fmt):
    good = written(fmt, NEWER[fmt])
    bad = tmp_path / f"truncated.{good.suffix}"
    bad.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    f = formats.get(fmt)
    with pytest.raises(InputError, match="truncated"):
        f.describe(bad)
    reader = next(iter(f.readers.values()))
    reader.prepare(1)
    with pytest.raises(InputError, match="truncated"):
        reader.read(str(bad), ["nMuon", "Muon_pt"])


@pytest.mark.parametrize("fmt", NEWER)
def test_missing_branch_names_the_file(written, fmt):
    path = written(fmt, NEWER[fmt])
    reader = next(iter(formats.get(fmt).readers.values()))
    reader.prepare(1)
    with pytest.raises(InputError, match=r"missing branches.*Muon_nonexistent"):
        reader.read(str(path), ["nMuon", "Muon_nonexistent"])
