"""Print the headline pairings' reads taken apart, per sample: each side's wall, user, system
and waiting time and the read's own peak memory, first read and repeats, from a run's pair
records (issue 40's table, as hepfmt measures it).

    python tools/headline_split.py RESULTS [--cluster-size N] [--selection all] > notes.md

The pairs table (``tables/pairs.csv``) holds the same figures averaged over samples; this
keeps each sample apart. Its first line records the command, date, commit and CPU.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from hepfmt.provenance import git_commit

COLUMNS = {"median_s": "wall s", "user_s": "user s", "sys_s": "sys s", "wait_s": "waiting s"}


def rows(results: Path, cluster_size: int | None, selection: str) -> tuple[pd.DataFrame, str]:
    """One row per pair record side and read at ``cluster_size`` (default: the largest)."""
    out, cpus = [], set()
    for path in sorted((results / "pairs").rglob("*.json")):
        doc = json.loads(path.read_text())
        cpus.add(str(doc.get("provenance", {}).get("machine", {}).get("cpu", "unknown CPU")))
        for s in doc["summary"].get("sides", []):
            if s["selection"] != selection:
                continue
            out.append({"pairing": doc["pair"], "sample": doc["sample"],
                        "cluster size": doc["cluster_size"], "threads": doc["threads"],
                        "side": f"{s['format']} ({s['reader']})", "read": s["read"],
                        **{v: s.get(k) for k, v in COLUMNS.items()},
                        "read's own peak MB": (s.get("read_peak_rss_bytes") or 0) / 2**20})
    df = pd.DataFrame(out)
    if df.empty:
        return df, ", ".join(sorted(cpus))
    n = cluster_size or int(df["cluster size"].max())
    df = df[df["cluster size"] == n].sort_values(["pairing", "sample", "side", "read"])
    return df, ", ".join(sorted(cpus))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", type=Path, help="a run's results directory")
    ap.add_argument("--cluster-size", type=int, help="default: the largest paired")
    ap.add_argument("--selection", default="all")
    a = ap.parse_args(argv)
    df, cpus = rows(a.results, a.cluster_size, a.selection)
    stamp = datetime.now(UTC).strftime("%Y-%m-%d")
    print(f"<!-- python tools/headline_split.py {' '.join(sys.argv[1:])} | {stamp} | commit "
          f"{git_commit()} | CPU: {cpus} -->")
    if df.empty:
        print("No pair record at that cluster size and selection.")
        return 1
    print(df.to_markdown(index=False, floatfmt=".3g"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
