"""RNTuple adapter specifics: codec and page size as the descriptor records them, clusters cut
from any source batching, verification errors, and a TTree refused.

Cluster layout, the exact round trip of every branch and both readers' checksums are covered
for every format, RNTuple included, by tests/formats/test_formats.py; bad files (truncated, garbage,
missing) by tests/formats/test_errors.py.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from hepfmt import formats
from hepfmt.errors import InputError, VerificationError
from hepfmt.formats.root import rntuple
from hepfmt.samples.source import iter_clusters

SETTINGS = {"none": 0, "zstd-5": 505, "lz4-4": 404, "zlib": 101}


@pytest.mark.parametrize("variant", list(SETTINGS))
def test_compression_settings_from_the_descriptor(written, variant):
    """Every column range records algorithm*100 + level; 'zlib' alone is ROOT's level 1."""
    d = rntuple.describe(written("rntuple", variant))
    assert d["compression_settings"] == SETTINGS[variant]
    assert d["clusters"] == [250, 250, 100]


def test_compression_shrinks_and_bytes_add_up(written):
    none = rntuple.describe(written("rntuple", "none"))
    zstd = rntuple.describe(written("rntuple", "zstd-5"))
    assert zstd["zip_bytes"] < none["zip_bytes"]
    for d in (none, zstd):  # data pages (each stored once) fit in the file with its metadata
        assert d["zip_bytes"] == sum(d["zip_bytes_by_branch"].values()) <= d["file_bytes"]
        # a field whose pages all equal earlier ones (same-page merging) costs nothing extra
        assert all(d["zip_bytes_by_branch"][b] > 0 for b in ("nJet", "Jet_pt", "MET_pt"))


def test_page_size_caps_pages(written):
    """A smaller page_size cuts the same data into more pages."""
    default = rntuple.describe(written("rntuple", "zstd-5"))
    small = rntuple.describe(written("rntuple", "zstd-5", page_size=1024))
    assert small["pages"] > default["pages"]
    assert small["clusters"] == default["clusters"]


def test_clusters_are_cut_across_source_batches(tmp_path: Path):
    """Source batches of 3, 7 and 5 rows in clusters of 4: [4, 4, 4, 3], rows in order."""
    path = tmp_path / "s.arrow"
    schema = pa.schema([("x", pa.int32())])
    with pa.ipc.new_file(str(path), schema) as w:
        start = 0
        for n in (3, 7, 5):
            w.write_batch(pa.record_batch([pa.array(np.arange(start, start + n, dtype=np.int32))],
                                          schema=schema))
            start += n
    blocks = list(iter_clusters(path, ["x"], 4))
    assert [rows for _, rows in blocks] == [4, 4, 4, 3]
    assert [t.num_rows for t, _ in blocks] == [4, 4, 4, 3]
    values = np.concatenate([t.column("x").to_numpy() for t, _ in blocks])
    np.testing.assert_array_equal(values, np.arange(15))


def test_verification_names_the_file(written):
    path = written("rntuple", "zstd-5")
    with pytest.raises(VerificationError, match="are not 200 entries") as err:
        rntuple._verify(path, Path("out.root"), 600, 200, 1499)
    assert err.value.path == "out.root"
    with pytest.raises(VerificationError, match="601 expected"):
        rntuple._verify(path, Path("out.root"), 601, 250, 1499)


def test_a_ttree_is_not_an_rntuple(written):
    """Truncated, garbage and missing files are tested for every format in test_errors.py;
    a ROOT file whose ``Events`` is a TTree must be refused too, naming the file."""
    path = written("ttree", "none")
    with pytest.raises(InputError) as err:
        formats.get("rntuple").describe(path)
    assert err.value.path == str(path)
