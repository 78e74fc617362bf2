"""``hepfmt answer``: the run's answer to "ROOT or Parquet?", written from its tables only.

The README, the docs and the report's landing page show this answer and nothing typed beside
it (issue 39): each sentence carries its number, interval, coverage, sample count, CPU and the
table row it came from, and its words follow the interval (:mod:`.wording`). What the run's
tables cannot support is listed as a gap, never filled in.
"""

from __future__ import annotations

from pathlib import Path

from hepfmt.atomic import write_text
from hepfmt.errors import InputError
from hepfmt.report.answer.compose import Answer, build
from hepfmt.report.answer.facts import all_readers, fastest_readers
from hepfmt.report.answer.render import as_json, markdown

__all__ = ["Answer", "all_readers", "build", "embed", "embedded", "fastest_readers", "write"]


def write(tables: str | Path, out_dir: str | Path, metadata: str | Path | None = None,
          provenance: str | Path | None = None, source: str | None = None,
          other: str | Path | None = None) -> Answer:
    """Write ``answer.md`` and ``answer.json`` into ``out_dir``; ``source`` is how the header
    names the tables (default: ``tables`` as given); ``other``: another CPU's run to set the
    stated ratios against (:mod:`.cpus`)."""
    answer = build(tables, metadata, provenance, other)
    name = source or str(tables)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    write_text(out / "answer.md", markdown(answer, name))
    write_text(out / "answer.json", as_json(answer, name))
    return answer


#: The lines between which a document (the README) carries a copy of an ``answer.md``.
BEGIN, END = "<!-- answer:begin -->", "<!-- answer:end -->"


def embedded(document: str) -> str:
    """The answer block of ``document`` (without the marker lines)."""
    try:
        _head, rest = document.split(BEGIN + "\n", 1)
        block, _ = rest.split("\n" + END, 1)
    except ValueError as exc:
        raise ValueError(f"no '{BEGIN}' ... '{END}' block") from exc
    return block + "\n"


def embed(document: str | Path, answer_md: str | Path) -> None:
    """Replace ``document``'s answer block with ``answer_md``'s text."""
    text = Path(document).read_text()
    if BEGIN not in text or END not in text:
        raise InputError(document, f"has no '{BEGIN}' ... '{END}' block to fill")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    body = Path(answer_md).read_text().rstrip("\n")
    write_text(document, f"{head}{BEGIN}\n{body}\n{END}{tail}")
