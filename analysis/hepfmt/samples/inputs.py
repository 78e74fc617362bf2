"""Real files as they come: a TTree (written by ROOT or uproot), an RNTuple, or Parquet (a file
or a directory of files, flat and list columns as uproot/awkward/coffea write NanoAOD).

The kind is read from the content, not guessed from the name: a ROOT file starts with ``root``
and a Parquet file with ``PAR1``; inside a ROOT file, the class of the object under the tree
name says TTree or RNTuple. Every kind is read the same two ways: its columns (name, dtype,
flat or jagged, and the counter the file itself names, which TTree leaf lists and ROOT-written
RNTuples' cardinality fields do: :mod:`.rntuple`), and its events in chunks of bounded size as
flat numpy values plus offsets, so that a large file never needs to fit in memory.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property
from pathlib import Path

import numpy as np

from hepfmt.errors import InputError
from hepfmt.records import data_file
from hepfmt.samples import relations
from hepfmt.samples.rntuple import columns as rntuple_columns
from hepfmt.samples.schema import DTYPES, Field, Schema, schema_from_fields
from hepfmt.samples.source import Column, to_column

KINDS = ("ttree", "rntuple", "parquet")
#: Bytes of uncompressed data read per chunk.
STEP_BYTES = 100_000_000
#: Class names uproot reports for an RNTuple anchor (the pre-1.0 name included).
RNTUPLE_CLASSES = ("ROOT::RNTuple", "ROOT::Experimental::RNTuple")
MAGIC = {b"root": "root", b"PAR1": "parquet"}


def _magic(path: str) -> bytes:
    import fsspec

    try:
        with fsspec.open(path, "rb") as f:
            return f.read(4)
    except (OSError, ValueError, ImportError) as exc:  # ImportError: a protocol not installed
        raise InputError(path, f"cannot open ({exc})") from exc


def _parquet_files(path: str) -> list[str]:
    """The Parquet file itself, or a directory's Parquet files in name order (part files)."""
    if not Path(path).is_dir():
        return [path]
    files = sorted(str(p) for p in Path(path).iterdir()
                   if p.is_file() and not p.name.startswith((".", "_")))
    files = [f for f in files if _magic(f) == b"PAR1"]
    if not files:
        raise InputError(path, "a directory without Parquet files")
    return files


def _dtype_name(path: str, name: str, dtype: object) -> str:
    try:
        out = np.dtype(dtype).newbyteorder("=").name
    except TypeError:
        out = str(dtype)
    if out not in DTYPES:
        raise InputError(path, f"column {name}: unsupported type {dtype} (hepfmt reads "
                               "fixed-width numbers and booleans, flat or one list level)")
    return out


class Input:
    """An opened real file: its kind, its columns and its events in chunks."""

    kind: str

    def __init__(self, path: str, tree: str) -> None:
        self.path, self.tree = path, tree

    @property
    def label(self) -> str:
        """How schemas and models name their origin."""
        name = Path(str(self.path).rstrip("/")).name
        return name if self.kind == "parquet" else f"{name}:{self.tree}"

    @cached_property
    def fields(self) -> list[Field]:
        """The file's columns, in file order (read once)."""
        return self._read_fields()

    def _read_fields(self) -> list[Field]:
        raise NotImplementedError

    def chunks(self, names: list[str]) -> Iterator[dict[str, Column]]:
        """``names`` (columns of this file) chunk by chunk, offsets starting at 0."""
        raise NotImplementedError

    @property
    def num_entries(self) -> int:
        """Events in the file, from its metadata alone (no event is read)."""
        raise NotImplementedError

    @property
    def what(self) -> str:
        """How an error names what was read: ``TTree 'Events'``, ``Parquet table``."""
        return "Parquet table" if self.kind == "parquet" else \
            f"{'TTree' if self.kind == 'ttree' else 'RNTuple'} {self.tree!r}"

    def require_entries(self) -> int:
        """The entries, refused when there are none: an empty sample makes no file at any
        cluster size, and every later job would fail naming its own output, not this input."""
        n = self.num_entries
        if n == 0:
            raise InputError(self.path, f"{self.what} has no entries")
        return n


def _objects(tree: str, branch: object) -> str:
    """Why a tree of objects (EDM4hep, PHYSLITE, Delphes: a branch of a class, split into
    members) is not read: its first such branch by name and ROOT class, and what hepfmt reads;
    never the interpretation's repr (a memory address)."""
    cls = getattr(branch, "typename", None) or getattr(branch, "classname", None) or "?"
    return (f"tree {tree!r} holds objects, not a flat table: branch {branch.name} is a {cls}; "
            "hepfmt reads flat and jagged numeric branches (one number, or a list of numbers, "
            "per event), as NanoAOD's")


