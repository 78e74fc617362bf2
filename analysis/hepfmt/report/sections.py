"""The sections of the study's table documents (Markdown + HTML): the tables pivoted for
reading, each cell ``mean ± std`` over samples, a cold figure whose eviction was not verified
marked with †."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pandas as pd

from hepfmt.report import direction
from hepfmt.report.documents import Section
from hepfmt.report.grid import widest_read_cluster_size

UNVERIFIED_LEGEND = ("† cold-cache eviction not verified: mincore found pages still resident in "
                     "at least one repetition, or the file is on a filesystem where eviction "
                     "cannot be verified (tmpfs, NFS, Lustre, GPFS, CVMFS/FUSE): not a cold "
                     "figure")


def mean_pm(mean: float, std: float, digits: int = 3, n: float | None = None) -> str:
    """``mean ± std``; the mean alone over one sample (a spread of one value is no spread);
    "–" where there is no mean (a format that states no bytes per branch, such as ORC, has no
    size without the trigger branches)."""
    if pd.isna(mean):
        return "–"
    if n is not None and pd.notna(n) and n < 2:
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ± {std:.{digits}f}"


def _samples(df: pd.DataFrame) -> list:
    """Each row's sample count, where the frame has one (else None: spread always shown)."""
    return list(df["n_samples"]) if "n_samples" in df else [None] * len(df)


def _num(value: float, digits: int = 3) -> str:
    """A number to ``digits`` significant digits, or an empty cell for none."""
    return "" if pd.isna(value) else f"{value:.{digits}g}"


#: The coverage an interval is taken to have unless its cell says otherwise.
FULL_COVERAGE = 0.95


def below_full(coverage: float) -> bool:
    """Whether an interval's coverage must be printed beside it (below 95%)."""
    return pd.notna(coverage) and coverage < FULL_COVERAGE - 1e-9


def interval_cell(value: float, lo: float, hi: float, coverage: float, digits: int = 3,
              n: float | None = None, unit: str = "pairs") -> str:
    """``1.32 [1.10, 1.55]``: a value and its interval, with the interval's coverage when it
    is below 95% (fewer than 6 repetitions or pairs), and then how many ``n`` it rests on
    (``0.30 [0.27, 0.36] (75%, 3 pairs)``), so a narrow bracket is never read as sharper than
    it is."""
    if pd.isna(value):
        return ""
    cell = _num(value, digits)
    if n is not None and pd.notna(n) and int(n) == 1:  # one pair or repetition: no interval
        return f"{cell} (one {unit.removesuffix('s')}, no interval)"
    if pd.notna(lo) and pd.notna(hi):
        cell += f" [{_num(lo, digits)}, {_num(hi, digits)}]"
        if below_full(coverage):
            many = f", {int(n)} {unit}" if n is not None and pd.notna(n) else ""
            cell += f" ({coverage:.0%}{many})"
    return cell


def _pivot(df: pd.DataFrame, index: list[str], column: str, mean: str, std: str,
           digits: int = 3, mark: pd.Series | None = None) -> pd.DataFrame:
    cell = [mean_pm(a, b, digits, n) for a, b, n in zip(df[mean], df[std], _samples(df),
                                                     strict=True)]
    if mark is not None:
        cell = [c + (" †" if m is False else "") for c, m in zip(cell, mark, strict=True)]
    d = df.assign(cell=cell)
    p = d.pivot_table(index=index, columns=column, values="cell", aggfunc="first")
    p.columns = [str(c) for c in p.columns]
    return p.reset_index()


def size_sections(st: pd.DataFrame, gt: pd.DataFrame) -> list[Section]:
    sections = [(
        "mean ± std over samples, per cluster size (entries per cluster / rows per row group)",
        _pivot(st, ["format", "variant"], "cluster_size", "normalized_size_mean",
               "normalized_size_std"))]
    if "normalized_size_no_triggers_mean" in st:
        sections.append(("Without the trigger/flag branches (as the 2018 table)", _pivot(
            st, ["format", "variant"], "cluster_size", "normalized_size_no_triggers_mean",
            "normalized_size_no_triggers_std")))
    largest = gt.cluster_size.max()
    sections.append((f"Compressed bytes per event by branch group, cluster size {largest}",
                     gt[gt.cluster_size == largest].drop(columns="cluster_size").round(1)))
    return sections


