"""Imports check what a file says about itself: a damaged TTree basket seek, a huge entry count,
Parquet row groups reordered or duplicated, offsets that decrease or entries that differ between
branches are refused in one line naming the file, the branch and the relation; real NanoAOD
still imports.

The damaged files are made here: small files written uncompressed (so the TTree's own record
holds its basket lists as plain bytes) and patched where the lists are.
"""

from __future__ import annotations

import itertools
import struct
from pathlib import Path

import awkward as ak
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import uproot

from hepfmt.cli import main
from hepfmt.errors import InputError
from hepfmt.samples.relations import check_chunk, check_parquet
from hepfmt.samples.source import Column, read_source_meta

NANO = Path(__file__).resolve().parents[3] / "shared" / "nanoaod" / "nano_dy.root"
#: Entries per basket: unequal, so a basket read in another's place holds other entries.
BASKETS = (300, 200, 100)


def _tree(path: Path) -> Path:
    """A TTree of a flat and a jagged branch, three baskets each, stored uncompressed."""
    with uproot.recreate(path, compression=None) as f:
        f.mktree("Events", {"MET_pt": np.float32, "Jet_pt": "var * float32"})
        start = 0
        for n in BASKETS:
            i = np.arange(start, start + n)
            jets = ak.values_astype(ak.Array([[float(k)] * (k % 3) for k in i]), np.float32)
            f["Events"].extend({"MET_pt": i.astype(np.float32), "Jet_pt": jets})
            start += n
    return path


def _lists(path: Path, branch: str) -> tuple[np.ndarray, np.ndarray]:
    b = uproot.open(path)["Events"][branch]
    return np.asarray(b.member("fBasketSeek")), np.asarray(b.member("fBasketBytes"))


def _patch(path: Path, old: bytes, new: bytes) -> None:
    data = path.read_bytes()
    assert data.count(old) == 1 and len(old) == len(new)
    path.write_bytes(data.replace(old, new))


def _seeks(values: np.ndarray) -> bytes:
    return struct.pack(f">{len(values)}q", *values)


