"""One process reading a Parquet file's every column N times, single-threaded, row group by row
group and holding what it read until the read ends (as hepfmt's ``pyarrow`` reader does): each
read's wall time and minor page faults, optionally after a pause.

Why it exists: in the reference run pyarrow's all-branch read of the 200000-event zstd file took
2.7 s in one pair job and 4.5 s in another. This shows whether that is the file, what ran
before the read, or the read itself varying within one process. Usage::

    python tools/repeat_read.py FILE.parquet [--reads 10] [--pause-s 0]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time

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
    a = ap.parse_args()
    read(a.file)  # the first read of the process, untimed
    times = []
    for i in range(a.reads):
        time.sleep(a.pause_s)
        f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        t0 = time.perf_counter()
        held = read(a.file)
        dt = time.perf_counter() - t0
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0
        del held
        times.append(dt)
        print(f"read {i + 1}: {dt:.2f} s, {faults} minor faults", flush=True)
    print(f"{a.reads} reads after a {a.pause_s:g}-s pause each: median "
          f"{statistics.median(times):.2f} s, min {min(times):.2f} s, max {max(times):.2f} s")


if __name__ == "__main__":
    main()