def read_sections(rt: pd.DataFrame) -> list[Section]:
    if rt.empty:
        return [("No read measurements", "The config's measure sub-grid is empty.")]
    largest = widest_read_cluster_size(rt)
    sections = []
    for sel in rt.selection.unique():
        d = rt[(rt.selection == sel) & (rt.cluster_size == largest)]
        sections.append((f"Read time in seconds, selection '{sel}', cluster size {largest}",
                         _pivot(d, ["format", "variant", "reader", "threads"], "mode",
                                "median_s_mean", "median_s_std", 4, mark=d.cold_verified)))
        for mode in rt["mode"].unique():
            d = rt[(rt.selection == sel) & (rt["mode"] == mode)]
            sections.append((f"Events/s by cluster size, selection '{sel}', {mode} cache",
                             d.pivot_table(index=["format", "variant", "reader", "threads"],
                                           columns="cluster_size", values="events_per_s")
                             .round(0).reset_index()))
    sections += _parts_sections(rt)
    sections.append(("Peak memory of the reading process above its RSS after imports (MB), by "
                     "selection",
                     rt.pivot_table(index=["format", "reader", "threads"], columns="selection",
                                    values="rss_over_baseline_mb", aggfunc="max")
                     .round(0).reset_index()))
    sections.append(("Legend", UNVERIFIED_LEGEND))
    return sections


def _parts_sections(rt: pd.DataFrame) -> list[Section]:
    """Per selection and cache mode, every cluster size: the median and its interval, then
    what a short file costs (time to the first event) apart from what a long one costs
    (steady throughput), and how the throughput was found."""
    if "time_to_first_event_s" not in rt:  # a table from before the parts of a read
        return []
    sections = []
    index = ["format", "variant", "reader", "threads", "cluster_size"]
    for (sel, mode), d in rt.groupby(["selection", "mode"], sort=False):
        d = d.sort_values(index)
        table = d[index].assign(**{
            "median (s) [interval]": [
                interval_cell(*v[:4], 4, v[4], "repetitions") for v in zip(
                    d.median_s_mean, d.median_lo_s, d.median_hi_s, d.median_coverage,
                    d.repetitions, strict=True)],
            "time to first event (s)": d.time_to_first_event_s.map(_num),
            "steady events/s": d.events_per_s_steady.map(_num),
            "steady MB/s (compressed)": d.mb_per_s_steady_compressed.map(_num),
            "ns per value": d.ns_per_value.map(_num),
            **_bound_cells(d),
            **_split_cells(d, "_mean"),
            "repetitions": d.repetitions,
            "throughput from": d.throughput_method + d.fit_poor.map(
                lambda p: " (poor fit)" if p is True else "")})
        sections.append((f"Parts of a read, selection '{sel}', {mode} cache: median time with "
                         "its interval (95% unless a coverage is given; over samples: the mean "
                         "of each bound), time to the "
                         f"first event (open + set-up), steady throughput; {BOUND_MEANING}; "
                         "the whole read's CPU: user (the reader's own work), system (the "
                         "kernel's: page faults, allocation), waiting (neither)",
                         table))
    return sections


#: The warm parts ``formats`` has per selection (``<selection>_warm_<part>``), as headed.
_FORMAT_PARTS = {"time_to_first_event_s": "first event (s)",
                 "events_per_s_steady": "steady events/s",
                 "ns_per_value": "ns per value",
                 "first_read_s": "first read in a fresh process (s)",
                 "fraction_of_bound_new": "of codec bound (new ctx)",
                 "fraction_of_bound_reused": "of codec bound (reused ctx)",
                 "fraction_of_bound_whole": "whole read, of codec bound (new ctx)"}

#: What the codec bound columns mean, said in the headings of the tables that have them.
BOUND_MEANING = ("codec bound: the file's own compressed blocks of the selection decompressed "
                 "alone on one core (a new context per block, as ROOT and one-shot calls do, "
                 "and one reused; uncompressed: a copy); 'of bound': steady events/s over the "
                 "bound's; 'whole read': events/s over the whole read, open and set-up "
                 "included (every read has it, a one-cluster file's too)")


#: The CPU split of a read, as headed: user (the reader's own work), system (the kernel's:
#: page faults, allocation), waiting (neither: I/O, locks, scheduling).
_SPLIT = {"user (s)": "user_s", "system (s)": "sys_s", "waiting (s)": "wait_s"}


