"""The plan record (``{results}/plan.json``, written by ``hepfmt plan-record``) as the report
reads it.

The report never re-plans the study from the config: labels, reader lists, pairings and the
reader standing for each side of a pairing come from this one file, so tables and figures show
what the workflow planned even if the planning code has changed since. Formats, pairings and
selections are lists in the record; their order is the config's, which legends and rows follow.
"""

from __future__ import annotations

from pathlib import Path

from hepfmt import records

KEYS = ("formats", "pairs", "selections", "threads", "config")
#: A typical NanoAOD file's length, for a record from before ``compare.file_events``.
FILE_EVENTS = 1_000_000


def load(path: str | Path) -> dict:
    return records.load(path, KEYS, "plan record (from 'hepfmt plan-record')")


def format_names(plan: dict) -> list[str]:
    """The config's format names, in config order."""
    return [f["name"] for f in plan["formats"]]


def _format(plan: dict, fmt: str) -> dict:
    return next((f for f in plan["formats"] if f["name"] == fmt), {})


def label(plan: dict, fmt: str) -> str:
    """How tables and figures call the format ``fmt`` (a name the plan lacks stays itself)."""
    return _format(plan, fmt).get("label", fmt)


def adapter(plan: dict, fmt: str) -> str:
    return _format(plan, fmt).get("adapter", fmt)


def readers(plan: dict, fmt: str) -> list[str]:
    """The readers timed on ``fmt``, its default reader first."""
    return _format(plan, fmt).get("readers", [])


def variants(plan: dict, fmt: str) -> list[str]:
    return _format(plan, fmt).get("variants", [])


def selections(plan: dict) -> dict[str, list[str] | str]:
    """Selection name -> its branches (or ``"*"``), in config order."""
    return {s["name"]: s["branches"] for s in plan["selections"]}


def resolved(plan: dict) -> dict[str, dict[str, list[str] | str | None]]:
    """Selection name -> sample -> the branches read (``"*"``: all; None: not known to the
    plan, a remote sample's). A record from before per-sample selections has none."""
    return {s["name"]: s.get("resolved", {}) for s in plan["selections"]}


def mix_kinds(plan: dict) -> bool:
    """Whether real and synthetic samples are averaged together (``tabulate.mix_kinds``)."""
    return bool(plan.get("mix_kinds", False))


def pair_labels(plan: dict) -> list[str]:
    """The pairings' labels in config order (a label given twice counts once)."""
    return list(dict.fromkeys(p["label"] for p in plan["pairs"]))


def file_events(plan: dict) -> int:
    """The file length (events) at which whole-file time ratios are stated
    (``compare.file_events``): a ratio of whole-file times depends on the length, because the
    one-off set-up weighs less in a longer file."""
    return int(plan.get("file_events", FILE_EVENTS))
