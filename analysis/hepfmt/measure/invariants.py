"""What every timed scan's marks must satisfy before a record holding them is written.

A read's parts (open, set-up, steady throughput: :func:`hepfmt.stats.parts`) are computed
from the marks a scan reports. A record whose marks cannot be (a first event before the file
was open, a chunk after the read ended, a rate no chunk supports) would print numbers that look
like results, so such a scan is an error naming the file and the reader, never a row.
"""

from __future__ import annotations

import itertools

from hepfmt.errors import VerificationError
from hepfmt.stats import parts

#: Clock slack: marks and the harness's clock are both ``perf_counter``, but a compiled loop's
#: own times are taken a few instructions away from the harness's.
SLACK_S = 1e-3


def violations(rep: dict, n_events: int) -> list[str]:
    """Every invariant one scan's record breaks (empty: none)."""
    out: list[str] = []
    wall = rep["wall_s"]
    opened = rep.get("opened_s")
    chunks = [tuple(c) for c in rep.get("chunks", [])]
    if rep.get("entries", n_events) != n_events:
        out.append(f"read {rep.get('entries')} entries of {n_events}")
    if opened is not None and not -SLACK_S <= opened <= wall + SLACK_S:
        out.append(f"open at {opened:.6g} s, outside the read (0 to {wall:.6g} s)")
    times = [t for _, t in chunks]
    entries = [n for n, _ in chunks]
    if any(b < a - SLACK_S for a, b in itertools.pairwise(times)):
        out.append("chunk marks out of time order")
    if any(b <= a for a, b in itertools.pairwise(entries)):
        out.append("chunk marks without progress in entries")
    if times and (times[-1] > wall + SLACK_S or times[0] < -SLACK_S):
        out.append(f"a chunk mark outside the read (0 to {wall:.6g} s)")
    if times and opened is not None and times[0] < opened - SLACK_S:
        out.append(f"the first chunk done ({times[0]:.6g} s) before the file was open "
                   f"({opened:.6g} s)")
    if entries and entries[-1] != n_events:
        out.append(f"the last chunk mark is at entry {entries[-1]}, the file has {n_events}")
    if out:
        return out
    p = parts(opened, chunks)
    rate = p["events_per_s_steady"]
    if rate is not None:
        if p["setup_s"] < 0:
            out.append(f"time to the first event ({(opened or 0.0) + p['setup_s']:.6g} s) "
                       f"before the open ({opened or 0.0:.6g} s)")
        after = (entries[-1] - entries[0]) / (times[-1] - times[0])
        if rate > after * (1 + 1e-9):
            out.append(f"steady throughput {rate:.6g} events/s above the events over the "
                       f"time after the first chunk ({after:.6g} events/s)")
    return out


def check(rep: dict, path: str, reader: str, n_events: int) -> None:
    """Raise a :class:`VerificationError` naming ``path`` and ``reader`` for the first broken
    invariant of one scan."""
    bad = violations(rep, n_events)
    if bad:
        raise VerificationError(path, f"{reader}'s timed scan broke an invariant: {bad[0]}")
