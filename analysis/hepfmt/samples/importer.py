"""Real files as samples: a TTree, an RNTuple or Parquet NanoAOD (any flat/jagged table), local
or remote, copied into the source format so it is converted and measured exactly like a generated
sample.

The file is read in chunks (:mod:`.inputs`), so a large file never needs to fit in memory; the
schema (names, types, counters) comes from the file. Its declared structure is checked when it is
opened (:mod:`.relations`), and every chunk as it is read: each branch reads the chunk's entries,
offsets run from 0 up to the values' length, a jagged branch's lengths equal its counter's values
(every writer and reader relies on it), and the entries read add up to the entries declared.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa

from hepfmt.atomic import atomic_path
from hepfmt.errors import InputError
from hepfmt.samples.generate import arrow_schema
from hepfmt.samples.inputs import Input, extract_schema, open_input
from hepfmt.samples.relations import check_chunk
from hepfmt.samples.schema import Schema
from hepfmt.samples.source import Column, to_arrow


def read_events(inp: Input, schema: Schema) -> Iterator[dict[str, Column]]:
    """Every branch of ``schema`` chunk by chunk, as its dtype; counters the file lacks are
    made from the list lengths, the others are checked against them."""
    held = {f.name for f in inp.fields}
    counters = schema.counters()
    names = [n for n in schema.names if n in held]
    read = 0
    try:
        for chunk in inp.chunks(names):
            read += check_chunk(inp.path, chunk, names)
            for counter, members in counters.items():
                if counter not in held:
                    lengths = np.diff(chunk[members[0].name].offsets)
                    chunk[counter] = Column(lengths.astype(schema[counter].np_dtype))
                expected = chunk[counter].values
                for b in members:
                    bad = np.count_nonzero(np.diff(chunk[b.name].offsets) != expected)
                    if bad:
                        raise InputError(inp.path, f"branch {b.name} has other lengths than "
                                                   f"its counter {counter} ({bad} entries)")
            yield {b.name: Column(chunk[b.name].values.astype(b.np_dtype, copy=False),
                                  chunk[b.name].offsets) for b in schema.branches}
        if read != inp.num_entries:
            raise InputError(inp.path, f"read {read} entries, the {inp.what} declares "
                                       f"{inp.num_entries} (a damaged entry count)")
    except InputError:
        raise
    except Exception as exc:  # uproot and pyarrow raise many types for unreadable files
        raise InputError(inp.path, f"cannot read {inp.kind} {inp.label!r}: {exc}") from exc


def import_tree(path: str, tree: str, out: str | Path) -> Schema:
    """Copy every branch of the TTree or RNTuple ``tree`` (or of a Parquet file or directory)
    into an uncompressed Arrow IPC source, atomically; a file without entries is refused."""
    inp = open_input(path, tree)
    inp.require_entries()
    schema = extract_schema(inp)
    target = arrow_schema(schema)
    with atomic_path(out) as tmp, pa.OSFile(str(tmp), "wb") as sink, \
            pa.ipc.new_file(sink, target) as writer:
        for chunk in read_events(inp, schema):
            arrays = [to_arrow(b, chunk[b.name].values, chunk[b.name].offsets)
                      for b in schema.branches]
            writer.write_batch(pa.RecordBatch.from_arrays(arrays, schema=target))
    return schema
