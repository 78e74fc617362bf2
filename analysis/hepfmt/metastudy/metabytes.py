"""How much metadata a file has, and what its metadata says, read back from the file itself.

"Metadata" is what a reader must fetch and decode before it can read any value:

* Parquet: the Thrift footer (``FileMetaData``: schema, row groups, column chunks with their
  statistics). The page index (column + offset indexes, written before the footer) is read only
  by readers that prune pages, so it is counted apart, as ``page_index_bytes``; pyarrow reports
  neither its offset nor its length, so it is measured as the gap between the end of the last
  column chunk and the footer (zero when there is no page index, which the tests check).
* TTree: the tree's key (the ``TTree`` object with every ``TBranch``, its baskets' sizes, entries
  and seek positions), compressed on disk; the ``StreamerInfo`` and the directory's key list,
  read by every ``TFile`` open, are reported as parts.
* RNTuple: header + footer + page lists (of every cluster group), compressed on disk, and their
  uncompressed lengths.

``metadata_bytes`` is the on-disk (compressed) count, ``metadata_bytes_uncompressed`` what the
decoder parses after decompression (equal for Parquet, whose footer is never compressed).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from hepfmt.errors import InputError
from hepfmt.formats.root.backend import TREE, root


def parquet(path: str | Path) -> dict:
    try:
        md = pq.ParquetFile(str(path)).metadata
    except (OSError, pa.ArrowException) as exc:
        raise InputError(path, f"not a readable Parquet file ({exc})") from exc
    groups = [md.row_group(i).num_rows for i in range(md.num_row_groups)]
    sampled = [md.row_group(i) for i in {0, md.num_row_groups - 1}] if groups else []
    chunks = [rg.column(j) for rg in sampled for j in range(rg.num_columns)]
    # An offset index is written for every chunk with the page index; a column index only where
    # min/max exist (not for an all-NaN column), so the offset index is what tells the level.
    if chunks and all(c.has_offset_index for c in chunks):
        stats = "page"
    elif chunks and all(c.is_stats_set for c in chunks):
        stats = "chunk"
    elif not any(c.is_stats_set or c.has_column_index for c in chunks):
        stats = "none"
    else:
        stats = "mixed"
    last = sampled[-1] if sampled else None
    data_end = max((min(c.dictionary_page_offset or c.data_page_offset, c.data_page_offset)
                    + c.total_compressed_size for c in
                    (last.column(j) for j in range(last.num_columns))), default=4) \
        if last is not None else 4
    file_bytes = Path(path).stat().st_size
    footer = md.serialized_size
    return {"columns": md.num_columns, "groups": groups, "stats": stats,
            "metadata_bytes": footer, "metadata_bytes_uncompressed": footer,
            "page_index_bytes": file_bytes - 8 - footer - data_end,
            "parts": {"footer": footer}}


@contextmanager
def _root_object(path: str | Path, classname: str) -> Iterator[tuple[object, object]]:
    """The open file and the key of its ``Events`` object, which must be a ``classname``."""
    from hepfmt.formats.root.backend import open_file

    f = open_file(path)
    try:
        key = f.GetKey(TREE)
        if not key or key.GetClassName() != classname:
            raise InputError(path, f"no {classname} named {TREE!r}")
        yield f, key
    finally:
        f.Close()


def ttree(path: str | Path) -> dict:
    from hepfmt.formats.root.ttree import describe

    layout = describe(Path(path))
    with _root_object(path, "TTree") as (f, key):
        return {"columns": layout.branches, "groups": layout.clusters,
                "stats": None, "metadata_bytes": int(key.GetNbytes()),
                "metadata_bytes_uncompressed": int(key.GetKeylen() + key.GetObjlen()),
                "page_index_bytes": 0,
                "parts": {"ttree_key": int(key.GetNbytes()),
                          "streamer_info": int(f.GetNbytesInfo()),
                          "keys_list": int(f.GetNbytesKeys())}}


def rntuple(path: str | Path) -> dict:
    ROOT = root()

    with _root_object(path, "ROOT::RNTuple") as (f, _):
        anchor = f.Get(TREE)
        try:
            desc = ROOT.RNTupleReader.Open(anchor).GetDescriptor().Clone()
        except Exception as exc:  # cppyy turns ROOT's exceptions into Python ones
            raise InputError(path, f"ROOT could not read its RNTuple ({exc})") from exc
        top = desc.GetFieldDescriptor(desc.GetFieldZeroId()).GetLinkIds().size()
        clusters = sorted((c.GetFirstEntryIndex(), c.GetNEntries())
                          for c in desc.GetClusterIterable())
        lists = [(cg.GetPageListLocator().GetNBytesOnStorage(), cg.GetPageListLength())
                 for cg in desc.GetClusterGroupIterable()]
        stored = {"header": int(anchor.GetNBytesHeader()), "footer": int(anchor.GetNBytesFooter()),
                  "page_lists": int(sum(s for s, _ in lists))}
        length = int(anchor.GetLenHeader() + anchor.GetLenFooter() + sum(n for _, n in lists))
    return {"columns": int(top), "groups": [int(n) for _, n in clusters], "stats": None,
            "metadata_bytes": sum(stored.values()), "metadata_bytes_uncompressed": length,
            "page_index_bytes": 0, "parts": stored}


READERS = {"parquet": parquet, "ttree": ttree, "rntuple": rntuple}


def describe(path: str | Path, fmt: str) -> dict:
    """Columns, row groups / clusters (rows each), statistics level and metadata bytes."""
    if not Path(path).exists():
        raise InputError(path, "file does not exist")
    return READERS[fmt](path)