def _import(path: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> tuple[int, str]:
    out = tmp_path / "out.arrow"
    rc = main(["import", str(path), "-o", str(out)])
    err = capsys.readouterr().err.strip()
    if rc:
        assert not out.exists()
        assert err.count("\n") == 0 and str(path) in err and "Traceback" not in err, err
    return rc, err


def test_a_healthy_tree_imports(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = _tree(tmp_path / "good.root")
    assert _import(path, tmp_path, capsys) == (0, "")
    assert read_source_meta(tmp_path / "out.arrow")["n_events"] == sum(BASKETS)


def test_a_seek_to_another_branchs_basket_is_refused(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture) -> None:
    path = _tree(tmp_path / "foreign.root")
    seeks, _ = _lists(path, "MET_pt")
    other, _ = _lists(path, "Jet_pt")
    damaged = seeks.copy()
    damaged[1] = other[1]
    _patch(path, _seeks(seeks), _seeks(damaged))
    rc, err = _import(path, tmp_path, capsys)
    assert rc == 2
    assert f"branch MET_pt basket 1 at seek {other[1]} belongs to branch Jet_pt" in err, err


def test_two_swapped_baskets_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Seeks and sizes swapped together: each basket is whole, but holds another's entries."""
    path = _tree(tmp_path / "swapped.root")
    seeks, sizes = _lists(path, "MET_pt")
    s2, b2 = seeks.copy(), sizes.copy()
    s2[[0, 1]], b2[[0, 1]] = seeks[[1, 0]], sizes[[1, 0]]
    _patch(path, _seeks(seeks), _seeks(s2))
    _patch(path, struct.pack(f">{len(sizes)}i", *sizes), struct.pack(f">{len(b2)}i", *b2))
    rc, err = _import(path, tmp_path, capsys)
    assert rc == 2 and "branch MET_pt basket 0" in err and "entries" in err, err


def test_a_huge_entry_count_is_refused_at_once(tmp_path: Path,
                                               capsys: pytest.CaptureFixture) -> None:
    path = _tree(tmp_path / "huge.root")
    f = uproot.open(path)
    at = f.key("Events").fSeekKey
    data = bytearray(path.read_bytes())
    first = data.index(struct.pack(">q", sum(BASKETS)), at)  # the TTree's fEntries: first
    data[first:first + 8] = struct.pack(">q", 10**15)
    path.write_bytes(bytes(data))
    rc, err = _import(path, tmp_path, capsys)
    assert rc == 2 and "declares 600 entries, the tree 1000000000000000" in err, err


def _row_groups(path: Path) -> Path:
    t = pa.table({"MET_pt": pa.array(np.arange(300, dtype=np.float32)),
                  "Jet_pt": pa.array([[float(k)] * (k % 3) for k in range(300)],
                                     type=pa.list_(pa.float32()))})
    pq.write_table(t, path, row_group_size=100)
    return path


# --- Parquet footers, rewritten: thrift's compact protocol, enough to move row groups --------

def _varint(b: bytes, i: int) -> tuple[int, int]:
    out = shift = 0
    while True:
        out |= (b[i] & 0x7F) << shift
        shift += 7
        i += 1
        if not b[i - 1] & 0x80:
            return out, i


def _skip(b: bytes, i: int, t: int) -> int:
    if t in (1, 2):
        return i
    if t == 3:
        return i + 1
    if t in (4, 5, 6):
        return _varint(b, i)[1]
    if t == 7:
        return i + 8
    if t == 8:
        n, i = _varint(b, i)
        return i + n
    if t in (9, 10):
        n, et, i = b[i] >> 4, b[i] & 15, i + 1
        if n == 15:
            n, i = _varint(b, i)
        for _ in range(n):
            i = i + 1 if et in (1, 2) else _skip(b, i, et)
        return i
    if t == 12:
        while b[i]:
            h, i = b[i], i + 1
            if not h >> 4:
                i = _varint(b, i)[1]
            i = _skip(b, i, h & 15)
        return i + 1
    raise AssertionError(f"thrift type {t}")


def _rewrite_row_groups(path: Path, order: list[int]) -> None:
    """The footer's row group list, its entries put in ``order`` (a repeat duplicates one)."""
    data = path.read_bytes()
    (n,) = struct.unpack("<i", data[-8:-4])
    footer = data[-8 - n:-8]
    i, field = 0, 0
    while True:
        h = footer[i]
        field, i = field + (h >> 4), i + 1
        if field == 4:  # row_groups: list<RowGroup>
            count, i = footer[i] >> 4, i + 1
            bounds = [i]
            for _ in range(count):
                bounds.append(_skip(footer, bounds[-1], 12))
            groups = [footer[a:b] for a, b in itertools.pairwise(bounds)]
            head = bytes([len(order) << 4 | footer[i - 1] & 15])
            new = footer[:i - 1] + head + b"".join(groups[k] for k in order) + \
                footer[bounds[-1]:]
            break
        i = _skip(footer, i, h & 15)
    path.write_bytes(data[:-8 - n] + new + struct.pack("<i", len(new)) + b"PAR1")


@pytest.mark.parametrize(("order", "relation"), [
    ([2, 1, 0], "row group 1 lies before row group 0 in the file (row groups reordered)"),
    ([0, 0, 2], "duplicated row group"),
])
def test_reordered_or_duplicated_row_groups_are_refused(order, relation, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture) -> None:
    path = _row_groups(tmp_path / "groups.parquet")
    check_parquet(path)
    _rewrite_row_groups(path, order)
    assert pq.read_metadata(path).num_row_groups == 3  # pyarrow takes it as it is
    rc, err = _import(path, tmp_path, capsys)
    assert rc == 2 and relation in err, err


def test_rows_summing_to_another_count_are_refused(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture) -> None:
    path = _row_groups(tmp_path / "dropped.parquet")
    _rewrite_row_groups(path, [0, 1])  # the file still declares 300 rows
    rc, err = _import(path, tmp_path, capsys)
    assert rc == 2 and "row groups hold 200 rows, the file declares 300" in err, err


def test_rntuple_pages_swapped_between_clusters_are_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Each cluster's page list names the other's page; their checksums made to match."""
    import xxhash

    path = tmp_path / "pages.root"
    with uproot.recreate(path, compression=None) as f:
        f.mkrntuple("Events", {"MET_pt": np.arange(300, dtype=np.float32)})
        f["Events"].extend({"MET_pt": np.arange(200, dtype=np.float32)})
    r = uproot.open(path)["Events"]
    envelopes = [g.page_list_link.locator for g in r.footer.cluster_group_records]
    pages = [struct.pack("<iiQ", pg.num_elements, pg.locator.num_bytes, pg.locator.offset)
             for pg in (cluster[0].pages[0] for cluster in r.page_link_list)]
    data = bytearray(path.read_bytes())
    for env, (mine, other) in zip(envelopes, [pages, pages[::-1]], strict=True):
        at = data.index(mine, env.offset)
        data[at:at + len(mine)] = other
        end = env.offset + env.num_bytes - 8
        data[end:end + 8] = struct.pack("<Q", xxhash.xxh3_64_intdigest(data[env.offset:end]))
    path.write_bytes(bytes(data))
    rc, err = _import(path, tmp_path, capsys)
    assert rc == 2 and "column 0 cluster 1 starts at element 300, its pages before end at " \
        "200 (damaged page lists)" in err, err


# --- chunks of values --------------------------------------------------------------------------

def test_offsets_that_decrease_are_refused() -> None:
    good = {"a": Column(np.zeros(3)), "b": Column(np.zeros(4), np.array([0, 2, 2, 4]))}
    assert check_chunk("x.root", good, ["a", "b"]) == 3
    bad = {"a": good["a"], "b": Column(np.zeros(4), np.array([0, 3, 2, 4]))}
    with pytest.raises(InputError, match=r"^x.root: branch b: offsets do not run from 0 up"):
        check_chunk("x.root", bad, ["a", "b"])


def test_branches_reading_other_entry_counts_are_refused() -> None:
    chunk = {"a": Column(np.zeros(3)), "b": Column(np.zeros(4), np.array([0, 2, 4]))}
    with pytest.raises(InputError, match="branch b read 2 entries where a read 3"):
        check_chunk("x.root", chunk, ["a", "b"])


@pytest.mark.skipif(not NANO.is_file(), reason=f"needs {NANO}")
def test_real_nanoaod_still_imports(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert _import(NANO, tmp_path, capsys)[0] == 0
    meta = read_source_meta(tmp_path / "out.arrow")
    assert meta["n_events"] == uproot.open(NANO)["Events"].num_entries