class RootInput(Input):
    """A TTree or an RNTuple, read by uproot (``root://`` works with ``fsspec-xrootd``)."""

    def __init__(self, path: str, tree: str, obj: object, kind: str) -> None:
        super().__init__(path, tree)
        self.obj, self.kind = obj, kind

    def _read_fields(self) -> list[Field]:
        return self._ttree_fields() if self.kind == "ttree" else self._rntuple_fields()

    @property
    def num_entries(self) -> int:
        return int(self.obj.num_entries)

    def _ttree_fields(self) -> list[Field]:
        out = []
        for b in self.obj.values():
            interp, counter = b.interpretation, None
            content = getattr(interp, "content", None)
            if content is not None:  # AsJagged
                if b.count_branch is None:
                    raise InputError(self.path, f"jagged branch {b.name} has no counter branch")
                counter, interp = b.count_branch.name, content
            dtype = getattr(interp, "to_dtype", None)
            if dtype is None or dtype.shape or dtype.names or dtype.kind not in "biuf":
                raise InputError(self.path, _objects(self.tree, b))
            out.append(Field(b.name, _dtype_name(self.path, b.name, dtype), content is not None,
                             counter))
        return out

    def _rntuple_fields(self) -> list[Field]:
        # from the header's field and column records: uproot's field objects (and awkward
        # forms) cost seconds in a wide RNTuple
        return [Field(*c) for c in rntuple_columns(self.path, self.obj)]

    def chunks(self, names: list[str]) -> Iterator[dict[str, Column]]:
        import awkward as ak

        for chunk in self.obj.iterate(names, step_size=STEP_BYTES, library="ak"):
            out = {}
            for name in names:
                arr = chunk[name]
                values = ak.to_numpy(ak.flatten(arr, axis=None))
                offsets = None
                if arr.ndim > 1:
                    offsets = np.zeros(len(arr) + 1, dtype=np.int64)
                    np.cumsum(ak.to_numpy(ak.num(arr)), out=offsets[1:])
                out[name] = Column(values, offsets)
            yield out


def plain_type(t: object) -> object:
    """``t`` with every Arrow extension type replaced by its storage type, at every list level:
    awkward writes ``ak:uint32`` and ``ak:list`` columns whose storage is plain (coffea reads
    them so), and any extension over a number or a list of numbers is that number or list."""
    import pyarrow as pa

    if isinstance(t, pa.ExtensionType):
        return plain_type(t.storage_type)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        make = pa.list_ if pa.types.is_list(t) else pa.large_list
        return make(pa.field(t.value_field.name, plain_type(t.value_type),
                             t.value_field.nullable))
    return t


def plain_array(arr: object) -> object:
    """An Arrow array's values under :func:`plain_type` (the same buffers, no copy)."""
    import pyarrow as pa

    if isinstance(arr, pa.ExtensionArray):
        return plain_array(arr.storage)
    if isinstance(arr, pa.ListArray | pa.LargeListArray) and (
            isinstance(arr.type.value_type, pa.ExtensionType)
            or plain_type(arr.type) != arr.type):
        return type(arr).from_arrays(arr.offsets, plain_array(arr.values),
                                     mask=arr.is_null() if arr.null_count else None)
    return arr


