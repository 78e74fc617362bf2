"""The newer columnar formats (Arrow IPC, HDF5, Lance, Vortex): codecs that act and that the file
records, layouts read back from the files, and bad files or branches that give an error naming
the file."""

from __future__ import annotations

import pytest

from hepfmt import formats
from hepfmt.errors import ConfigError, InputError

NEWER = {"feather": "zstd-3", "hdf5": "gzip-4", "lance": "zstd-3", "vortex": "default"}


def _describe(written, fmt: str, variant: str, **options) -> dict:
    return formats.get(fmt).describe(written(fmt, variant, **options))


@pytest.mark.parametrize(("fmt", "small", "large"), [
    ("feather", "zstd-3", "none"), ("feather", "lz4", "none"), ("hdf5", "gzip-4", "none"),
    ("lance", "zstd-3", "none"), ("lance", "zstd-3", "default"),
    ("vortex", "compact", "default")])
def test_codec_shrinks_the_file(written, fmt, small, large):
    assert _describe(written, fmt, small)["file_bytes"] < \
        _describe(written, fmt, large)["file_bytes"]


@pytest.mark.parametrize(("fmt", "variant", "codec", "level"), [
    ("feather", "none", "none", None), ("feather", "lz4", "lz4", None),
    ("feather", "zstd-3", "zstd", 3), ("hdf5", "none", "none", None),
    ("hdf5", "gzip-4", "gzip", 4), ("lance", "default", "default", None),
    ("lance", "zstd-3", "zstd", "3")])
def test_codec_recorded_in_the_file(written, fmt, variant, codec, level):
    """Arrow IPC: the batches' BodyCompression; HDF5: the dataset filter; Lance: the field
    metadata that asked for it."""
    d = _describe(written, fmt, variant)
    assert (d["compression"], d["compression_level"]) == (codec, level)


def test_feather_per_column_bytes_are_the_batch_bodies(written):
    """Each buffer's stored extent comes from the IPC metadata, so the branches add up to the
    batch bodies exactly; compressed buffers are smaller than raw ones."""
    z = _describe(written, "feather", "zstd-3")
    raw = _describe(written, "feather", "none")
    assert z["record_batches"] == 3
    for d in (z, raw):
        assert sum(d["zip_bytes_by_branch"].values()) == d["zip_bytes"]
        assert d["zip_bytes"] + d["footer_bytes"] == d["file_bytes"]
    assert z["zip_bytes_by_branch"]["GenPart_pt"] < raw["zip_bytes_by_branch"]["GenPart_pt"]


def test_lance_codec_applied_to_pages(written):
    """Lance applies general-purpose compression where it pays: some pages of the zstd file
    say zstd in their encoding, none of the file without a codec."""
    assert _describe(written, "lance", "zstd-3")["general_compression_pages"].get("zstd", 0) > 0
    assert _describe(written, "lance", "none")["general_compression_pages"] == {}


@pytest.mark.parametrize("options", [{}, {"max_page_bytes": 4096}, {"version": "2.1"}])
def test_lance_pages_end_at_clusters(written, options):
    """At least one page per column per cluster, read back from the page tables
    (``max_page_bytes`` may split pages, never across clusters)."""
    d = _describe(written, "lance", "default", **options)
    assert d["clusters"] == [250, 250, 100]
    assert d["format_version"] == options.get("version", "2.2")
    assert d["pages"] >= 3 * d["branches"]


def test_lance_refuses_format_2_0(source, tmp_path):
    fmt = formats.get("lance")
    with pytest.raises(ConfigError, match="version"):
        fmt.write(source, tmp_path / "x.lance", fmt.variant("default"), 250, {"version": "2.0"})
    assert not (tmp_path / "x.lance").exists()


@pytest.mark.parametrize(("fmt", "variant"), [
    ("hdf5", "lzf-3"), ("hdf5", "gzip-10"), ("lance", "default-3"), ("lance", "lz4-1"),
    ("vortex", "compact-9")])
def test_levels_a_format_cannot_take_are_refused(source, tmp_path, fmt, variant):
    f = formats.get(fmt)
    out = tmp_path / f"x.{formats.extension(fmt)}"
    with pytest.raises(ConfigError, match=variant):
        f.write(source, out, f.variant(variant), 250, {})
    assert not out.exists()


def test_hdf5_layout(written):
    """Event-level chunks of one cluster; every branch its own dataset."""
    d = _describe(written, "hdf5", "gzip-4")
    assert d["clusters"] == [250, 250, 100]
    assert d["zip_bytes"] < d["file_bytes"]


def test_vortex_bytes_per_branch(written, schema):
    """From vortex's own inspector: every source branch has its data bytes, and data, zone maps
    and footer account for the file up to alignment padding."""
    d = _describe(written, "vortex", "default")
    assert list(d["zip_bytes_by_branch"]) == schema.names
    assert all(v >= 0 for v in d["zip_bytes_by_branch"].values())
    accounted = d["zip_bytes"] + d["zone_map_bytes"] + d["footer_bytes"]
    assert 0 <= d["file_bytes"] - accounted < 0.01 * d["file_bytes"]


def _first_reader(fmt: str):
    reader = next(iter(formats.get(fmt).readers.values()))
    reader.prepare(1)
    return reader


@pytest.mark.parametrize("fmt", NEWER)
def test_truncated_file_names_the_file(written, tmp_path, fmt):
    good = written(fmt, NEWER[fmt])
    bad = tmp_path / f"truncated{good.suffix}"
    bad.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    with pytest.raises(InputError, match="truncated"):
        formats.get(fmt).describe(bad)
    with pytest.raises(InputError, match="truncated"):
        _first_reader(fmt).read(str(bad), ["nMuon", "Muon_pt"])


@pytest.mark.parametrize("fmt", NEWER)
def test_foreign_file_names_the_file(tmp_path, fmt):
    """A file of another kind under the format's extension (here: text)."""
    bad = tmp_path / f"foreign.{formats.extension(fmt)}"
    bad.write_text("not a columnar file\n" * 100)
    with pytest.raises(InputError, match="foreign"):
        formats.get(fmt).describe(bad)
    with pytest.raises(InputError, match="foreign"):
        _first_reader(fmt).read(str(bad), ["nMuon"])


@pytest.mark.parametrize("fmt", NEWER)
def test_missing_branch_names_the_file(written, fmt):
    path = written(fmt, NEWER[fmt])
    with pytest.raises(InputError, match=rf"{path.name}: missing branches.*Muon_nonexistent"):
        _first_reader(fmt).read(str(path), ["nMuon", "Muon_nonexistent"])