def _split_cells(d: pd.DataFrame, suffix: str = "") -> dict[str, pd.Series]:
    """A read's CPU split (:data:`_SPLIT`, columns ``user_s`` + ``suffix`` ...); none for a
    table from before the split."""
    return {head: d[col + suffix].map(_num) for head, col in _SPLIT.items()
            if col + suffix in d and d[col + suffix].notna().any()}


def _bound_cells(d: pd.DataFrame) -> dict[str, pd.Series]:
    """The codec bound's columns of a table with :data:`hepfmt.report.frames.BOUND_COLUMNS`
    (none for records from before the bound)."""
    if "bound_events_per_s_new" not in d or d.bound_events_per_s_new.isna().all():
        return {}
    pct = lambda v: "" if pd.isna(v) else f"{v:.2f}"  # noqa: E731
    return {"codec bound events/s (new / reused ctx)": [
                "" if pd.isna(a) else _num(a) + ("" if pd.isna(b) else f" / {_num(b)}")
                for a, b in zip(d.bound_events_per_s_new, d.bound_events_per_s_reused,
                                strict=True)],
            "of bound (new / reused)": [
                "" if pd.isna(a) else pct(a) + ("" if pd.isna(b) else f" / {pct(b)}")
                for a, b in zip(d.fraction_of_bound_new, d.fraction_of_bound_reused,
                                strict=True)],
            "whole read, of bound (new)": d.fraction_of_bound_whole.map(pct)}


def format_sections(ft: pd.DataFrame) -> list[Section]:
    """The table a user picks a format from: size, read times, memory, one row per reader."""
    if ft.empty:
        return [("No formats", "Nothing was written.")]
    size = [mean_pm(a, b, 3, n) for a, b, n in zip(ft.normalized_size_mean, ft.normalized_size_std,
                                                _samples(ft), strict=True)]
    cols = {"format": ft.label, "variant": ft.variant, "normalized size": size}
    if "reader" in ft:
        cols["reader"] = ft.reader.fillna("(size only)")  # written, but not read-measured
        if ft.threads.nunique() > 1:
            cols["threads"] = ft.threads
        for c in [c for c in ft.columns if c.endswith(("_warm_s", "_cold_s"))]:
            mark = ft.cold_verified if c.endswith("_cold_s") else None
            cols[c.removesuffix("_s").replace("_", " ") + " (s)"] = [
                "" if pd.isna(v) else f"{v:.4f}" + (" †" if mark is not None and m is False
                                                    else "")
                for v, m in zip(ft[c], mark if mark is not None else [None] * len(ft),
                                strict=True)]
        for c in [c for c in ft.columns if c.endswith(tuple(_FORMAT_PARTS))]:
            if ft[c].isna().all():  # e.g. no throughput from one-cluster files: no column
                continue
            sel, part = c.rsplit("_warm_", 1)
            cols[f"{sel} warm {_FORMAT_PARTS[part]}"] = ft[c].map(
                (lambda v: "" if pd.isna(v) else f"{v:.2f}") if "fraction" in part else _num)
        cols["peak RSS over baseline (MB)"] = [
            "" if pd.isna(v) else f"{'' if exact is not False else '≥ '}{v:.0f}"
            for v, exact in zip(ft.rss_over_baseline_mb, ft.get("rss_exact", [None] * len(ft)),
                                strict=True)]
    d = pd.DataFrame(cols)
    return [(f"Cluster size {int(ft.cluster_size.max())}; read times: per sample the median of "
             "the repetitions, mean over samples; first event: open + set-up, what a short "
             "file costs; steady events/s: what each further event costs (how it was found: "
             "reads.csv); † = cold eviction not verified; peak RSS: the "
             "reads' own high-water mark over the resident set they started from (≥ = only a "
             f"lower bound: the kernel refused to reset the mark); {BOUND_MEANING}",
             d)]


def _ratio_cells(rows: pd.DataFrame, suffix: str = "") -> list[str]:
    """One quantity's ratio cells, its columns named with ``suffix``: the interval's coverage
    and the rounds (or pairs) it rests on given wherever it is below 95%."""
    cols = (f"{c}{suffix}" for c in ("ratio_mean", "ratio_lo", "ratio_hi", "coverage",
                                     "n_over", "over"))
    return [interval_cell(*v[:4], 3, v[4], _unit(v[5]))
            for v in zip(*(rows[c] for c in cols), strict=True)]


