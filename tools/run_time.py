"""Where a run's time went: per rule, its jobs and their summed wall seconds (Snakemake's own
``benchmark:`` records), and the run's wall time from its newest Snakemake log.

    python tools/run_time.py RESULTS [--log .snakemake/log/<newest>.log] > notes/run-time.txt

Timing jobs (measure, pair) hold every core, so their sum is wall time; conversions run side
by side, so theirs is core time. The first line records the command, date, commit and CPU.
"""

from __future__ import annotations

import argparse
import re
import sys
from datetime import datetime
from pathlib import Path

STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$")


def _seconds(path: Path) -> float:
    lines = path.read_text().splitlines()
    return float(lines[-1].split("\t")[0]) if len(lines) > 1 else 0.0


def per_rule(results: Path) -> dict[str, tuple[int, float]]:
    out: dict[str, tuple[int, float]] = {}
    for p in sorted((results / "benchmarks").rglob("*.tsv")):
        rule = p.relative_to(results / "benchmarks").parts[0]
        n, s = out.get(rule, (0, 0.0))
        out[rule] = (n + 1, s + _seconds(p))
    return out


def wall(log: Path) -> float | None:
    stamps = [datetime.strptime(m.group(1), "%a %b %d %H:%M:%S %Y")
              for line in log.read_text().splitlines() if (m := STAMP.match(line.strip()))]
    return (stamps[-1] - stamps[0]).total_seconds() if len(stamps) > 1 else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", type=Path)
    ap.add_argument("--log", type=Path, help="the run's Snakemake log")
    a = ap.parse_args(argv)
    from hepfmt.provenance import stamp

    print(stamp(f"python tools/run_time.py {' '.join(sys.argv[1:])}"))
    if a.log and (w := wall(a.log)) is not None:
        print(f"Snakemake wall time (first to last job stamp of the log): {w / 60:.1f} min")
    print(f"{'rule':<12}{'jobs':>6}{'summed s':>12}")
    for rule, (n, s) in sorted(per_rule(a.results).items(), key=lambda kv: -kv[1][1]):
        print(f"{rule:<12}{n:>6}{s:>12.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
