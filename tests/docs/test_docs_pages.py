"""What a reader of the docs, the README and the changelog meets is generated, and what they cite
exists (issue 39: of the README's 128 claims, 20 contradicted the tables they cited, because
numbers were typed and then drifted).

The rule for measured numbers: prose never carries one. A measured result reaches a page only
as a snippet include of a committed generated file (``--8<-- "results/reference/..."``), a
block rendered from code (``<!-- generated: ... -->``), or, in the README, the generated answer
between its markers. Everything else is scanned: a decimal, a number with a unit of time,
size or rate, a percentage, or a factor (``2×``) fails the test unless it is on the small
allowlist below, each entry with why it is no measurement (a version, a date, the coverage an
interval is defined at). Fenced code blocks (commands, config, output shapes) and link
targets are not prose and are not scanned; a bare integer (a branch count, a cluster size, an
issue number, a year) is a fact of the schema or the config, not a measurement.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers import ROOT
from hepfmt.report.answer import BEGIN, END

DOCS = ROOT / "docs"
README = ROOT / "README.md"
CHANGELOG = ROOT / "CHANGELOG.md"
README_MAX_LINES = 300  # issue 39
REFERENCE_ANSWER = ROOT / "results" / "reference" / "amd-epyc" / "answer.md"


def pages() -> list[Path]:
    """Every Markdown page of the site (the hooks' folder holds code, not pages)."""
    return sorted(p for p in DOCS.rglob("*.md") if "hooks" not in p.relative_to(DOCS).parts)


def documents() -> list[Path]:
    return [README, CHANGELOG, *pages()]


def without_answer(text: str) -> str:
    """The README less its generated answer block (the lead's test checks that block)."""
    if BEGIN not in text:
        return text
    head, rest = text.split(BEGIN, 1)
    return head + rest.split(END, 1)[1]


# --- what is prose ----------------------------------------------------------------------------

FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>```|~~~)")
SNIPPET = re.compile(r"^\s*(?:<!--\s*)?-{1,}8<-{1,}")
COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
LINK_TARGET = re.compile(r"\]\([^)\s]*(?:\s+\"[^\"]*\")?\)")
URL = re.compile(r"https?://\S+")


def prose_lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, text) of the lines a reader reads as prose: outside fenced code blocks, not
    a snippet include, HTML comments and link targets cut out."""
    fence = None
    for number, line in enumerate(text.splitlines(), 1):
        match = FENCE.match(line)
        if fence is None and match:
            fence = match.group("fence")
            continue
        if fence is not None:
            if line.strip().startswith(fence):
                fence = None
            continue
        if SNIPPET.match(line):
            continue
        yield number, line


def scannable(text: str) -> Iterator[tuple[int, str]]:
    text = COMMENT.sub(lambda m: "\n" * m.group().count("\n"), text)
    for number, line in prose_lines(text):
        yield number, URL.sub("", LINK_TARGET.sub("]()", line))


# --- measured numbers -------------------------------------------------------------------------

NUMBER = r"\d[\d,]*(?:\.\d+)?"
UNITS = (r"ns|µs|us|ms|s|sec|seconds?|min|minutes?|h|hours?|days?|B|kB|KB|MB|GB|TB|KiB|MiB|GiB"
         r"|bytes?|Gb/s|Mb/s|B/s|kB/s|MB/s|GB/s|events/s|IOPS|ops/s")
MEASURED = {
    "a decimal": re.compile(r"(?<![\w.])\d+\.\d+(?![\w.])"),
    "a number with a unit": re.compile(rf"(?<![\w.]){NUMBER}\s?(?:{UNITS})(?![\w/])"),
    "a percentage": re.compile(rf"(?<![\w.]){NUMBER}\s?%"),
    "a factor": re.compile(rf"(?<![\w.]){NUMBER}\s?[×x](?![\w])|×\s?{NUMBER}"),
    "a range of numbers": re.compile(rf"(?<![\w.]){NUMBER}\s?[-–]\s?{NUMBER}\s?(?:{UNITS}|%|×)"),
}

#: Numbers that are no measurement, each with why. A pattern is cut out before the scan.
ALLOWED = {
    # a library, tool or format at a version (what produced a number, not the number)
    "version": re.compile(
        r"\b(?:ROOT|Python|pyarrow|parquet-cpp|uproot|awkward|coffea|dask|dask-awkward|"
        r"DuckDB|polars|vortex-data|SLURM|Debian|NanoAOD|Snakemake|MkDocs)\s*(?:≥|>=|<|==)?\s*"
        r"v?\d+(?:\.\d+)*"),
    "dotted version or date version": re.compile(r"(?<![\w.])v?\d+\.\d+\.\d+(?![\w.])"),
    "a release": re.compile(r"\bsince \d{4}\.\d+\b"),
    "a date": re.compile(r"\b\d{4}-\d{2}-\d{2}\b"),
    # the coverage an order-statistic interval is defined at (six rounds give 95%, three 75%)
    "coverage level": re.compile(r"(?<![\w.])(?:95|75)\s?%"),
    # a config value as written in a config (`data_page_version: "2.0"`)
    "a config value": re.compile(r"`[\w.]+:\s*\"?\d+(?:\.\d+)?\"?`"),
    # the fault study's damage kinds: blocks of a page's size swapped or copied
    "a damage kind": re.compile(r"\b4 KiB blocks\b"),
}


def measured_numbers(text: str) -> list[tuple[int, str, str]]:
    """(line, kind, the number) of every measured-looking number in ``text``'s prose."""
    found = []
    for number, line in scannable(text):
        for pattern in ALLOWED.values():
            line = pattern.sub(" ", line)
        for kind, pattern in MEASURED.items():
            found += [(number, kind, m.group().strip()) for m in pattern.finditer(line)]
    return found


