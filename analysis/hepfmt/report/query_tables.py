"""The queries table: the ADL benchmark tasks as a read workload, per task × format × engine.

Per sample, a task's figure is the median of its timed repetitions as events/s (the file's
events over the median wall time); across samples, mean ± std, as in the reads table. Beside it:
its rate relative to RDataFrame on the TTree (the HEP default, taken per sample and task, then
averaged), the columns the task reads and their compressed bytes per event in that file, and the
events it selects, so that a rate can be read against the work behind it. An engine that cannot
read a queried format (its ``not_applicable`` in :data:`hepfmt.queries.ENGINES`) has a row of
"n/a" and its reason, so that no gap in the table is silent.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from hepfmt.atomic import write_json
from hepfmt.queries import ENGINES
from hepfmt.queries.tasks import TASKS
from hepfmt.records import QueryRecord
from hepfmt.report import plan_record
from hepfmt.report import table_names as tn
from hepfmt.report.documents import (
    Section,
    merged_provenance,
    provenance_lines,
    write_csv,
    write_doc,
)
from hepfmt.report.frames import all_verified, mean_std, with_labels
from hepfmt.report.query_answer import answer_table
from hepfmt.report.query_first import first_rows, first_table
from hepfmt.report.sections import interval_cell, mean_pm

QUERY_KEYS = ["task", "format", "variant", "cluster_size", "engine", "mode"]
#: How the answer's ratio reads, in the headings of its sections.
ANSWER_MEANING = ("the fastest engine on the ROOT files (TTree, RNTuple) over the fastest on "
                  "Parquet, events/s; > 1: ROOT faster, < 1: Parquet pays off; per sample the "
                  "ratio of the medians with an order-statistic interval from each side's "
                  "repetitions, its coverage given where below 95%; over samples the mean and "
                  "its t interval")
#: What the first-histogram section shows, its heading.
FIRST_MEANING = ("Time to the first histogram: the first run in a fresh process (first task; "
                 "file open, schema / events / graph built; imports and set-up not in it; file "
                 "cached), mean ± std over samples, and its one-off part (minus the task's "
                 "warm median)")
#: The baseline of the ratio column: this engine on the first TTree format of the plan.
BASELINE_ENGINE, BASELINE_ADAPTER = "rdataframe", "ttree"


def query_rows(docs: Iterable[QueryRecord]) -> tuple[pd.DataFrame, list[dict]]:
    """One row per (file, engine, task, mode) of the records of ``hepfmt query``, with its
    repetitions' wall times (``wall_times``: what an interval of its median is taken over)."""
    rows, provs = [], []
    for doc in docs:
        base = {k: v for k, v in doc.identity().items() if k not in ("process", "adapter")}
        for q in doc.queries:
            rows.append({**base, **{k: v for k, v in q.items() if k != "repetitions"},
                         "n_columns": len(q["columns"]),
                         "wall_times": [r["wall_s"] for r in q["repetitions"]]})
        provs.append(doc.provenance)
    return pd.DataFrame(rows), provs


def baseline_format(plan: dict, rows: pd.DataFrame) -> str | None:
    """The format the ratios are to: the plan's first TTree format that RDataFrame queried."""
    queried = set(rows.loc[rows.engine == BASELINE_ENGINE, "format"])
    return next((f for f in plan_record.format_names(plan)
                 if plan_record.adapter(plan, f) == BASELINE_ADAPTER and f in queried), None)


def query_table(plan: dict, rows: pd.DataFrame) -> pd.DataFrame:
    """Per task × format × variant × cluster size × engine × mode: events/s (mean ± std over
    samples), the ratio to the baseline, what the task reads and what it selects."""
    rows = rows.assign(zip_bytes_per_event=rows.zip_bytes / rows.n_events,
                       selected_fraction=rows.selected_events / rows.n_events)
    base = baseline_format(plan, rows)
    if base is not None:
        ref = rows[(rows.format == base) & (rows.engine == BASELINE_ENGINE)][
            ["sample", "task", "mode", "events_per_s"]]
        rows = rows.merge(ref.rename(columns={"events_per_s": "baseline"}),
                          on=["sample", "task", "mode"], how="left")
        rows["ratio_to_baseline"] = rows.events_per_s / rows.baseline
    else:
        rows["ratio_to_baseline"] = float("nan")
    t = mean_std(rows, QUERY_KEYS, "events_per_s")
    extra = rows.groupby(QUERY_KEYS).agg(
        median_s_mean=("median_s", "mean"), repetitions=("n", "min"),
        ratio_to_baseline=("ratio_to_baseline", "mean"),
        n_columns=("n_columns", "first"),
        columns=("columns", lambda x: " ".join(x.iloc[0])),
        zip_bytes_per_event=("zip_bytes_per_event", "mean"),
        selected_events=("selected_events", "sum"), n_events=("n_events", "sum"),
        selected_fraction=("selected_fraction", "mean"),
        rss_over_baseline_mb=("rss_over_baseline_bytes", lambda x: x.max() / 2**20),
        cold_verified=("cold_verified", all_verified),
    ).reset_index()
    t = t.merge(extra, on=QUERY_KEYS)
    t.insert(1, "question", t.task.map(lambda n: TASKS[n].question))
    t["baseline"] = f"{BASELINE_ENGINE} on {plan_record.label(plan, base)}" if base else ""
    return t


