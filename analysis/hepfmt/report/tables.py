"""Tables in the shape of the 2018 study, from size records, read measurements and paired
ROOT / Parquet measurements; every document's table headings name the CPU models their numbers
were measured on.

* ``size``: normalised size (file bytes / naive bytes), mean ± std over samples, per format ×
  variant × cluster size;
* ``reads``: read time per format × variant × reader × selection × cache mode (per sample the
  median of the repetitions; across samples mean ± std), with MB/s and events/s, and the parts
  of a read: open, set-up (time to the first event) and steady throughput, each saying how it
  was found (:func:`.steady.steady_throughput`);
* ``ratios``: ROOT / Parquet ratios per pairing, cluster size, selection and threads: size
  (from the size records), and from paired measurements only (``hepfmt pair``: both files read
  in one measurement, so that the ratio is never taken between two jobs minutes apart) rate
  (whole read), steady throughput and whole-file time at ``compare.file_events`` events, each for
  the first read in a fresh process and for the repeated reads apart (``read``); per sample the
  median of per-pair ratios with its order-statistic interval and the coverage its pairs give,
  over samples the mean with a Student-t interval; the reader of each side, the pairs kept and
  discarded for load;
* ``pairs``: each side of every paired measurement, first read and repeats apart: its time with
  interval, events/s, open, set-up, steady events/s, CPU and its split (user, system, waiting),
  minor and major page faults, the read's own peak memory; ``ratios``' ``rate`` rows carry the
  whole read's ratio in CPU and in user time beside it (:mod:`.ratios`);
* ``repetitions``: every timed repetition (wall, user, system and waiting time, page faults,
  the scan's own peak memory: :func:`hepfmt.measure.reads.timed_scan`), for anyone who wants
  other statistics;
* ``groups``: compressed bytes per event of each branch group;
* ``formats``: one row per format × variant × reader at the largest measured cluster size:
  normalised size, warm and cold read time per selection and the reader's peak memory, the
  table a user picks a format from;
* ``samples``: every sample apart, real (imported) ones marked: normalised size per format ×
  variant × cluster size, and the branches each selection read in it.

A mean over samples of different kinds (real NanoAOD and synthetic samples) describes neither,
so a study with both tabulates each kind apart (a ``kind`` column first) unless its config asks
to mix them (``tabulate.mix_kinds``).

Formats are the config's names (``ttree_nooffsets``); ``adapter`` and ``label`` columns, from the
plan record, say what each one is. A cold figure whose eviction was not verified by mincore has
a false ``cold_verified`` column (and a † in the documents, see :mod:`.sections`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from hepfmt.atomic import write_json
from hepfmt.errors import InputError
from hepfmt.report import plan_record, sections
from hepfmt.report.documents import (
    cpus_of,
    merged_provenance,
    provenance_lines,
    write_csv,
    write_doc,
)
from hepfmt.report.frames import (
    BOUND_COLUMNS,
    KEYS,
    KINDS,
    READ_KEYS,
    all_verified,
    any_flag,
    joined,
    kind_of,
    mean_std,
    with_labels,
    with_whole_fraction,
)
from hepfmt.report.grid import widest_read_cluster_size
from hepfmt.report.load import load_pairs, load_reads, load_sizes
from hepfmt.report.ratios import RATIO_KEYS, pair_table, ratio_table
from hepfmt.report.steady import resolved_reads
from hepfmt.report.table_names import (
    FORMATS,
    GROUPS,
    PAIRS,
    RATIOS,
    READS,
    REPETITIONS,
    SAMPLES,
    SIZE,
    SUMMARIES,
)
from hepfmt.stats import (
    ns_per_value,
)


def size_table(sizes: pd.DataFrame) -> pd.DataFrame:
    t = mean_std(sizes, KEYS, "normalized_size")
    if sizes["normalized_size_no_triggers"].notna().any():
        nt = mean_std(sizes, KEYS, "normalized_size_no_triggers").drop(columns="n_samples")
        t = t.merge(nt, on=KEYS)
    return t


def group_table(sizes: pd.DataFrame) -> pd.DataFrame:
    """Where the bytes go: mean compressed bytes per event of each branch group."""
    cols = [c for c in sizes.columns if c.startswith("zip_bytes:")]
    per_event = sizes[cols].div(sizes["n_events"], axis=0)
    per_event.columns = [c.split(":", 1)[1] for c in cols]
    d = pd.concat([sizes[KEYS], per_event], axis=1)
    return d.groupby(KEYS, sort=True).mean().reset_index()


#: A read's CPU split (per sample the medians of its repetitions; empty in a record from
#: before it).
CPU_SPLIT = ("user_median_s", "sys_median_s", "wait_median_s", "majflt_median")


def read_table(reads: pd.DataFrame) -> pd.DataFrame:
    """Per format × variant × cluster size × reader × threads × selection × mode: the time
    (mean ± std over samples of per-sample medians) and the parts of the read. Per sample the
    median's order-statistic interval [``median_lo_s``, ``median_hi_s``]; over samples the mean
    of each bound, with the smallest ``median_coverage`` (below 95% when a sample had fewer
    than 6 repetitions)."""
    reads = resolved_reads(reads)  # a record from before a column: hepfmt.records.ReadRow
    for col in ("minflt_median", "first_read_s", "selection_values", *CPU_SPLIT,
                *BOUND_COLUMNS):  # NaN: none (or a record from before)
        reads = reads.assign(**{col: pd.to_numeric(reads[col]) if col in reads else np.nan})
    reads = with_whole_fraction(reads).assign(ns_per_value=[
        ns_per_value(r, v, n) if pd.notna(r) and pd.notna(v) else np.nan
        for r, v, n in zip(reads.events_per_s_steady, reads.selection_values, reads.n_events,
                           strict=True)])
    t = mean_std(reads, READ_KEYS, "median_s")
    extra = reads.groupby(READ_KEYS).agg(
        iqr_s_mean=("iqr_s", "mean"), repetitions=("n", "min"),
        mb_per_s_compressed=("mb_per_s_compressed", "mean"),
        mb_per_s_naive=("mb_per_s_naive", "mean"), events_per_s=("events_per_s", "mean"),
        peak_rss_mb=("peak_rss_bytes", lambda x: x.max() / 2**20),
        rss_over_baseline_mb=("rss_over_baseline_bytes", lambda x: x.max() / 2**20),
        # a lower bound anywhere makes the figure one: say so in the table
        rss_exact=("rss_method", lambda x: bool((x == "vmhwm-reset").all())),
        cpu_s_mean=("cpu_median_s", "mean"),
        # where the time went: user (decoding), system (kernel: faults, allocator) and
        # neither (waiting; single-threaded reads only, hepfmt.measure.reads.usage_split)
        user_s_mean=("user_median_s", "mean"), sys_s_mean=("sys_median_s", "mean"),
        wait_s_mean=("wait_median_s", "mean"),
        minflt=("minflt_median", "mean"),  # minor page faults of a read: its fresh memory
        majflt=("majflt_median", "mean"),  # major: pages read from disk
        # the process's first read (the smallest selection's, warm; reads.py ``_prime``)
        first_read_s=("first_read_s", "mean"),
        disk_read_bytes=("disk_read_bytes_median", "mean"),
        cold_verified=("cold_verified", all_verified),
        **{c: (c, "mean") for c in ("open_s", "setup_s", "time_to_first_event_s",
                                    "events_per_s_steady", "mb_per_s_steady_compressed",
                                    "mb_per_s_steady_naive", "median_lo_s", "median_hi_s",
                                    "ns_per_value", *BOUND_COLUMNS)},
        median_coverage=("median_coverage", "min"),
        throughput_method=("throughput_method", joined),
        fit_residual_s=("fit_residual_s", "max"), fit_poor=("fit_poor", any_flag),
    ).reset_index()
    return t.merge(extra, on=READ_KEYS)


#: The parts of a warm read that ``formats`` shows per selection, as ``<selection>_warm_<part>``:
#: what a short file and a long file each cost (a name not ending in ``_warm_s``, which is a
#: read time).
FORMAT_PARTS = ("time_to_first_event_s", "events_per_s_steady", "ns_per_value", "first_read_s",
                "fraction_of_bound_new", "fraction_of_bound_reused", "fraction_of_bound_whole")


def _warm_parts(rows: pd.DataFrame) -> pd.DataFrame:
    """Per format × variant × reader × threads: each selection's warm time to the first event
    and steady throughput."""
    index = ["format", "variant", "reader", "threads"]
    warm = rows[rows["mode"] == "warm"]
    if warm.empty:
        return pd.DataFrame(index=pd.MultiIndex.from_frame(rows[index].drop_duplicates()))
    wide = warm.pivot_table(index=index, columns="selection", values=list(FORMAT_PARTS),
                            aggfunc="first", dropna=False)[list(FORMAT_PARTS)]
    wide.columns = [f"{sel}_warm_{part}" for part, sel in wide.columns]
    return wide


def format_table(st: pd.DataFrame, rt: pd.DataFrame) -> pd.DataFrame:
    """One row per format × variant × reader × threads at the cluster size where the most
    formats and readers were read (:func:`widest_read_cluster_size`; the largest written one if
    none were): normalised size, the read time of each selection and cache mode, each
    selection's warm time to the first event and steady throughput, and the reader's peak
    memory over its post-import baseline.
    """
    if rt.empty:
        largest = st.cluster_size.max()
        return st[st.cluster_size == largest].reset_index(drop=True)
    largest = widest_read_cluster_size(rt)
    rows = rt[rt.cluster_size == largest]
    wide = rows.pivot_table(index=["format", "variant", "reader", "threads"],
                            columns=["selection", "mode"], values="median_s_mean",
                            aggfunc="first")
    wide.columns = [f"{sel}_{mode}_s" for sel, mode in wide.columns]
    rss = rows.groupby(["format", "variant", "reader", "threads"]).agg(
        rss_over_baseline_mb=("rss_over_baseline_mb", "max"), peak_rss_mb=("peak_rss_mb", "max"),
        rss_exact=("rss_exact", "all"), cold_verified=("cold_verified", all_verified))
    sizes = st[st.cluster_size == largest][["format", "variant", "cluster_size",
                                            "normalized_size_mean", "normalized_size_std",
                                            "n_samples"]]
    return sizes.merge(wide.join(_warm_parts(rows)).join(rss).reset_index(),
                       on=["format", "variant"], how="left")


def sample_table(sizes: pd.DataFrame) -> pd.DataFrame:
    """One row per sample × format × variant × cluster size: nothing averaged."""
    cols = ["sample", "kind", "process", *KEYS, "n_events", "file_bytes", "naive_bytes",
            "normalized_size", "normalized_size_no_triggers"]
    return (sizes.assign(kind=kind_of(sizes.process))[cols]
            .sort_values([*KEYS, "sample"]).reset_index(drop=True))


def _summaries(plan: dict, sizes: pd.DataFrame, reads: pd.DataFrame, pair_ratios: pd.DataFrame,
               pair_sides: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The tables that average over samples: the timed ones once per CPU model
    (:func:`_per_cpu`), sizes (the same bytes on every CPU) over all."""
    st = size_table(sizes)
    reads = resolved_reads(reads)  # once, within the samples averaged together
    parts = [_timed(plan, sizes, st, *rows) for rows in _per_cpu(reads, pair_ratios,
                                                                  pair_sides)]
    timed = {name: pd.concat([p[name] for p in parts if not p[name].empty] or [parts[0][name]],
                             ignore_index=True) for name in parts[0]}
    if len(parts) > 1:  # every part's ratios hold the same size rows: once
        r = timed[RATIOS]
        timed[RATIOS] = r[~((r.quantity == "size") & r.duplicated(RATIO_KEYS))]
    return {SIZE: st, GROUPS: group_table(sizes), **timed}