@pytest.mark.parametrize("path", documents(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_measured_number_is_typed(path: Path) -> None:
    text = path.read_text()
    if path == README:
        text = without_answer(text)
    assert measured_numbers(text) == [], (
        "a measured number typed into prose: include it from a generated file instead "
        "(see this test's docstring for the rule)")


@pytest.mark.parametrize("text, kind", [
    ("ROOT reads 2.09 times faster", "a decimal"),
    ("make run took 19 min", "a number with a unit"),
    ("126,000 events/s", "a number with a unit"),
    ("41 of 44 within 3%", "a percentage"),
    ("about 2× pyarrow's", "a factor"),
    ("0.368 vs 0.390", "a decimal"),
    ("a read of 1.02-1.29 s", "a decimal"),
])
def test_the_scan_finds_typed_results(text: str, kind: str) -> None:
    assert kind in {k for _, k, _ in measured_numbers(text)}


@pytest.mark.parametrize("text", [
    "ROOT 6.40 vs pyarrow 26 on 1499 branches at 100000-event clusters",
    "dask stays at 2025.3.1 (issue 39), on 2026-11-26",
    "an interval of 95% over six rounds, 75% over three",
    "```\nmake run  # took 19 min\n```",
    '--8<-- "results/reference/amd-epyc/ratios.md"',
    "[the table](runs/amd-epyc/v1.2.md) and <!-- 3.5 s -->",
])
def test_the_scan_passes_what_is_not_measured(text: str) -> None:
    assert measured_numbers(text) == []


# --- cited files ------------------------------------------------------------------------------

TOPS = ("results", "config", "tools", "analysis", "workflow", "docs", "tests", "envs")
CITED = re.compile(rf"(?<![\w/.-])((?:{'|'.join(TOPS)})/[\w./<>{{}}*…,+-]*)")
LINK = re.compile(r"\]\((?P<target>[^)\s#]*)(?:#[^)\s]*)?(?:\s+\"[^\"]*\")?\)")
INCLUDE = re.compile(r"-{1,}8<-{1,}\s+\"(?P<path>[^\":]+)(?::[^\"]*)?\"")
TEMPLATE = re.compile(r"[<{*…]|\.\.\.")


def cited_paths(path: Path) -> Iterator[tuple[int, str, Path]]:
    """(line, as written, the file in the checkout) of every file ``path`` cites: its links,
    its snippet includes and the repository paths its prose names. A path with a template part
    (``<cpu>``, ``{md,csv}``, ``*``) stands for its fixed prefix. Run outputs (``results/``
    outside ``results/reference/``) are not in a checkout and are not checked."""
    text = COMMENT.sub(lambda m: "\n" * m.group().count("\n"), path.read_text())
    for number, line in enumerate(text.splitlines(), 1):
        for m in INCLUDE.finditer(line):
            yield number, m.group("path"), ROOT / m.group("path")
    for number, line in prose_lines(text):
        for m in LINK.finditer(line):
            target = m.group("target")
            if target and not re.match(r"[a-z]+:", target):
                yield number, target, linked(path, target)
        for m in CITED.finditer(LINK.sub("", line)):
            written = m.group(1).rstrip(".,;:")
            fixed = TEMPLATE.split(written, 1)[0]
            if written.startswith("results/") and not written.startswith("results/reference"):
                continue
            yield number, written, ROOT / (fixed.rsplit("/", 1)[0] if fixed != written else fixed)


def linked(page: Path, target: str) -> Path:
    """The checkout's file a link reaches. A docs page's ``results/...`` links reach the
    reference runs the site serves under that path (docs/hooks/reference.py)."""
    if page.is_relative_to(DOCS):
        resolved = (page.parent / target).resolve()
        inside = resolved.relative_to(DOCS.resolve()) if resolved.is_relative_to(DOCS.resolve()) \
            else None
        if inside is not None and inside.parts[:1] == ("results",):
            return ROOT / inside
        return resolved
    return (page.parent / target).resolve()


@pytest.mark.parametrize("path", documents(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_cited_file_exists(path: Path) -> None:
    missing = [(line, written) for line, written, file in cited_paths(path) if not file.exists()]
    assert missing == []


def test_the_citation_scan_sees_links_includes_and_named_paths(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text('[a](nope.md) see `analysis/nope.py` and results/reference/<cpu>/x\n'
                    '--8<-- "results/reference/nope.md"\n```\nconfig/my.yaml\n```\n'
                    'and results/tables/answer.md, a run output\n')
    written = {w for _, w, _ in cited_paths(page)}
    assert written == {"nope.md", "analysis/nope.py", "results/reference/<cpu>/x",
                       "results/reference/nope.md"}


# --- the README -------------------------------------------------------------------------------

def test_readme_is_short() -> None:
    assert len(README.read_text().splitlines()) <= README_MAX_LINES


def test_readme_stays_short_with_the_reference_answer_in_it() -> None:
    """The answer block is filled from the reference's answer.md: with it, the README still fits."""
    if not REFERENCE_ANSWER.exists():
        pytest.skip(f"{REFERENCE_ANSWER.relative_to(ROOT)} not generated yet")
    lines = README.read_text().splitlines()
    block = lines.index(END) - lines.index(BEGIN) - 1
    answer = REFERENCE_ANSWER.read_text().rstrip("\n").splitlines()
    assert len(lines) - block + len(answer) <= README_MAX_LINES


def test_readme_has_the_answer_block_and_the_summary_figure() -> None:
    text = README.read_text()
    assert text.count(BEGIN) == 1 and text.count(END) == 1
    assert "](results/reference/amd-epyc/figures/answer.png)" in text