def _row_name(plan: dict, df: pd.DataFrame) -> pd.Series:
    return (df.format.map(lambda f: plan_record.label(plan, f)) + " " + df.variant + " · "
            + df.engine)


def not_applicable(plan: dict, t: pd.DataFrame) -> pd.DataFrame:
    """Per queried file (format, variant), every engine that cannot read its format, with the
    reason the registry gives; a distributed engine only where distributed ones ran (a study
    without a Dask scheduler would not have run it on any format)."""
    files = t[["format", "variant"]].drop_duplicates()
    distributed = any(ENGINES[e].distributed for e in t.engine.unique() if e in ENGINES)
    rows = [{"format": f, "variant": v, "engine": e.name,
             "reason": e.not_applicable[plan_record.adapter(plan, f)]}
            for f, v in files.itertuples(index=False) for e in ENGINES.values()
            if plan_record.adapter(plan, f) in e.not_applicable
            and (distributed or not e.distributed)]
    return pd.DataFrame(rows, columns=["format", "variant", "engine", "reason"])


def _pivot(plan: dict, t: pd.DataFrame, mode: str, value: str, digits: int) -> pd.DataFrame:
    """Rows: format · engine in config order; columns: tasks; a cold figure not verified cold
    carries a †, an engine that cannot read the format "n/a"."""
    d = t[t["mode"] == mode]
    if d.empty:
        return pd.DataFrame()
    order = {f: i for i, f in enumerate(plan_record.format_names(plan))}
    flag = d.cold_verified.map(lambda v: " †" if v is False else "")
    d = d.assign(cell=d[value].map(lambda v: "" if pd.isna(v) else f"{v:,.{digits}f}") + flag)
    na = not_applicable(plan, d).merge(d[["task"]].drop_duplicates(), how="cross")
    d = pd.concat([d, na.assign(cell="n/a")], ignore_index=True)
    d = d.assign(row=_row_name(plan, d), rank=d.format.map(lambda f: order.get(f, len(order))))
    wide = d.pivot_table(index=["rank", "row"], columns="task", values="cell", aggfunc="first")
    wide.columns = [f"task {n}" for n in wide.columns]
    return wide.reset_index().drop(columns="rank").rename(columns={"row": "format · engine"})