def _timed(plan: dict, sizes: pd.DataFrame, st: pd.DataFrame, reads: pd.DataFrame,
           pair_ratios: pd.DataFrame, pair_sides: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The tables of timed reads, of one CPU model's measurements (each row names it)."""
    cpu = _one_cpu(reads, pair_ratios, pair_sides)
    rt = read_table(reads) if not reads.empty else pd.DataFrame()
    if not rt.empty and cpu:
        rt = rt.assign(cpu=cpu)
    return {READS: rt, RATIOS: ratio_table(plan, sizes, pair_ratios),
            PAIRS: pair_table(pair_sides), FORMATS: format_table(st, rt)}


def _one_cpu(*frames: pd.DataFrame) -> str:
    cpus = {c for d in frames if not d.empty and "cpu" in d for c in d.cpu.dropna()}
    return cpus.pop() if len(cpus) == 1 else ""


def _per_cpu(*frames: pd.DataFrame) -> list[tuple[pd.DataFrame, ...]]:
    """The timed rows (reads, pair ratios, pair sides) split by the CPU model they were measured
    on: a ratio or an interval over samples is never taken over two CPU models (event-loop
    ratios differ between CPU models far beyond their intervals), so a directory holding two is
    tabulated once per model, each row naming its own. One model (or none recorded): as
    they are."""
    cpus = sorted({c for d in frames if not d.empty and "cpu" in d for c in d.cpu.dropna()})
    if len(cpus) < 2:
        return [frames]
    return [tuple(d[d.cpu == c] if not d.empty and "cpu" in d else d for d in frames)
            for c in cpus]


def _of_kind(df: pd.DataFrame, kind: str) -> pd.DataFrame:
    return df[kind_of(df.process) == kind] if not df.empty else df


def summaries(plan: dict, sizes: pd.DataFrame, reads: pd.DataFrame,
              pair_ratios: pd.DataFrame | None = None,
              pair_sides: pd.DataFrame | None = None) -> dict[str, pd.DataFrame]:
    """:func:`_summaries` over every sample, or, for a study of real and synthetic samples that
    does not ask to mix them, over each kind apart, a ``kind`` column first. ``pair_ratios``
    and ``pair_sides``: :func:`.load.load_pairs`' rows (none: no read ratios)."""
    rows = [reads, *(d if d is not None else pd.DataFrame() for d in (pair_ratios, pair_sides))]
    kinds = kind_of(sizes.process)
    if plan_record.mix_kinds(plan) or kinds.nunique() < 2:
        return _summaries(plan, sizes, *rows)
    parts: dict[str, list[pd.DataFrame]] = {}
    for kind in KINDS:
        mine = _summaries(plan, sizes[kinds == kind], *(_of_kind(d, kind) for d in rows))
        for name, df in mine.items():
            if not df.empty:
                parts.setdefault(name, []).append(df.assign(kind=kind))
    return {name: (pd.concat(parts[name], ignore_index=True)[
                ["kind", *(c for c in parts[name][0].columns if c != "kind")]]
                   if name in parts else pd.DataFrame())
            for name in SUMMARIES}


RATIOS_TITLE = ("ROOT / Parquet ratios (reads: paired measurements, both files in one; per "
                "sample the median of per-pair ratios, over samples the mean)")


def rewrite_ratio_document(tables: str | Path) -> None:
    """``ratios.md`` (and its HTML twin) again from ``ratios.csv`` and its provenance lines:
    how a committed reference's document follows a change in how ratios are shown (their
    direction) without re-measuring; the CSV is the record and stays as it is."""
    csv = Path(tables) / f"{RATIOS}.csv"
    lines = [ln[2:] for ln in csv.read_text().splitlines() if ln.startswith("# ")]
    ratios = pd.read_csv(csv, comment="#")
    cpus = sorted({c for v in ratios.cpu.dropna() for c in str(v).split("; ")})
    write_doc(RATIOS_TITLE, sections.per_kind(sections.ratio_sections, ratios),
              Path(tables) / f"{RATIOS}.md", lines, cpus)


def tabulate(plan: dict, size_files: Iterable[str | Path], read_files: Iterable[str | Path],
             out_dir: str | Path, provenance_path: str | Path | None = None,
             pair_files: Iterable[str | Path] = ()) -> dict:
    """Every table of the study from its size records, read measurements and paired
    measurements (the ratios' reads), as CSV and (six of them) as Markdown + HTML documents,
    each heading naming the CPU the numbers were measured on; returns the provenance it
    wrote."""
    out = Path(out_dir)
    sizes, size_provs = load_sizes(size_files)
    if sizes.empty:
        raise InputError(out, "no size records to tabulate")
    reads, reps, read_provs = load_reads(read_files)
    pair_ratios, pair_sides, pair_provs = load_pairs(pair_files, plan_record.file_events(plan))
    prov = merged_provenance(plan["config"], out, size_provs + read_provs + pair_provs,
                             len(sizes), reads)
    prov["n_pair_measurements"] = len(pair_provs)
    lines = provenance_lines(prov)

    t = summaries(plan, sizes, reads, pair_ratios, pair_sides)
    samples = sample_table(sizes)
    for name, df in (*t.items(), (REPETITIONS, reps), (SAMPLES, samples)):
        write_csv(with_labels(plan, df), out / f"{name}.csv", lines)

    size_cpus = cpus_of(size_provs)
    read_cpus = cpus_of(read_provs) or size_cpus
    def timed(make, *tables):  # each CPU model apart, each sample kind apart
        return sections.per_cpu(lambda *ts: sections.per_kind(make, *ts), *tables)

    docs = (
        (SIZE, "Normalized size (file bytes / naive bytes)",
         sections.per_kind(sections.size_sections, t[SIZE], t[GROUPS]), size_cpus),
        (READS, "Read time (per sample: median of repetitions; mean ± std over samples)",
         timed(sections.read_sections, t[READS]), read_cpus),
        (RATIOS, RATIOS_TITLE, timed(sections.ratio_sections, t[RATIOS]),
         cpus_of(size_provs + pair_provs)),
        (PAIRS, "Paired reads: each side of every ROOT / Parquet pairing, first read and "
                  "repeats apart",
         timed(sections.pair_sections, with_labels(plan, t[PAIRS])),
         cpus_of(pair_provs)),
        (FORMATS, "Formats side by side",
         timed(sections.format_sections, with_labels(plan, t[FORMATS])),
         read_cpus),
        (SAMPLES, "Samples one by one (normalized size: file bytes / naive bytes)",
         sections.sample_sections(with_labels(plan, samples), plan_record.resolved(plan)),
         size_cpus))
    for name, title, body, cpus in docs:
        write_doc(title, body, out / f"{name}.md", lines, cpus)
    write_json(provenance_path or out / "provenance.json", prov)
    return prov
