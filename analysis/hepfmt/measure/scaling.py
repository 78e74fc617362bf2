"""How the distributed engines scale with workers: the tasks on one file, timed on a local Dask
cluster of 1 worker, then of 2, ... (one thread each), every answer checked against the reference.

A benchmark, not a measurement of the study: the cluster's workers share this machine with the
client and the scheduler, so the speed-up is bounded by the machine's cores and by whatever else
runs on it. That is why each cluster size's runs carry the share of the machine's CPU time other
processes used meanwhile (:mod:`.load`, the workers counted as this measurement's own).
"""

from __future__ import annotations

import os
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from hepfmt.measure import load
from hepfmt.queries import cluster as connection
from hepfmt.queries import engine
from hepfmt.queries import tasks as T
from hepfmt.queries.reference import compare, reference


@dataclass(frozen=True)
class Run:
    """One engine's tasks on a cluster of ``workers``: the median seconds per task, and the
    load other processes put on the machine while they were timed."""

    engine: str
    workers: int
    seconds: dict[int, float]  # task number -> median over the repetitions
    other_share: float
    loadavg: tuple[float, float, float]  # at the end of the runs


def bench(path: Path, source: Path, engines: list[str], workers: list[int], numbers: list[int],
          repetitions: int) -> list[Run]:
    """Per engine and cluster size, each task once untimed, then ``repetitions`` timed runs."""
    from distributed import LocalCluster

    tasks = T.select(numbers)
    expected = {t.number: reference(source, t) for t in tasks}
    runs = []
    for name in engines:
        module = engine(name).load()
        module.prepare()
        for n in workers:
            with LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                              dashboard_address=None) as cluster:
                module.connect(cluster.scheduler_address)
                own = ["self", *connection.client().run(os.getpid).values()]  # the workers
                seconds, first = {}, load.sample(own)
                for task in tasks:
                    compare(task, expected[task.number], module.run(path, [task]), name)
                    times = []
                    for _ in range(repetitions):
                        start = time.perf_counter()
                        got = module.run(path, [task])
                        times.append(time.perf_counter() - start)
                        compare(task, expected[task.number], got, name)
                    seconds[task.number] = statistics.median(times)
                share = load.other_share(first, load.sample(own))
                connection.close()
            runs.append(Run(name, n, seconds, share, os.getloadavg()))
    return runs


def report(runs: list[Run], n_events: int) -> str:
    """Per engine, a table of events/s per task and cluster size, the speed-up of each size over
    the first, and the load under it."""
    blocks = []
    for name in dict.fromkeys(r.engine for r in runs):
        mine = [r for r in runs if r.engine == name]
        base = mine[0]
        head = ["task", *(f"events/s, {r.workers} worker{'s' * (r.workers > 1)}" for r in mine),
                *(f"speed-up {r.workers}/{base.workers}" for r in mine[1:])]
        lines = [f"{name}", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        rows = [(str(t), {r.workers: r.seconds[t] for r in mine}) for t in base.seconds]
        rows.append((f"all {len(base.seconds)} (summed medians)",
                     {r.workers: sum(r.seconds.values()) for r in mine}))
        for label, s in rows:
            cells = [f"{n_events / s[r.workers]:,.0f}" for r in mine]
            cells += [f"{s[base.workers] / s[r.workers]:.2f}" for r in mine[1:]]
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        for r in mine:
            lines.append(f"{r.workers} worker{'s' * (r.workers > 1)}: other processes used "
                         f"{r.other_share:.0%} of the machine's CPU time during the runs; "
                         f"load average after them {r.loadavg[0]:.2f} {r.loadavg[1]:.2f} "
                         f"{r.loadavg[2]:.2f} on {os.cpu_count()} CPUs")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