def _selected(t: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """Per task: its question, the columns it reads, and per sample the events it selects."""
    per = rows.drop_duplicates(["sample", "task"])
    per = per.assign(cell=per.apply(lambda r: f"{r.selected_events:,} / {r.n_events:,} "
                                              f"({r.selected_events / r.n_events:.1%})", axis=1))
    wide = per.pivot(index="task", columns="sample", values="cell")
    first = t.drop_duplicates("task").set_index("task")
    return pd.concat([first[["question", "columns"]], wide], axis=1).reset_index()


def _bytes(plan: dict, t: pd.DataFrame) -> pd.DataFrame:
    """Per task, the compressed bytes per event of its columns in each queried file."""
    d = t.drop_duplicates(["task", "format", "variant", "cluster_size"])
    d = d.assign(file=d.format.map(lambda f: plan_record.label(plan, f)) + " " + d.variant
                 + " c" + d.cluster_size.astype(str))
    wide = d.pivot(index="task", columns="file", values="zip_bytes_per_event").round(1)
    return pd.concat([d.drop_duplicates("task").set_index("task")[["n_columns"]], wide],
                     axis=1).reset_index()


def _answer(a: pd.DataFrame, mode: str) -> pd.DataFrame | str:
    """One cache mode's answer per task: the ratio with its interval (its coverage and the
    repetitions per side where below 95%), † where a cold read was not verified cold, and the
    winner of each side with its events/s."""
    d = a[a["mode"] == mode]
    if d.empty:
        return f"No task was queried {mode} on both a ROOT and a Parquet file."
    ratio = [interval_cell(v, lo, hi, c, 3, n, "repetitions per side")
             + (" †" if verified is False else "")
             for v, lo, hi, c, n, verified in zip(d.ratio_mean, d.ratio_lo, d.ratio_hi,
                                                  d.coverage, d.n_over, d.cold_verified,
                                                  strict=True)]
    return pd.DataFrame({
        "task": d.task, "question": d.question, "ROOT / Parquet [interval]": ratio,
        "fastest on ROOT files": d.root,
        "ROOT events/s": d.root_events_per_s.map("{:,.0f}".format),
        "fastest on Parquet": d.parquet,
        "Parquet events/s": d.parquet_events_per_s.map("{:,.0f}".format)})


def _first(plan: dict, f: pd.DataFrame) -> pd.DataFrame | str:
    """Per format · engine: the first run in a fresh process, and what of it is one-off."""
    if f.empty:
        return "Not measured (records from before the first run was timed)."

    def s(v: float) -> str:
        return "" if pd.isna(v) else f"{v:.3f}"

    return pd.DataFrame({
        "format · engine": _row_name(plan, f), "task": f.task,
        "first histogram (s)": [mean_pm(m, d, 3, n) for m, d, n in zip(
            f.first_s_mean, f.first_s_std, f.n_samples, strict=True)],
        "its CPU (s)": f.first_cpu_s_mean.map(s),
        "warm run of the task (s)": f.warm_median_s_mean.map(s),
        "one-off (s)": f.one_off_s_mean.map(s)})


def query_sections(plan: dict, t: pd.DataFrame, rows: pd.DataFrame,
                   answer: pd.DataFrame | None = None,
                   first: pd.DataFrame | None = None) -> list[Section]:
    if t.empty:
        return [("Nothing measured", "No query was measured (measure.queries is empty, or no "
                                     "engine reads the study's formats).")]
    base = t.baseline.iloc[0] or "no RDataFrame TTree query"
    answer = answer if answer is not None else pd.DataFrame(columns=["mode"])
    first = first if first is not None else pd.DataFrame()
    return [
        ("Events selected per task (the reference's answer, equal for every engine)",
         _selected(t, rows)),
        (f"Per task, ROOT or Parquet, warm cache: {ANSWER_MEANING}", _answer(answer, "warm")),
        (f"Per task, ROOT or Parquet, cold cache († = eviction not verified): {ANSWER_MEANING}",
         _answer(answer, "cold")),
        (FIRST_MEANING, _first(plan, first)),
        ("Warm cache: events/s (per sample the median of repetitions; mean over samples)",
         _pivot(plan, t, "warm", "events_per_s_mean", 0)),
        ("Cold cache: events/s († = eviction not verified by mincore: not a cold figure)",
         _pivot(plan, t, "cold", "events_per_s_mean", 0)),
        (f"Warm cache: rate relative to {base}", _pivot(plan, t, "warm", "ratio_to_baseline", 2)),
        ("Cold cache: rate relative to " + base, _pivot(plan, t, "cold", "ratio_to_baseline", 2)),
        ("What each task reads: columns, and their compressed bytes per event in each file",
         _bytes(plan, t)),
        ("Not applicable: engines that cannot read a queried format, and why",
         _reasons(plan, t)),
    ]


def _reasons(plan: dict, t: pd.DataFrame) -> pd.DataFrame | str:
    na = not_applicable(plan, t)
    if na.empty:
        return "None: no engine of the registry marks a queried format as one it cannot read."
    return pd.DataFrame({"format · engine": _row_name(plan, na), "reason": na.reason})


def tabulate_queries(plan: dict, query_files: Iterable[str | Path], out_dir: str | Path,
                     provenance_path: str | Path | None = None) -> dict:
    """``tables/queries.{csv,md,html}``, ``queries-ratios.csv`` (per task the best-ROOT /
    best-Parquet ratio, :mod:`.query_answer`), ``queries-first.csv`` (the time to the first
    histogram, :mod:`.query_first`) and their provenance; returns the provenance."""
    out = Path(out_dir)
    query_files = list(query_files)
    docs = [QueryRecord.load(p) for p in query_files]
    rows, provs = query_rows(docs)
    prov = merged_provenance(plan["config"], out, provs, len(query_files),
                             rows if not rows.empty else pd.DataFrame({"n": []}))
    counts = (f"{len(query_files)} files queried; {len(rows)} task × engine × cache-mode "
              f"measurements of {prov['repetitions']} timed repetitions each (after one run apart: "
              "untimed, or for a process's first task its time to the first histogram; every "
              "run's histograms equal the reference's); spread = std over samples")
    lines = provenance_lines(prov, counts)
    t = query_table(plan, rows) if not rows.empty else pd.DataFrame()
    answer = answer_table(plan, rows)
    first = first_table(first_rows(docs))
    write_csv(with_labels(plan, t), out / f"{tn.QUERIES}.csv", lines)
    write_csv(answer, out / f"{tn.QUERY_RATIOS}.csv", lines)
    write_csv(with_labels(plan, first), out / f"{tn.QUERY_FIRST}.csv", lines)
    write_doc("Analysis queries (IRIS-HEP ADL benchmark tasks): events/s per task, format "
              "and engine", query_sections(plan, t, rows, answer, first), out / f"{tn.QUERIES}.md",
              lines, prov["cpus"])
    write_json(provenance_path or out / "queries-provenance.json", prov)
    return prov