def _unit(over: object) -> str:
    """What an interval rests on (``rounds`` of fresh processes, or ``pairs``)."""
    return "pairs" if pd.isna(over) or not over else str(over)


def _method(ttree: str, parquet: str) -> str:
    """How both sides' throughputs were found, once if alike."""
    ttree, parquet = ("" if pd.isna(m) else str(m) for m in (ttree, parquet))
    return ttree if ttree == parquet else f"ROOT: {ttree}; Parquet: {parquet}"


#: What ``read`` means, said under every table that has it.
READS_MEANING = ("read: first = the first read in a fresh process (one per round), repeats = "
                 "the reads after it in the same process")
#: How a ratio's interval is printed, said in the headings of the tables that print one.
INTERVALS_MEANING = ("intervals over rounds of fresh processes, 95% unless a coverage is given "
                     "in brackets with the rounds (or pairs) it rests on")


def _lead_section(ratios: pd.DataFrame) -> list[Section]:
    """The table a user acts on: per pairing, selection, kind of read and cluster size the
    steady throughput ratio and the whole-file time ratio at the stated file length, each with
    its interval, how many pairs (and how many discarded for load) and how the throughputs and
    intervals were found."""
    keys = ["pair", "selection", "read", "cluster_size", "mode", "threads"]
    tp = ratios[ratios.quantity == "throughput"]
    ft = ratios[ratios.quantity == "file_time"]
    if tp.empty or ft.empty:
        return []
    n = int(ft.file_events.dropna().iloc[0]) if ft.file_events.notna().any() else None
    # a time ratio shown as a speed ratio, as every ratio a user reads (hepfmt.report.direction)
    turned = [direction.speed("file_time", *v) for v in zip(ft.ratio_mean, ft.ratio_lo,
                                                             ft.ratio_hi, strict=True)]
    if turned:
        ft = ft.assign(**dict(zip(("ratio_mean", "ratio_lo", "ratio_hi"), zip(*turned,
                                                                              strict=True),
                                  strict=True)))
    m = tp.merge(ft, on=keys, suffixes=("", "_file")).sort_values(keys, kind="stable")
    table = pd.DataFrame({"pair": m.pair, "selection": m.selection, "read": m.read,
                          "cluster size": m.cluster_size})
    if "compares" in m and m.compares.fillna("").astype(bool).any():
        table["compares"] = [f"{c} ({a} vs {b})" if c else f"{a} vs {b}" for c, a, b in zip(
            m.compares.fillna(""), m.ttree_reader, m.parquet_reader, strict=True)]
    for col in ("mode", "threads"):
        if m[col].nunique() > 1:
            table[col] = m[col]
    file_time = f"whole file of {n:,} events" if n else "whole file"
    table["steady throughput, ROOT / Parquet speed [interval]"] = _ratio_cells(m)
    table[f"{file_time}, ROOT / Parquet speed [interval]"] = _ratio_cells(m, "_file")
    table["pairs"] = m.n_pairs
    table["discarded (load)"] = m.discarded
    table["interval"] = m.interval_method
    table["throughput from"] = [_method(a, b) for a, b in zip(
        m.throughput_method_ttree, m.throughput_method_parquet, strict=True)]
    return [(f"{direction.SPEED_AXIS}: steady throughput (once reading) and the {file_time} "
             "(open + set-up + events at the steady rate; the table's time ratio inverted); "
             f"{READS_MEANING}; {INTERVALS_MEANING}; empty: a side's throughput could not be "
             "separated from its set-up (one chunk)", table.reset_index(drop=True))]


def _ratio_pivot(d: pd.DataFrame, index: list[str]) -> pd.DataFrame:
    """Ratios with their intervals, one column per cluster size."""
    p = d.assign(cell=_ratio_cells(d)).pivot_table(index=index, columns="cluster_size",
                                                  values="cell", aggfunc="first")
    p.columns = [str(c) for c in p.columns]
    return p.reset_index().fillna("")


