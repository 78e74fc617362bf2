"""Table documents with their provenance: CSV, Markdown and its HTML twin.

Every table hepfmt writes (the read study's and the metadata study's) goes through here, so each
carries the same provenance block: ``#`` lines atop a CSV (``pandas.read_csv(comment="#")``
skips them), a closing section in Markdown and HTML. A reader of any one file can tell which
versions, machine and config made its numbers.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from html import escape
from pathlib import Path

import pandas as pd

from hepfmt import records
from hepfmt.atomic import atomic_path
from hepfmt.provenance import batch_summary, collect, describe_batch, describe_filesystem

#: A document section: a heading and a DataFrame (a table) or a string (a paragraph).
Section = tuple[str, "pd.DataFrame | str"]


def cpus_of(provs: Iterable[dict]) -> list[str]:
    """The CPU models measurements ran on, each once, in the order met: a timing means nothing
    without the CPU that made it, and a table of two machines' timings names both."""
    return list(dict.fromkeys(str(p.get("machine", {}).get("cpu", "unknown CPU"))
                              for p in provs))


def provenance_cpus(prov: dict) -> list[str]:
    """The CPU models of a tabulation's measurements (:func:`merged_provenance`); a provenance
    from before that list names its one machine's."""
    return list(prov.get("cpus") or cpus_of([prov]))


def measured_on(cpus: Sequence[str]) -> str:
    """``measured on AMD EPYC 7763``; several CPUs are all named."""
    if not cpus:
        return ""
    return "measured on " + (cpus[0] if len(cpus) == 1 else
                             f"{len(cpus)} CPUs: " + "; ".join(cpus))


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
                  "read); spread = std over samples of per-sample medians"
                  + (f"; {prov['n_pair_measurements']} paired ROOT / Parquet measurements"
                     if prov.get("n_pair_measurements") else ""))
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


def read_provenance(path: str | Path) -> dict:
    """A ``provenance.json`` as ``tabulate`` wrote it (what a figure's footer names)."""
    return records.load(path, ("versions", "machine", "date"), "hepfmt provenance file")


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
    prov["cpus"] = cpus_of(provs)
    prov["filesystem"] = json.loads(filesystems[0])
    prov["mixed"] = [k for k, v in (("versions", versions), ("machine", machines),
                                    ("filesystem", filesystems)) if len(v) > 1]
    prov["batch"] = batch_summary(p.get("batch", {}) for p in provs)
    prov["n_files"] = n_sizes
    prov["n_read_measurements"] = len(reads)
    prov["repetitions"] = int(reads["n"].min()) if not reads.empty else 0
    prov["config"] = config
    return prov


def write_csv(df: pd.DataFrame, path: Path, prov_lines: list[str]) -> None:
    with atomic_path(path) as tmp, open(tmp, "w") as f:
        for line in prov_lines:
            f.write(f"# {line}\n")
        df.to_csv(f, index=False)


def write_doc(title: str, sections: list[Section], path: Path, prov_lines: list[str],
              cpus: Sequence[str] = ()) -> None:
    """One table document twice: ``path`` (``.md``, for the repository and terminals) and its
    ``.html`` twin (shown inline by ``snakemake --report``; a CSV there is only a download).
    Every table's heading names ``cpus``, the CPU models its numbers were measured on, so that
    a table copied out alone still says which machine it describes."""
    md = [f"# {title}", ""]
    html = [f"<h1>{escape(title)}</h1>"]
    on = measured_on(cpus)
    for heading, body in sections:
        if on and isinstance(body, pd.DataFrame):
            heading = f"{heading} ({on})"
        md += [f"## {heading}", ""]
        html.append(f"<h2>{escape(heading)}</h2>")
        if isinstance(body, pd.DataFrame):
            # a cell nothing was measured for is empty, not "nan"; a "|" in a cell (|eta|)
            # would end it
            cells = body.astype(object).where(body.notna(), "")
            cells = cells.map(lambda v: v.replace("|", "\\|") if isinstance(v, str) else v)
            md.append(cells.rename(columns=lambda c: str(c).replace("|", "\\|"))
                      .to_markdown(index=False))
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
