"""Which cluster size a one-size summary (the formats table, the read-time sections, the
memory figure) shows: where the most formats and readers were read, not merely the largest
size read. The default config reads only the pairings' two readers at 100000 events per
cluster, on a sample of its own; every reader of every format at 4000."""

from __future__ import annotations

import pandas as pd


def widest_read_cluster_size(reads: pd.DataFrame) -> int:
    """The cluster size with the most distinct formats × readers in ``reads`` (the largest of
    equals)."""
    counts = reads.groupby("cluster_size")[["format", "reader"]].apply(
        lambda g: len(g.drop_duplicates()))
    return int(max(counts.index, key=lambda n: (counts[n], n)))
