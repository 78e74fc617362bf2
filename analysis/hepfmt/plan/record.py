"""The plan record: what the report needs to know of the study, written once as JSON.

Tables and figures read this record (``{results}/plan.json``) instead of re-planning the study
from the config: the report then depends only on files, and one place (:mod:`.study`) decides
labels, reader lists, the ROOT / Parquet pairings and the reader standing for each side.
"""

from __future__ import annotations

from hepfmt.plan import selections, study


def record(config: dict) -> dict:
    """The plan of a validated ``config`` as a JSON-able dict. What has an order (formats,
    pairings, selections) is a list, so that the order survives any JSON writer.

    * ``formats``: per config format, in config order, its ``name``, ``label``, ``adapter``,
      ``variants`` and timed ``readers`` (the format's default reader first);
    * ``pairs``: the ROOT / Parquet pairings, each a ``label``, its reader ``threads`` and per
      side (``ttree``, ``parquet``) the ``format``, ``variant`` and ``reader`` of its ratio,
      whether the pairing ``named`` that reader, its ``kind`` (an event loop or columnar), its
      ``mode`` (stream or hand-over) and its ``knobs`` (the pyarrow memory pool it asks for);
    * ``selections``: each branch selection's ``name``, ``branches`` as the config writes
      them (a list, or ``"*"``) and ``resolved``: per sample, the branches its reads read (None
      for a remote sample: its measure job resolves them);
    * ``threads``: the reader thread counts timed;
    * ``file_events``: the file length whole-file time ratios are stated at;
    * ``mix_kinds``: whether real and synthetic samples are averaged together (``tabulate``);
    * ``config``: the config itself, which the tables' provenance hashes.
    """
    resolved = selections.per_sample(config)
    return {
        "formats": [{"name": name, "label": study.label(config, name),
                     "adapter": study.adapter(config, name),
                     "variants": list(fcfg["variants"]), "readers": study.readers(config, name)}
                    for name, fcfg in config["formats"].items()],
        "pairs": [{"label": p.label, "threads": study.pair_threads(config, p),
                   **{side: {**getattr(p, side)._asdict(),
                             "kind": study.reader_kind(config, getattr(p, side)),
                             "mode": study.reader_mode(config, getattr(p, side)),
                             "knobs": study.reader_knobs(config, getattr(p, side))}
                      for side in study.SIDES}}
                  for p in study.compare_pairs(config)],
        "selections": [{"name": str(name), "branches": branches,
                        "resolved": {sample: r[name] for sample, r in resolved.items()}}
                       for name, branches in config["measure"]["selections"].items()],
        "threads": study.thread_counts(config),
        "mix_kinds": bool(config.get("tabulate", {}).get("mix_kinds", False)),
        "file_events": study.file_events(config),
        "config": config,
    }
