"""Real files as samples: a flat/jagged TTree (NanoAOD or any such tree), local or remote,
copied into the source format so it is converted and measured exactly like a generated sample.

uproot reads it in chunks (``root://`` URLs work when ``fsspec-xrootd`` is installed), so a large
file never needs to fit in memory; the schema (names, types, counters) comes from the file.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa

from analysis.atomic import atomic_path
from analysis.errors import InputError
from analysis.samples.generate import arrow_schema
from analysis.samples.schema import Schema, extract_schema
from analysis.samples.source import to_arrow

#: Bytes of the tree uproot decompresses per chunk.
STEP = "100 MB"


def import_tree(path: str, tree: str, out: str | Path) -> Schema:
    """Copy every branch of ``tree`` into an uncompressed Arrow IPC source, atomically."""
    import awkward as ak
    import uproot

    schema = extract_schema(path, tree)
    target = arrow_schema(schema)
    try:
        with atomic_path(out) as tmp, pa.OSFile(str(tmp), "wb") as sink, \
                pa.ipc.new_file(sink, target) as writer:
            for chunk in uproot.open(path)[tree].iterate(schema.names, step_size=STEP,
                                                         library="ak"):
                arrays = []
                for b in schema.branches:
                    arr = chunk[b.name]
                    values = ak.to_numpy(ak.flatten(arr, axis=None)).astype(b.np_dtype)
                    offsets = None
                    if b.jagged:
                        offsets = np.zeros(len(arr) + 1, dtype=np.int64)
                        np.cumsum(ak.to_numpy(ak.num(arr)), out=offsets[1:])
                    arrays.append(to_arrow(b, values, offsets))
                writer.write_batch(pa.RecordBatch.from_arrays(arrays, schema=target))
    except InputError:
        raise
    except Exception as exc:  # uproot raises many types for unreadable files
        raise InputError(path, f"cannot read tree {tree!r}: {exc}") from exc
    return schema
