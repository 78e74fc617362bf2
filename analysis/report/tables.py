"""Tables in the shape of the 2018 study, from measurement files.

* ``size``: normalised size (file bytes / naive bytes), mean ± std over samples, per format ×
  variant × cluster size;
* ``reads``: read time per format × variant × reader × selection × cache mode (per sample the
  median of the repetitions; across samples mean ± std), with MB/s and events/s;
* ``ratios``: ROOT / Parquet size ratio and ROOT rate / Parquet rate ratio per pairing, cluster
  size, selection and mode (the ratio is taken per sample, then averaged);
* ``repetitions``: every timed repetition, for anyone who wants other statistics;
* ``formats``: one row per format × variant × reader at the largest measured cluster size:
  normalised size, warm and cold read time per selection and the reader's peak memory, the
  table a user picks a format from.

Formats are the config's names (``ttree_nooffsets``); ``adapter`` and ``label`` columns say what
each one is.

Each CSV starts with ``#`` provenance lines (``pandas.read_csv(comment="#")`` skips them); each
Markdown file ends with the same block. A cold figure whose eviction was not verified by mincore
is marked with † and its ``cold_verified`` column is false.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from html import escape
from pathlib import Path

import pandas as pd

from analysis.atomic import atomic_path, write_json
from analysis.errors import InputError
from analysis.plan import study
from analysis.provenance import batch_summary, collect, describe_batch, describe_filesystem

KEYS = ["format", "variant", "cluster_size"]
READ_KEYS = [*KEYS, "reader", "threads", "selection", "mode"]


def _read_doc(path: str | Path, keys: tuple[str, ...]) -> dict:
    try:
        doc = json.loads(Path(path).read_text())
        missing = [k for k in keys if k not in doc]
    except (OSError, ValueError) as exc:
        raise InputError(path, f"not a readable hepfmt result ({exc})") from exc
    if missing:
        raise InputError(path, f"not a complete hepfmt result (no {', '.join(missing)})")
    return doc


_BASE = ("sample", "process", *KEYS, "n_events", "provenance")


def load_sizes(paths: Iterable[str | Path]) -> tuple[pd.DataFrame, list[dict]]:
    """One row per written file: its size figures and compressed bytes per branch group."""
    rows, provs = [], []
    for p in paths:
        doc = _read_doc(p, (*_BASE, "file_bytes", "naive_bytes", "normalized_size"))
        groups = {f"zip_bytes:{g}": v for g, v in doc.get("zip_bytes_by_group", {}).items()}
        # what is in no branch's data: headers, footers, keys, basket/page headers, offsets
        # the adapter does not attribute to a branch
        # (all of it is "unattributed" when the adapter cannot split bytes by branch)
        rest = "metadata" if groups else "unattributed"
        groups[f"zip_bytes:{rest}"] = doc["file_bytes"] - sum(groups.values())
        rows.append({**{k: doc[k] for k in _BASE if k != "provenance"},
                     "adapter": doc.get("adapter", doc["format"]),
                     "file_bytes": doc["file_bytes"], "naive_bytes": doc["naive_bytes"],
                     "normalized_size": doc["normalized_size"],
                     "normalized_size_no_triggers": doc.get("normalized_size_no_triggers"),
                     **groups})
        provs.append(doc["provenance"])
    return pd.DataFrame(rows), provs


def load_reads(paths: Iterable[str | Path]) -> tuple[pd.DataFrame, pd.DataFrame, list[dict]]:
    """One row per (file, reader, selection, mode), and one per timed repetition."""
    reads, reps, provs = [], [], []
    for p in paths:
        doc = _read_doc(p, (*_BASE, "reads"))
        base = {k: doc[k] for k in _BASE if k != "provenance"}
        base["adapter"] = doc.get("adapter", doc["format"])
        for r in doc["reads"]:
            reads.append({**base, **{k: v for k, v in r.items() if k != "repetitions"}})
            for i, rep in enumerate(r["repetitions"]):
                reps.append({**base, **{k: r[k] for k in ("reader", "threads", "selection",
                                                          "mode")},
                             "repetition": i, **rep})
        provs.append(doc["provenance"])
    return pd.DataFrame(reads), pd.DataFrame(reps), provs


def _mean_std(df: pd.DataFrame, keys: list[str], col: str) -> pd.DataFrame:
    g = df.groupby(keys, sort=True)[col]
    out = g.agg(["mean", "std", "count"]).reset_index()
    out["std"] = out["std"].fillna(0.0)
    return out.rename(columns={"mean": f"{col}_mean", "std": f"{col}_std",
                               "count": "n_samples"})


def size_table(sizes: pd.DataFrame) -> pd.DataFrame:
    t = _mean_std(sizes, KEYS, "normalized_size")
    if sizes["normalized_size_no_triggers"].notna().any():
        nt = _mean_std(sizes, KEYS, "normalized_size_no_triggers").drop(columns="n_samples")
        t = t.merge(nt, on=KEYS)
    return t


def group_table(sizes: pd.DataFrame) -> pd.DataFrame:
    """Where the bytes go: mean compressed bytes per event of each branch group."""
    cols = [c for c in sizes.columns if c.startswith("zip_bytes:")]
    per_event = sizes[cols].div(sizes["n_events"], axis=0)
    per_event.columns = [c.split(":", 1)[1] for c in cols]
    d = pd.concat([sizes[KEYS], per_event], axis=1)
    return d.groupby(KEYS, sort=True).mean().reset_index()


def read_table(reads: pd.DataFrame) -> pd.DataFrame:
    if "rss_over_baseline_bytes" not in reads:  # records from before the read's own peak
        reads = reads.assign(rss_over_baseline_bytes=reads.peak_rss_bytes
                             - reads.baseline_rss_bytes)
    if "rss_method" not in reads:
        reads = reads.assign(rss_method="ru_maxrss (lower bound)")
    t = _mean_std(reads, READ_KEYS, "median_s")
    extra = reads.groupby(READ_KEYS).agg(
        iqr_s_mean=("iqr_s", "mean"), repetitions=("n", "min"),
        mb_per_s_compressed=("mb_per_s_compressed", "mean"),
        mb_per_s_naive=("mb_per_s_naive", "mean"), events_per_s=("events_per_s", "mean"),
        peak_rss_mb=("peak_rss_bytes", lambda x: x.max() / 2**20),
        rss_over_baseline_mb=("rss_over_baseline_bytes", lambda x: x.max() / 2**20),
        # a lower bound anywhere makes the figure one: say so in the table
        rss_exact=("rss_method", lambda x: bool((x == "vmhwm-reset").all())),
        cpu_s_mean=("cpu_median_s", "mean"),
        disk_read_bytes=("disk_read_bytes_median", "mean"),
        cold_verified=("cold_verified", lambda x: None if x.isna().all() else bool(x.all())),
    ).reset_index()
    return t.merge(extra, on=READ_KEYS)


def ratio_table(config: dict, sizes: pd.DataFrame, reads: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for pair in study.pairs(config):
        label, fr, fp = pair["label"], pair["ttree_format"], pair["parquet_format"]
        r = sizes[(sizes.format == fr) & (sizes.variant == pair["ttree"])]
        q = sizes[(sizes.format == fp) & (sizes.variant == pair["parquet"])]
        m = r.merge(q, on=["sample", "cluster_size"], suffixes=("_r", "_p"))
        for _, x in m.iterrows():
            rows.append({"pair": label, "ttree": pair["ttree"], "parquet": pair["parquet"],
                         "cluster_size": x.cluster_size, "sample": x["sample"],
                         "quantity": "size", "selection": "", "mode": "", "threads": 0,
                         "ratio": x.file_bytes_r / x.file_bytes_p})
        if reads.empty:
            continue
        rr = reads[(reads.format == fr) & (reads.variant == pair["ttree"])
                   & (reads.reader == study.compare_reader(config, fr, "ttree"))]
        qq = reads[(reads.format == fp) & (reads.variant == pair["parquet"])
                   & (reads.reader == study.compare_reader(config, fp, "parquet"))]
        m = rr.merge(qq, on=["sample", "cluster_size", "threads", "selection", "mode"],
                     suffixes=("_r", "_p"))
        for _, x in m.iterrows():
            rows.append({"pair": label, "ttree": pair["ttree"], "parquet": pair["parquet"],
                         "cluster_size": x.cluster_size, "sample": x["sample"],
                         "quantity": "rate", "selection": x.selection, "mode": x["mode"],
                         "threads": x.threads,
                         # ROOT rate / Parquet rate = Parquet time / ROOT time
                         "ratio": x.median_s_p / x.median_s_r})
    if not rows:
        return pd.DataFrame(columns=["pair", "ttree", "parquet", "quantity", "selection",
                                     "mode", "threads", "cluster_size", "ratio_mean",
                                     "ratio_std", "n_samples"])
    df = pd.DataFrame(rows)
    return _mean_std(df, ["pair", "ttree", "parquet", "quantity", "selection", "mode",
                          "threads", "cluster_size"], "ratio")


def format_table(st: pd.DataFrame, rt: pd.DataFrame) -> pd.DataFrame:
    """One row per format × variant × reader × threads at the largest cluster size whose reads
    were measured (the largest written one if none were): normalised size, the read time of
    each selection and cache mode, and the reader's peak memory over its post-import baseline.
    """
    if rt.empty:
        largest = st.cluster_size.max()
        return st[st.cluster_size == largest].reset_index(drop=True)
    largest = rt.cluster_size.max()
    rows = rt[rt.cluster_size == largest]
    wide = rows.pivot_table(index=["format", "variant", "reader", "threads"],
                            columns=["selection", "mode"], values="median_s_mean",
                            aggfunc="first")
    wide.columns = [f"{sel}_{mode}_s" for sel, mode in wide.columns]
    rss = rows.groupby(["format", "variant", "reader", "threads"]).agg(
        rss_over_baseline_mb=("rss_over_baseline_mb", "max"), peak_rss_mb=("peak_rss_mb", "max"),
        rss_exact=("rss_exact", "all"),
        cold_verified=("cold_verified",
                       lambda x: None if x.isna().all() else bool(x.dropna().all())))
    sizes = st[st.cluster_size == largest][["format", "variant", "cluster_size",
                                            "normalized_size_mean", "normalized_size_std"]]
    return sizes.merge(wide.join(rss).reset_index(), on=["format", "variant"], how="left")


def _with_labels(config: dict, df: pd.DataFrame) -> pd.DataFrame:
    """``label`` and ``adapter`` columns first after ``format``: what each format name is."""
    if df.empty or "format" not in df:
        return df
    labels = df.format.map(lambda f: study.label(config, f))
    adapters = df.format.map(lambda f: study.adapter(config, f)
                             if f in config.get("formats", {}) else f)
    out = df.drop(columns=[c for c in ("label", "adapter") if c in df])
    i = list(out.columns).index("format") + 1
    out.insert(i, "label", labels)
    out.insert(i + 1, "adapter", adapters)
    return out


def _pm(mean: float, std: float, digits: int = 3) -> str:
    return f"{mean:.{digits}f} ± {std:.{digits}f}"


def _pivot(df: pd.DataFrame, index: list[str], column: str, mean: str, std: str,
           digits: int = 3, mark: pd.Series | None = None) -> pd.DataFrame:
    cell = [_pm(a, b, digits) for a, b in zip(df[mean], df[std], strict=True)]
    if mark is not None:
        cell = [c + (" †" if m is False else "") for c, m in zip(cell, mark, strict=True)]
    d = df.assign(cell=cell)
    p = d.pivot_table(index=index, columns=column, values="cell", aggfunc="first")
    p.columns = [str(c) for c in p.columns]
    return p.reset_index()


def provenance_lines(prov: dict, counts: str | None = None) -> list[str]:
    """The provenance block every table carries; ``counts`` replaces the read study's line on
    what was measured and what the spread means (for other studies' tables)."""
    v = prov["versions"]
    m = prov["machine"]
    fs = prov.get("filesystem", {})
    if counts is None:
        counts = (f"{prov.get('n_files', '?')} files; "
                  f"{prov.get('n_read_measurements', 0)} read measurements of "
                  f"{prov.get('repetitions', '?')} timed repetitions each (after one untimed "
                  "read); spread = std over samples of per-sample medians")
    return [
        f"generated: {prov['date']} by hepfmt {prov.get('hepfmt_commit', '')}",
        "versions: " + ", ".join(f"{k} {v[k]}" for k in sorted(v)),
        f"machine: {m['cpu']}, {m['cores']} cores, {m['memory_bytes'] / 2**30:.1f} GiB, "
        f"kernel {m['kernel']}",
        describe_filesystem(fs),
        describe_batch(prov.get("batch", {})),
        f"config hash: {prov.get('config_hash', '?')}; {counts}",
        *([f"WARNING: measurements mixed different {', '.join(prov['mixed'])}; see "
           "provenance.json"] if prov.get("mixed") else []),
    ]


def write_csv(df: pd.DataFrame, path: Path, prov_lines: list[str]) -> None:
    with atomic_path(path) as tmp, open(tmp, "w") as f:
        for line in prov_lines:
            f.write(f"# {line}\n")
        df.to_csv(f, index=False)


Section = tuple[str, "pd.DataFrame | str"]


def write_doc(title: str, sections: list[Section], path: Path, prov_lines: list[str]) -> None:
    """One table document twice: ``path`` (``.md``, for the repository and terminals) and its
    ``.html`` twin (shown inline by ``snakemake --report``; a CSV there is only a download).
    A section is a heading and a DataFrame (a table) or a string (a paragraph)."""
    md = [f"# {title}", ""]
    html = [f"<h1>{escape(title)}</h1>"]
    for heading, body in sections:
        md += [f"## {heading}", ""]
        html.append(f"<h2>{escape(heading)}</h2>")
        if isinstance(body, pd.DataFrame):
            # a cell nothing was measured for is empty, not "nan"
            md.append(body.astype(object).where(body.notna(), "").to_markdown(index=False))
            html.append(body.to_html(index=False, na_rep="", border=0, classes="hepfmt"))
        else:
            md.append(body)
            html.append(f"<p>{escape(body)}</p>")
        md.append("")
    md += ["## Provenance", ""] + [f"- {line}" for line in prov_lines] + [""]
    html += ["<h2>Provenance</h2>", "<ul>", *(f"<li>{escape(x)}</li>" for x in prov_lines),
             "</ul>"]
    with atomic_path(path) as tmp:
        tmp.write_text("\n".join(md))
    with atomic_path(path.with_suffix(".html")) as tmp:
        tmp.write_text(HTML_PAGE.format(title=escape(title), body="\n".join(html)))


#: A plain page: the report shows it in a frame, a browser opens it from results/tables/.
HTML_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: system-ui, sans-serif; font-size: 13px; margin: 1em; color: #222; }}
h1 {{ font-size: 18px; }} h2 {{ font-size: 15px; margin-top: 1.5em; }}
table.hepfmt {{ border-collapse: collapse; }}
table.hepfmt th, table.hepfmt td {{ padding: 2px 8px; border-bottom: 1px solid #ddd;
  text-align: right; white-space: nowrap; }}
table.hepfmt th {{ background: #f3f3f3; position: sticky; top: 0; }}
table.hepfmt td:first-child, table.hepfmt th:first-child {{ text-align: left; }}
table.hepfmt tr:hover td {{ background: #fafae0; }}
li {{ color: #555; }}
</style></head><body>
{body}
</body></html>
"""


def merged_provenance(config: dict, out: Path, provs: list[dict], n_sizes: int,
                      reads: pd.DataFrame) -> dict:
    """Tabulation provenance plus what the measuring processes recorded about themselves.

    The versions and machine reported are those of the measurements; if the measurements were
    made with different versions or on different machines, that is said, not averaged away.
    """
    prov = collect(config, data_path=out)
    versions = sorted({json.dumps(p["versions"], sort_keys=True) for p in provs})
    machines = sorted({json.dumps(p["machine"], sort_keys=True) for p in provs})
    filesystems = sorted({json.dumps(p.get("filesystem", {}), sort_keys=True) for p in provs})
    prov["tabulated_with"] = {"versions": prov["versions"], "machine": prov["machine"]}
    prov["versions"] = json.loads(versions[0])
    prov["machine"] = json.loads(machines[0])
    prov["filesystem"] = json.loads(filesystems[0])
    prov["mixed"] = [k for k, v in (("versions", versions), ("machine", machines),
                                    ("filesystem", filesystems)) if len(v) > 1]
    prov["batch"] = batch_summary(p.get("batch", {}) for p in provs)
    prov["n_files"] = n_sizes
    prov["n_read_measurements"] = len(reads)
    prov["repetitions"] = int(reads["n"].min()) if not reads.empty else 0
    prov["config"] = config
    return prov


def _read_sections(rt: pd.DataFrame) -> list[Section]:
    if rt.empty:
        return [("No read measurements", "The config's measure sub-grid is empty.")]
    largest = rt.cluster_size.max()
    sections = []
    for sel in rt.selection.unique():
        d = rt[(rt.selection == sel) & (rt.cluster_size == largest)]
        sections.append((f"Read time in seconds, selection '{sel}', cluster size {largest}",
                         _pivot(d, ["format", "variant", "reader", "threads"], "mode",
                                   "median_s_mean", "median_s_std", 4,
                                   mark=d.cold_verified)))
        for mode in rt["mode"].unique():
            d = rt[(rt.selection == sel) & (rt["mode"] == mode)]
            sections.append((f"Events/s by cluster size, selection '{sel}', {mode} cache",
                             d.pivot_table(index=["format", "variant", "reader", "threads"],
                                           columns="cluster_size", values="events_per_s")
                             .round(0).reset_index()))
    sections.append(("Peak memory of the reading process above its RSS after imports (MB), by "
                     "selection",
                     rt.pivot_table(index=["format", "reader", "threads"], columns="selection",
                                    values="rss_over_baseline_mb", aggfunc="max")
                     .round(0).reset_index()))
    sections.append(("Legend", "† cold-cache eviction not verified: mincore found pages still "
                               "resident in at least one repetition, or the file is on a "
                               "filesystem where eviction cannot be verified (tmpfs, NFS, "
                               "Lustre, GPFS, CVMFS/FUSE): not a cold figure"))
    return sections


def _format_sections(ft: pd.DataFrame) -> list[Section]:
    """The table a user picks a format from: size, read times, memory, one row per reader."""
    if ft.empty:
        return [("No formats", "Nothing was written.")]
    size = [_pm(a, b) for a, b in zip(ft.normalized_size_mean, ft.normalized_size_std,
                                      strict=True)]
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
        cols["peak RSS over baseline (MB)"] = [
            "" if pd.isna(v) else f"{'' if exact is not False else '≥ '}{v:.0f}"
            for v, exact in zip(ft.rss_over_baseline_mb, ft.get("rss_exact", [None] * len(ft)),
                                strict=True)]
    d = pd.DataFrame(cols)
    return [(f"Cluster size {int(ft.cluster_size.max())}; read times: per sample the median of "
             "the repetitions, mean over samples; † = cold eviction not verified; peak RSS: the "
             "reads' own high-water mark over the resident set they started from (≥ = only a "
             "lower bound: the kernel refused to reset the mark)",
             d)]


def _ratio_sections(ratios: pd.DataFrame) -> list[Section]:
    if ratios.empty:
        return [("No ratios", "No ROOT/Parquet pairing had files on both sides.")]
    sections = [("ROOT size / Parquet size", _pivot(
        ratios[ratios.quantity == "size"], ["pair"], "cluster_size", "ratio_mean",
        "ratio_std"))]
    r = ratios[ratios.quantity == "rate"]
    for (sel, mode, threads), d in r.groupby(["selection", "mode", "threads"]):
        th = f", {threads} threads" if r.threads.nunique() > 1 else ""
        sections.append((f"ROOT rate / Parquet rate, selection '{sel}', {mode} cache{th}",
                         _pivot(d, ["pair"], "cluster_size", "ratio_mean", "ratio_std", 2)))
    return sections


def tabulate(config: dict, size_files: Iterable[str | Path], read_files: Iterable[str | Path],
             out_dir: str | Path, provenance_path: str | Path | None = None) -> dict:
    """Every table of the study from its size records and read measurements."""
    out = Path(out_dir)
    sizes, size_provs = load_sizes(size_files)
    if sizes.empty:
        raise InputError(out, "no size records to tabulate")
    reads, reps, read_provs = load_reads(read_files)
    prov = merged_provenance(config, out, size_provs + read_provs, len(sizes), reads)
    lines = provenance_lines(prov)

    st = size_table(sizes)
    gt = group_table(sizes)
    rt = read_table(reads) if not reads.empty else pd.DataFrame()
    ratios = ratio_table(config, sizes, reads)
    ft = format_table(st, rt)
    for name, df in (("size", st), ("groups", gt), ("reads", rt), ("ratios", ratios),
                     ("repetitions", reps), ("formats", ft)):
        write_csv(_with_labels(config, df), out / f"{name}.csv", lines)

    size_sections = [(
        "mean ± std over samples, per cluster size (entries per cluster / rows per row group)",
        _pivot(st, ["format", "variant"], "cluster_size", "normalized_size_mean",
                  "normalized_size_std"))]
    if "normalized_size_no_triggers_mean" in st:
        size_sections.append(("Without the trigger/flag branches (as the 2018 table)", _pivot(
            st, ["format", "variant"], "cluster_size", "normalized_size_no_triggers_mean",
            "normalized_size_no_triggers_std")))
    largest = gt.cluster_size.max()
    size_sections.append((f"Compressed bytes per event by branch group, cluster size {largest}",
                          gt[gt.cluster_size == largest].drop(columns="cluster_size")
                          .round(1)))
    write_doc("Normalized size (file bytes / naive bytes)", size_sections, out / "size.md",
             lines)
    write_doc("Read time (per sample: median of repetitions; mean ± std over samples)",
             _read_sections(rt), out / "reads.md", lines)
    write_doc("ROOT / Parquet ratios (per sample, then mean ± std over samples)",
             _ratio_sections(ratios), out / "ratios.md", lines)
    write_doc("Formats side by side", _format_sections(_with_labels(config, ft)),
             out / "formats.md", lines)
    write_json(provenance_path or out / "provenance.json", prov)
    return prov
