"""One process reading a Parquet file's every column N times, single-threaded, row group by row
group and holding what it read until the read ends (as hepfmt's ``pyarrow`` reader does): each
read's wall time, its user and kernel CPU time and minor page faults, optionally after a pause,
through pyarrow's default memory pool or another one (``--pool``).

Why it exists: in the reference run pyarrow's all-branch read of the 200000-event zstd file took
2.7 s in one pair job and 4.5 s in another. This shows whether that is the file, what ran
before the read, or the read itself varying within one process; and, since the user CPU time
turned out constant and the kernel time not, how much of that the memory allocator decides
(docs/how-it-measures.md). The first read of the process is timed too: it is the
read a batch job pays. Usage::

    python tools/repeat_read.py FILE.parquet [--reads 10] [--pause-s 0] [--pool system]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time

import pyarrow as pa
import pyarrow.parquet as pq


def read(path: str) -> list:
    pf = pq.ParquetFile(path)
    names = pf.schema_arrow.names
    return [pf.read_row_group(i, columns=names, use_threads=False)
            for i in range(pf.metadata.num_row_groups)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file")
    ap.add_argument("--reads", type=int, default=10)
    ap.add_argument("--pause-s", type=float, default=0.0, help="sleep before each read")
    ap.add_argument("--pool", choices=["default", "system", "jemalloc", "mimalloc"],
                    default="default", help="pyarrow's memory pool for every read")
    a = ap.parse_args()
    if a.pool != "default":
        pa.set_memory_pool(getattr(pa, f"{a.pool}_memory_pool")())
    print(f"pool: {pa.default_memory_pool().backend_name}")
    times = []
    for i in range(a.reads + 1):  # read 0: the first of the process
        if i:
            time.sleep(a.pause_s)
        r0 = resource.getrusage(resource.RUSAGE_SELF)
        t0 = time.perf_counter()
        held = read(a.file)
        dt = time.perf_counter() - t0
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        del held
        if i:
            times.append(dt)
        print(f"read {i}: {dt:.2f} s, user {r1.ru_utime - r0.ru_utime:.2f} s, kernel "
              f"{r1.ru_stime - r0.ru_stime:.2f} s, {r1.ru_minflt - r0.ru_minflt} minor faults",
              flush=True)
    print(f"{a.reads} reads after the first, after a {a.pause_s:g}-s pause each: median "
          f"{statistics.median(times):.2f} s, min {min(times):.2f} s, max {max(times):.2f} s")


if __name__ == "__main__":
    main()
