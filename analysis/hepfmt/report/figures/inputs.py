"""What a figure is drawn from: the tables its family needs, the provenance and the plan record.

Each table is read as ``tabulate`` wrote it and checked for the columns the figures rely on, so
a stale or foreign table is an error naming the file and the missing column, not a figure that
silently shows less.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from hepfmt.errors import InputError
from hepfmt.report import plan_record
from hepfmt.report import table_names as tn
from hepfmt.report.documents import read_provenance
from hepfmt.report.figures import family

#: Columns that are never a branch group or a read-time column, whatever their name.
NOT_GROUPS = {"format", "label", "adapter", "variant", "cluster_size", "kind"}


@dataclass(frozen=True)
class TableSpec:
    """The columns a figure relies on: text ones are read as strings (a selection named ``10``
    stays ``"10"``), numeric ones must parse as numbers; ``extra`` is a regex of further numeric
    columns whose names depend on the config (groups, selections)."""

    text: tuple[str, ...]
    numeric: tuple[str, ...]
    extra: str | None = None


TABLES = {
    tn.SIZE: TableSpec(("format", "variant"), ("cluster_size", "normalized_size_mean",
                                               "normalized_size_std", "n_samples")),
    tn.GROUPS: TableSpec(("format", "variant"), ("cluster_size",), extra=".+"),
    tn.READS: TableSpec(("format", "variant", "reader", "selection", "mode"),
                        ("cluster_size", "threads", "rss_over_baseline_mb", "peak_rss_mb")),
    tn.RATIOS: TableSpec(("pair", "ttree", "parquet", "quantity", "selection", "mode",
                          "cold_verified"),
                         ("threads", "cluster_size", "ratio_mean", "ratio_std", "n_samples"),
                         # intervals and the file length: tables from before them lack them
                         extra="ratio_lo|ratio_hi|coverage|file_events"),
    tn.FORMATS: TableSpec(("format", "variant"), ("cluster_size", "normalized_size_mean",
                                                  "normalized_size_std"),
                          extra=r".+_(cold|warm)_s|.+_warm_(time_to_first_event_s|"
                                r"events_per_s_steady)|rss_over_baseline_mb|peak_rss_mb|"
                                r"threads"),
    tn.QUERIES: TableSpec(("format", "variant", "engine", "mode", "question", "cold_verified"),
                         ("task", "cluster_size", "events_per_s_mean", "events_per_s_std")),
    tn.QUERY_RATIOS: TableSpec(("mode", "question", "root", "parquet", "interval_method",
                                 "cold_verified"),
                                ("task", "ratio_mean", "ratio_lo", "ratio_hi", "coverage",
                                 "n_over", "n_samples")),
    # a skipped profile or read is a row with its reason and no numbers
    tn.STORAGE: TableSpec(("sample", "format", "variant", "profile", "reader", "selection",
                          "status", "counted_by", "reason"),
                         ("cluster_size", "median_s", "page_cache_s", "storage_s",
                          "predicted_s", "requests", "bytes", "events_per_s")),
    tn.STORAGE_RATIOS: TableSpec(("profile", "selection", "root", "parquet"),
                                ("mean", "std", "n_samples")),
}


def read_table(path: str | Path, spec: TableSpec) -> pd.DataFrame:
    """A table as ``tabulate`` writes it; an empty one (nothing measured) is an empty frame."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "no such table (written by 'hepfmt tabulate')")
    try:
        df = pd.read_csv(path, comment="#", dtype={c: str for c in (*spec.text, "label")})
    except pd.errors.EmptyDataError:
        return pd.DataFrame({c: pd.Series(dtype=str) for c in spec.text}
                            | {c: pd.Series(dtype=float) for c in spec.numeric})
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        raise InputError(path, f"not a readable CSV table ({exc})") from exc
    missing = [c for c in (*spec.text, *spec.numeric) if c not in df]
    if missing:
        raise InputError(path, f"not a hepfmt {path.stem} table: no column "
                               f"{', '.join(repr(c) for c in missing)}")
    extra = [c for c in df.columns if spec.extra and c not in NOT_GROUPS | set(spec.text)
             and re.fullmatch(spec.extra, c)]
    for c in (*spec.numeric, *extra):
        try:
            df[c] = pd.to_numeric(df[c])
        except (ValueError, TypeError) as exc:
            raise InputError(path, f"column {c!r} is not numeric ({exc})") from exc
    return df


@dataclass(frozen=True)
class Inputs:
    tables: dict[str, pd.DataFrame]
    provenance: dict
    plan: dict
    config_name: str | None = None


def load_inputs(name: str, tables_dir: str | Path, provenance: str | Path, plan: str | Path,
                config_name: str | None = None) -> Inputs:
    tables = {t: read_table(Path(tables_dir) / f"{t}.csv", TABLES[t])
              for t in family(name).tables}
    return Inputs(tables, read_provenance(provenance), plan_record.load(plan), config_name)
