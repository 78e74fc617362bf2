"""How busy the machine was during a timing, less the measurement's own processes.

A read timed while another process competes for the CPUs is slower for a reason that has nothing
to do with the format, and a ratio whose two sides saw different load is wrong by that much. So
every paired repetition records the share of the machine's CPU time that *other* processes used
while it ran: the kernel's busy time over all CPUs (``/proc/stat``: user, nice, system, irq,
softirq and steal, which is time a hypervisor gave to another guest), less the CPU time of the
measurement's own processes (``/proc/<pid>/stat``), over the CPU time the machine had.

The kernel counts in clock ticks (``SC_CLK_TCK``, 100 per second), so a share taken over a 20 ms
read on 2 CPUs would have a resolution of 25%. A share is therefore taken over a *window* of at
least :data:`MIN_WINDOW_S`: the repetition and, where it is shorter, the repetitions just
before it (their load is the machine's too).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

#: The shortest stretch of time a load share is taken over (see the module docstring).
MIN_WINDOW_S = 0.25
TICKS_PER_S = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class CpuSample:
    """CPU ticks at one instant: the machine's busy and total ones, and the measurement's own."""

    at: float  # time.perf_counter()
    busy: int
    total: int
    own: int


def _machine_ticks() -> tuple[int, int]:
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    user, nice, system, idle, iowait, irq, softirq, steal = (fields + [0] * 8)[:8]
    busy = user + nice + system + irq + softirq + steal  # guest time is inside user already
    return busy, busy + idle + iowait


def process_ticks(pid: int | str = "self") -> int:
    """User + system ticks of one process, all its threads and the children it has waited for
    (a library's helper process is the measurement's own work too); 0 once it has gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0
    fields = text.rsplit(")", 1)[1].split()  # the name may hold spaces and parentheses
    return sum(int(x) for x in fields[11:15])  # utime, stime, cutime, cstime (stat's 14-17)


def sample(own: Iterable[int | str] = ("self",)) -> CpuSample:
    """The ticks now; ``own`` are the measurement's processes (the caller and its readers)."""
    busy, total = _machine_ticks()
    return CpuSample(time.perf_counter(), busy, total, sum(process_ticks(p) for p in own))


def other_share(before: CpuSample, after: CpuSample) -> float:
    """The share of the machine's CPU time other processes used from ``before`` to ``after``
    (0 to 1; 0 where no tick passed)."""
    total = after.total - before.total
    if total <= 0:
        return 0.0
    other = (after.busy - before.busy) - (after.own - before.own)
    return min(1.0, max(0.0, other / total))


def windowed(samples: Sequence[CpuSample]) -> tuple[float, float]:
    """(share, window in s) for the stretch that ends at ``samples[-1]``: from the latest
    sample at least :data:`MIN_WINDOW_S` before it (or the first sample)."""
    end = samples[-1]
    start = samples[0]
    for s in reversed(samples[:-1]):
        start = s
        if end.at - s.at >= MIN_WINDOW_S:
            break
    return other_share(start, end), end.at - start.at


def wait_quiet(own: Iterable[int | str], limit: float, patience_s: float
               ) -> tuple[float, float, CpuSample]:
    """Watch the machine, one window at a time, until other processes use at most ``limit`` of
    its CPUs, or ``patience_s`` have passed: (the last window's share, seconds waited, the
    sample that window started at: the history a following timing's load window may use).

    A job's first seconds are when its scheduler is busiest (Snakemake choosing the next jobs,
    writing its records): a timing that starts then would be discarded, and every retry with
    it, so a timing waits for the machine to be quiet first, and says how long it waited."""
    own = list(own)
    start = time.perf_counter()
    while True:
        before = sample(own)
        time.sleep(MIN_WINDOW_S)
        share = other_share(before, sample(own))
        waited = time.perf_counter() - start
        if share <= limit or waited >= patience_s:
            return share, waited, before