def ratio_sections(ratios: pd.DataFrame) -> list[Section]:
    if ratios.empty:
        return [("No ratios", "No ROOT/Parquet pairing had files on both sides.")]
    sections = _lead_section(ratios)
    sections.append(("ROOT size / Parquet size", _pivot(
        ratios[ratios.quantity == "size"], ["pair"], "cluster_size", "ratio_mean",
        "ratio_std")))
    r = ratios[ratios.quantity == "rate"]
    for (sel, mode, threads), d in r.groupby(["selection", "mode", "threads"]):
        th = f", {threads} threads" if r.threads.nunique() > 1 else ""
        sections.append((f"ROOT rate / Parquet rate (whole read, set-up included), selection "
                         f"'{sel}', {mode} cache{th}; {INTERVALS_MEANING}",
                         _ratio_pivot(d, ["pair", "read"])))
    return sections


def pair_sections(pairs: pd.DataFrame) -> list[Section]:
    """Per selection, each side of every pairing as the pair measured it: what the ratios are
    the ratios of."""
    if pairs.empty:
        return [("No paired measurements", "No ROOT / Parquet pairing was measured as a pair "
                                           "('hepfmt pair').")]
    out: list[Section] = []
    for sel, d in pairs.groupby("selection", sort=False):
        table = pd.DataFrame({"pair": d.pair, "cluster size": d.cluster_size})
        if pairs.threads.nunique() > 1:
            table["threads"] = d.threads
        table = table.assign(**{
            "read": d.read,
            "file": d.get("label", d.format) + " " + d.variant,
            "reader": d.reader,
            "time (s) [interval]": [interval_cell(*v[:4], 4, v[4], _unit(v[5])) for v in zip(
                d.median_s, d.lo_s, d.hi_s, d.coverage, d.n_over, d.over, strict=True)],
            "events/s": d.events_per_s.map(_num),
            "open (s)": d.open_s.map(_num),
            "set-up (s)": d.setup_s.map(_num),
            "steady events/s": d.events_per_s_steady.map(_num),
            "ns per value": d.ns_per_value.map(_num),
            **_bound_cells(d),
            "CPU (s)": d.cpu_s.map(_num),
            # the CPU split (a record from before it: empty cells): user (the reader's own
            # work), system (the kernel's: page faults, allocation), waiting (neither)
            **_split_cells(d),
            "minor faults": d.minflt.map(lambda v: "" if pd.isna(v) else f"{v:.0f}"),
            "read's own peak (MB)": d.read_peak_mb.map(
                lambda v: "" if pd.isna(v) else f"{v:.0f}")})
        if pairs.n_samples.max() > 1:
            table["samples"] = d.n_samples
        out.append((f"Selection '{sel}': each side's time (median over the pairs; "
                    f"{INTERVALS_MEANING}), its parts (open, set-up, steady rate), CPU (user: "
                    "the reader's own work; system: the kernel's; waiting: neither), minor "
                    "page faults and the read's own peak memory above its process's resident "
                    f"set; {READS_MEANING}; {BOUND_MEANING}", table.reset_index(drop=True)))
    return out


def per_kind(make: Callable[..., list[Section]], *tables: pd.DataFrame) -> list[Section]:
    """``make``'s sections once per sample kind, each heading naming it, when the tables hold
    real and synthetic samples apart (a ``kind`` column); else ``make``'s sections as they are."""
    if "kind" not in tables[0]:
        return make(*tables)
    out: list[Section] = []
    for kind in tables[0].kind.unique():
        mine = [t[t.kind == kind].drop(columns="kind") if "kind" in t else t for t in tables]
        out += [(f"{kind.capitalize()} samples: {heading}", body)
                for heading, body in make(*mine)]
    return out


def per_cpu(make: Callable[..., list[Section]], *tables: pd.DataFrame) -> list[Section]:
    """``make``'s sections once per CPU model, each heading naming it, where the first table's
    timed rows come from more than one (hepfmt.report.tables ``_per_cpu``: never pooled);
    rows of no one CPU (a size ratio's) go with every part. Else ``make``'s sections."""
    first = tables[0]
    timed = first[first.get("quantity", pd.Series("", index=first.index)) != "size"] \
        if "cpu" in first else first
    cpus = list(timed.cpu.dropna().unique()) if "cpu" in timed else []
    if len(cpus) < 2:
        return make(*tables)
    out: list[Section] = []
    for cpu in cpus:
        mine = [t[(t.cpu == cpu) | (t.get("quantity", pd.Series("", index=t.index)) == "size")]
                if "cpu" in t else t for t in tables]
        out += [(f"Measured on {cpu}: {heading}", body) for heading, body in make(*mine)]
    return out


def _sample_name(sample: str, kind: str) -> str:
    return f"{sample} (real)" if kind == "real" else sample