class ParquetInput(Input):
    """One Parquet file or a directory of them, read by pyarrow batch by batch."""

    kind = "parquet"

    def __init__(self, path: str, tree: str) -> None:
        import pyarrow.parquet as pq

        super().__init__(path, tree)
        self.files = _parquet_files(path)
        for f in self.files:
            if _local(f):
                relations.check_parquet(f)
        try:
            self.schema = pq.read_schema(self.files[0])
        except Exception as exc:  # pyarrow raises ArrowInvalid, OSError, ...
            raise InputError(self.files[0], f"not a readable Parquet file ({exc})") from exc

    @property
    def num_entries(self) -> int:
        import pyarrow.parquet as pq

        return sum(pq.read_metadata(f).num_rows for f in self.files)

    def _read_fields(self) -> list[Field]:
        import pyarrow as pa

        out = []
        for f in self.schema:
            t = plain_type(f.type)
            jagged = pa.types.is_list(t) or pa.types.is_large_list(t)
            leaf = t.value_type if jagged else t
            if not (pa.types.is_integer(leaf) or pa.types.is_floating(leaf)
                    or pa.types.is_boolean(leaf)):
                raise InputError(self.path, f"column {f.name}: unsupported type {t}")
            out.append(Field(f.name, _dtype_name(self.path, f.name, leaf.to_pandas_dtype()),
                             jagged))
        return out

    def chunks(self, names: list[str]) -> Iterator[dict[str, Column]]:
        import pyarrow.parquet as pq

        for path in self.files:
            try:
                pf = pq.ParquetFile(path)
                md = pf.metadata
                row_bytes = sum(md.row_group(i).total_byte_size
                                for i in range(md.num_row_groups)) / max(md.num_rows, 1)
                rows = max(1, int(STEP_BYTES / max(row_bytes, 1.0)))
                for batch in pf.iter_batches(batch_size=rows, columns=names):
                    out = {}
                    for name in names:
                        arr = plain_array(batch.column(name))
                        if arr.null_count or (hasattr(arr, "values") and arr.values.null_count):
                            raise InputError(path, f"column {name} holds nulls")
                        out[name] = to_column(arr)
                    yield out
            except InputError:
                raise
            except Exception as exc:  # pyarrow: a missing column, a schema that changed, ...
                raise InputError(path, f"cannot read Parquet ({exc})") from exc


def _local(path: str) -> bool:
    """Whether ``path`` is a local file, whose structure is checked before it is decoded (a
    remote one would cost a round trip per basket)."""
    return "://" not in path and Path(path).is_file()


def _checked(path: str, f: object, tree: str) -> tuple[str, object]:
    """The class and object under ``tree``, their declared structure checked first
    (:mod:`.relations`) when the file is local."""
    local = _local(path)
    if local:
        relations.check_key(path, f.key(tree), f.file.fBEGIN, f.file.fEND)
    classname = f.classname_of(tree)
    obj = f[tree]
    if local and classname == "TTree":
        relations.check_ttree(path, obj, f.file.fBEGIN, f.file.fEND)
    elif local and classname in RNTUPLE_CLASSES:
        relations.check_rntuple(path, obj)
    return classname, obj


def detect(path: str | Path) -> str:
    """``root`` or ``parquet``, from the first bytes (of a directory's first Parquet file)."""
    path = str(path)
    head = _magic(_parquet_files(path)[0]) if Path(path).is_dir() else _magic(path)
    if head not in MAGIC:
        raise InputError(path, f"neither a ROOT nor a Parquet file (first four bytes {head!r})")
    return MAGIC[head]


def _trees_held(f: object) -> str:
    """What a ROOT file holds that hepfmt could read, by name (for a ``--tree`` that is not
    there), never a Python repr."""
    try:
        names = sorted({k.split(";")[0] for k, c in f.classnames().items()
                        if c == "TTree" or c in RNTUPLE_CLASSES})
    except Exception:  # a directory that cannot be listed: the file is damaged
        return "its list of keys cannot be read"
    return (f"the file's trees are {', '.join(repr(n) for n in names)} (--tree names one)"
            if names else "the file holds no TTree or RNTuple")


def open_input(path: str | Path, tree: str = "Events") -> Input:
    """The file at ``path`` opened as what it holds; ``tree`` names the TTree or RNTuple of a
    ROOT file (Parquet has no name inside)."""
    path = str(path)
    data_file(path, "input file")  # a FIFO would hang its first read
    if detect(path) == "parquet":
        return ParquetInput(path, tree)
    import uproot

    try:
        f = uproot.open(path)
    except Exception as exc:  # uproot raises many types for unreadable files
        raise InputError(path, f"not a readable ROOT file ({exc})") from exc
    try:
        classname, obj = _checked(path, f, tree)
    except InputError:
        raise
    except Exception as exc:
        raise InputError(path, f"cannot open tree {tree!r}: {_trees_held(f)}") from exc
    if classname == "TTree":
        return RootInput(path, tree, obj, "ttree")
    if classname in RNTUPLE_CLASSES:
        return RootInput(path, tree, obj, "rntuple")
    raise InputError(path, f"{tree!r} is a {classname}, not a TTree or an RNTuple")


def extract_schema(path: str | Path | Input, tree: str = "Events") -> Schema:
    """Names, dtypes, counters of a TTree, an RNTuple or Parquet NanoAOD (see :mod:`.inputs`);
    ``path`` may be a file already opened with :func:`.inputs.open_input`."""
    inp = path if isinstance(path, Input) else open_input(path, tree)
    return schema_from_fields(inp.fields, inp.label)
