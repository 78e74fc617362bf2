"""What the harness adds to a read: its timed scan next to the bare library call a user would
make on the same file, in one fresh process per reader, alternating so that both see the same
machine.

The bare calls (:attr:`Reader.bare`) are written in each adapter apart from its reader, as a
user would write them from the library's documentation; a reader whose timed scan costs more
than a few percent over its bare call measures hepfmt, not the library.
"""

from __future__ import annotations

import numpy as np

from hepfmt import formats
from hepfmt.formats.base import Marks
from hepfmt.measure import isolated
from hepfmt.measure.reads import ReadSpec, timed_scan
from hepfmt.measure.timing import Stopping, interleaved, timed
from hepfmt.samples.source import read_source_meta, schema_of

#: The overhead the harness may add to a read, as a fraction of the bare call.
TARGET = 0.03

def compare(path: str, source: str, adapter: str, reader: str, branches: list[str],
            runs: int, threads: int = 1) -> dict:
    """In this process: the harness's timed scan and the bare call, ``runs`` times each,
    alternating, warm (after one untimed call of each); medians and the overhead."""
    r = formats.get(adapter).readers[reader]
    if r.bare is None:
        raise KeyError(f"no bare call for {adapter}/{reader}")
    bare = r.bare
    n_events = int(read_source_meta(source)["n_events"])
    spec = ReadSpec(path, source, adapter, reader, "bench", branches, ["warm"], runs, threads,
                    n_events=n_events)
    r.prepare(threads)
    r.scan(path, branches, threads, Marks())
    bare(path, branches, threads)

    def plain() -> dict:
        with timed() as clock:  # as the harness times a scan
            data = bare(path, branches, threads)
        del data  # freed after the clock stopped, as the harness frees a scan's
        return {"wall_s": clock.wall_s}

    reps, _ = interleaved({"harness": lambda: timed_scan(r, spec), "bare": plain},
                          Stopping.exactly(runs))
    h, b = (float(np.median([x["wall_s"] for x in reps[k]])) for k in ("harness", "bare"))
    return {"reader": reader, "harness_s": h, "bare_s": b, "overhead": h / b - 1, "runs": runs}


def bench(path: str, source: str, adapter: str, readers: list[str],
          selections: dict[str, list[str] | str], runs: int, threads: int = 1,
          timeout: float = 3600.0) -> list[dict]:
    """:func:`compare` for every reader and selection, each in a fresh process."""
    names = schema_of(read_source_meta(source)).names
    rows = []
    for reader in readers:
        for sel_name, sel in selections.items():
            branches = names if sel == "*" else list(sel)
            row = isolated.call("hepfmt.measure.overhead:compare", {
                "path": str(path), "source": str(source), "adapter": adapter,
                "reader": reader, "branches": branches, "runs": runs, "threads": threads},
                path, f"{reader}/{sel_name} overhead bench", timeout,
                data_bytes=read_source_meta(source)["naive_bytes"])
            rows.append({**row, "selection": sel_name})
    return rows


def report(rows: list[dict], adapter: str) -> str:
    """The rows as a plain-text table, each overhead against :data:`TARGET`."""
    lines = [f"{'format':8} {'reader':12} {'selection':9} {'harness ms':>11} {'bare ms':>9} "
             f"{'overhead':>9}  runs"]
    for r in rows:
        verdict = "ok" if r["overhead"] <= TARGET else f"over {TARGET:.0%}"
        lines.append(f"{adapter:8} {r['reader']:12} {r['selection']:9} "
                     f"{r['harness_s'] * 1e3:11.2f} {r['bare_s'] * 1e3:9.2f} "
                     f"{r['overhead']:+9.1%}  {r['runs']}  {verdict}")
    return "\n".join(lines)