def sample_sections(samples: pd.DataFrame,
                    resolved: Mapping[str, Mapping[str, list[str] | str | None]]) -> list[Section]:
    """Each sample apart: what it is, its normalized size in every file, the branches each
    selection read in it (they differ where the samples' schemas do: MET_pt or PFMET_pt)."""
    first = samples.drop_duplicates("sample")
    names = dict(zip(first["sample"], map(_sample_name, first["sample"], first.kind),
                     strict=True))
    sections: list[Section] = [(
        "Samples (real = imported from a NanoAOD file; synthetic = generated from the value "
        "model)", first[["sample", "kind", "process", "n_events"]].reset_index(drop=True))]
    size = samples.assign(sample=samples["sample"].map(names))
    p = size.pivot_table(index=["format", "variant", "cluster_size"], columns="sample",
                         values="normalized_size", aggfunc="first").round(3)
    sections.append(("Normalized size per sample",
                     p[[names[s] for s in first["sample"]]].reset_index()))
    known = {sel: per_sample for sel, per_sample in resolved.items() if per_sample}
    if known:  # (a plan record from before per-sample selections has none)
        rows = []
        for sample in first["sample"]:
            row = {"sample": names[sample]}
            for sel, per_sample in known.items():
                branches = per_sample.get(sample)
                row[sel] = ("all branches" if branches == "*" else
                            "resolved by its measure job (a remote file)" if branches is None
                            else ", ".join(branches))
            rows.append(row)
        sections.append(("Branches read by each selection", pd.DataFrame(rows)))
    return sections


def _seconds(measured: float, extra: float | None, predicted: float | None) -> str:
    """``2.319 (+0.506; model 0.083)``: the time, what it took above the page cache's, and the
    model's storage time, which leaves CPU out and so predicts the part in brackets."""
    if pd.isna(measured):
        return ""
    if predicted is None or pd.isna(predicted):
        return f"{measured:.3f}"
    above = "" if extra is None or pd.isna(extra) else f"{extra:+.3f}; "
    return f"{measured:.3f} ({above}model {predicted:.3f})"


def storage_sections(means: pd.DataFrame, ratios: pd.DataFrame,
                     skipped: pd.DataFrame) -> list[Section]:
    """Per selection: time per profile with the cost model's prediction in brackets, then
    requests × mean size per read as the model was given them; the ROOT / Parquet time ratios
    per profile; every skipped profile or read with its reason. ``means``: per-sample medians
    averaged over samples (:func:`hepfmt.report.storage_tables.storage_means`)."""
    out: list[Section] = []
    if not means.empty:
        for sel, part in means.groupby("selection", sort=False):
            part = part.assign(
                time=[_seconds(a, extra, b) + ("" if v is not False else " †")
                      for a, extra, b, v in zip(part.median_s, part.storage_s,
                                                part.predicted_s, part.verified, strict=True)],
                asked=[("" if pd.isna(r) else f"{r:.0f} × {b / r / 1e3:.0f} kB ({v})")
                       if r else "" for r, b, v in zip(part.requests, part.bytes, part.view,
                                                      strict=True)])
            for value, title in (("time", "time, s (above the page cache's; the cost model's "
                                          "prediction of that)"),
                                 ("asked", "requests × mean size (counted by)")):
                table = part.pivot(index=["file", "reader"], columns="profile",
                                   values=value)[list(dict.fromkeys(part.profile))]
                table = table.reset_index()
                table.columns.name = None
                out.append((f"{sel}: {title}", table.fillna("")))
    if not ratios.empty:
        r = ratios.assign(ratio=[mean_pm(a, b, 2, n) for a, b, n in zip(
            ratios["mean"], ratios["std"], _samples(ratios), strict=True)])
        # profiles in the order measured (the config's), as in the tables above
        table = r.pivot(index=["selection", "root", "parquet"], columns="profile",
                        values="ratio")[list(dict.fromkeys(r.profile))].reset_index()
        table.columns.name = None
        out.append((f"{direction.SPEED_AXIS} per profile (Parquet time / ROOT time)", table))
    if not skipped.empty:
        out.append(("Skipped: never measured", skipped[
            ["sample", "format", "variant", "profile", "reader", "selection", "reason"]]
            .drop_duplicates(["format", "profile", "reader", "reason"]).fillna("")))
    return out
