"""MkDocs hook: blocks of the docs that are facts of the code, rendered from the code.

A page asks for one with a marker line, ``<!-- generated: NAME -->``, and the build puts the
block in its place: the CLI reference from ``hepfmt.cli.build_parser()`` (every command's
``--help``), and the tables whose one home is a module (the physics processes' factors, the
storage profiles, the ADL tasks). Typed into a page, each would drift from the code it
describes; an unknown marker fails the build.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
from collections.abc import Callable, Iterator

from mkdocs.exceptions import PluginError

MARKER = re.compile(r"^<!-- generated: ([a-z-]+) -->$", re.MULTILINE)
#: The width --help is wrapped at: fixed, so the page does not depend on the terminal.
HELP_COLUMNS = 80


@contextlib.contextmanager
def _columns(width: int) -> Iterator[None]:
    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(width)
    try:
        yield
    finally:
        if before is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = before


Command = tuple[tuple[str, ...], argparse.ArgumentParser]


def commands(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> Iterator[Command]:
    """Every command and subcommand, depth first, with the words that call it."""
    yield prefix, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from commands(sub, (*prefix, name))


def cli_reference() -> str:
    from hepfmt.cli import build_parser

    parts = []
    with _columns(HELP_COLUMNS):
        for words, parser in commands(build_parser()):
            title = " ".join(("hepfmt", *words))
            level = "#" * min(2 + len(words), 4)
            parts.append(f"{level} `{title}`\n\n```text\n{parser.format_help().rstrip()}\n```\n")
    return "\n".join(parts)


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def processes_table() -> str:
    from hepfmt.samples.processes import PROCESSES

    rows = [(p.name, p.why,
             ", ".join(f"{c} ×{f:g}" for c, f in p.scale.items()) or "as learned",
             f"×{p.trigger_rate:g}") for p in PROCESSES.values()]
    return _table(("process", "why", "multiplicity scale", "trigger rates"), rows)


def storage_profiles_table() -> str:
    from hepfmt.measure.storage.profiles import PROFILES

    def rate(p) -> str:
        parts = [f"{p.bandwidth_bps / 1e6:g} MB/s"]
        if p.iops is not None:
            parts.append(f"{p.iops:g} IOPS")
        if p.latency_s:
            parts.append(f"{p.latency_s * 1e3:g} ms round trip")
        return ", ".join(parts)

    rows = [(f"`{p.name}`", p.kind, rate(p), p.description) for p in PROFILES.values()]
    return _table(("profile", "kind", "caps", "what it stands for"), rows)


def adl_tasks_table() -> str:
    from hepfmt.queries.tasks import TASKS

    rows = [(str(t.number), t.question, ", ".join(f"`{c}`" for c in t.columns))
            for t in TASKS.values()]
    return _table(("task", "question", "columns it reads"), rows)


BLOCKS: dict[str, Callable[[], str]] = {
    "cli": cli_reference,
    "processes": processes_table,
    "storage-profiles": storage_profiles_table,
    "adl-tasks": adl_tasks_table,
}


def render(markdown: str) -> str:
    """``markdown`` with every marker replaced by its block."""
    def block(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in BLOCKS:
            raise PluginError(f"unknown generated block {name!r}; known: {sorted(BLOCKS)}")
        return BLOCKS[name]()

    return MARKER.sub(block, markdown)


def on_page_markdown(markdown: str, **_: object) -> str:
    return render(markdown)
