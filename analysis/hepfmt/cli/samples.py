"""Making and judging source samples: generate, import, schema extract, validate-model.

Import, schema extract and validate-model read a file from elsewhere, so each runs in a child
process (:func:`hepfmt.measure.isolated.call`) under the memory cap and the time limit: a
damaged file that makes a library loop or allocate without bound is refused in one line. The
functions the children run are here, beside their commands."""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

from hepfmt.cli.arguments import (
    command,
    config_value,
    input_file,
    known_process,
    time_limit_argument,
)
from hepfmt.errors import UsageError

#: An import or a judgement has no time-out of its own: the file's time limit bounds it.
NO_TIMEOUT = math.inf


def cmd_generate(a: argparse.Namespace) -> None:
    from hepfmt.samples.generate import generate
    from hepfmt.samples.model import load_model
    from hepfmt.samples.source import write_sidecar

    known_process(a.process)
    model = load_model(a.model)
    t0 = time.perf_counter()
    generate(model, a.process, a.seed, a.events, a.output)
    dt = time.perf_counter() - t0
    print(f"generated {a.events} events of {len(model.schema.branches)} branches in {dt:.2f} s "
          f"({a.events / dt:,.0f} events/s, one core)", file=sys.stderr)
    write_sidecar(a.output, model.schema, a.sample or Path(a.output).stem, process=a.process,
                  seed=a.seed, model_origin=model.origin)


def import_file(file: str, tree: str, output: str, sample: str) -> None:
    """The import, in its child: the source and its sidecar."""
    from hepfmt.samples.importer import import_tree
    from hepfmt.samples.source import write_sidecar

    schema = import_tree(file, tree, output)
    write_sidecar(output, schema, sample, process="real", source_file=file, tree=tree)


def cmd_import(a: argparse.Namespace) -> None:
    from hepfmt.measure import isolated

    input_file(a.file, "input file")
    isolated.call("hepfmt.cli.samples:import_file",
                  {"file": a.file, "tree": a.tree, "output": a.output,
                   "sample": a.sample or Path(a.output).stem}, a.file, "import", NO_TIMEOUT)


def extract_model(file: str, tree: str, output: str) -> str:
    """The schema extract, in its child: the model written, and what it holds."""
    from hepfmt.atomic import atomic_path
    from hepfmt.samples.learn import extract

    model = extract(file, tree)
    with atomic_path(output) as tmp:
        model.to_json(tmp)
    return (f"{len(model.schema.branches)} branches, {len(model.multiplicity)} collections, "
            f"learned from {model.n_events} events of {model.origin}")


def cmd_schema_extract(a: argparse.Namespace) -> None:
    from hepfmt.measure import isolated

    input_file(a.file, "input file")
    held = isolated.call("hepfmt.cli.samples:extract_model",
                         {"file": a.file, "tree": a.tree, "output": a.output}, a.file,
                         "schema extract", NO_TIMEOUT)
    print(f"{a.output}: {held}", file=sys.stderr)


def _judge_model(a: argparse.Namespace, notes: list[str]) -> tuple[str, object]:
    """validate-model's judgement: the report's text and the tables its verdict is on (out of
    sample: the model at the judged events' multiplicities, :mod:`.heldout`)."""
    from hepfmt.measure import fidelity, heldout
    from hepfmt.samples.inputs import extract_schema

    if a.held_out:
        result = heldout.held_out(a.file, a.tree, a.seed)
        return heldout.report(result, notes), result.values
    if a.learn_from:
        from hepfmt.samples.learn import extract

        model = extract(a.learn_from, a.tree)
    else:
        from hepfmt.samples.model import load_model

        model = load_model(a.model)
    mismatch = fidelity.schema_mismatch(model.schema, extract_schema(a.file, a.tree))
    if mismatch:
        notes.append(mismatch)
    if a.learn_from:
        result = heldout.judge(a.file, model, a.tree, a.seed)
        return heldout.report(result, notes), result.values
    tables = fidelity.compare(a.file, model, a.tree, a.seed)
    return fidelity.report(tables, a.file, model.origin, notes), tables


def judge_model(**options: object) -> dict:
    """validate-model's judgement, in its child: the report, the notes to warn of, and the
    checks that miss the goal (their count and the worst three)."""
    from hepfmt.measure.fidelity import failed

    notes: list[str] = []
    text, tables = _judge_model(argparse.Namespace(**options), notes)
    missed = failed(tables)
    return {"text": text, "notes": notes, "missed": len(missed), "worst": ", ".join(missed[:3])}


def cmd_validate_model(a: argparse.Namespace) -> None:
    """Judge a model against a real file: a given one (or the built-in), one learned from
    another file (``--learn-from``), or one learned from the file's first half and judged
    against its second (``--held-out``)."""
    from hepfmt.errors import VerificationError
    from hepfmt.measure import fidelity, isolated
    from hepfmt.measure.fidelity import GOAL

    if a.held_out and (a.model or a.learn_from):
        raise UsageError("--held-out", "learns its model from the file's first half: "
                                        "give neither MODEL nor --learn-from")
    if a.model and a.learn_from:
        raise UsageError("--learn-from", "give MODEL or --learn-from, not both")
    input_file(a.file, "input file")
    for path in (a.model, a.learn_from):
        if path:
            input_file(path, "input file")
    judged = isolated.call("hepfmt.cli.samples:judge_model", {
        "file": a.file, "model": a.model, "tree": a.tree, "held_out": a.held_out,
        "learn_from": a.learn_from, "seed": a.seed}, a.file, "validate-model", NO_TIMEOUT,
        busy_s=fidelity.work_s(2 if a.held_out or a.learn_from else 1))
    for note in judged["notes"]:
        print(f"hepfmt validate-model: warning: {a.file}: {note}", file=sys.stderr)
    print(judged["text"])
    if a.output:
        Path(a.output).write_text(judged["text"])
    if judged["missed"] and not a.report_only:
        raise VerificationError(a.file, f"the synthetic sample fails {judged['missed']} checks "
                                        f"(the {GOAL:.0%} goal, the real file's relations; "
                                        f"worst: {judged['worst']})")


def register(sub: argparse._SubParsersAction) -> None:
    g = command(sub, "generate", "generate a NanoAOD-like source sample (Arrow IPC) and its "
                "sidecar JSON", "generate --process TTJets --events 5000 --seed 2 -o tt.arrow")
    g.add_argument("--process", required=True,
                   help="the physics process (multiplicities and rates), e.g. DYJetsToLL, "
                        "TTJets, ZZ (analysis/hepfmt/samples/processes.py)")
    g.add_argument("--events", type=config_value("samples.*.n_events"), required=True,
                   help="how many events (entries) to generate")
    g.add_argument("--seed", type=config_value("samples.*.seed"), default=1,
                   help="the random seed: the same seed, the same events (default: %(default)s)")
    g.add_argument("--sample", help="sample name recorded in the sidecar (default: file stem)")
    g.add_argument("--model", help="value model JSON from 'hepfmt schema extract' "
                                   "(default: the built-in model of CMS NanoAOD)")
    g.add_argument("-o", "--output", required=True,
                   help="the source to write (.arrow); its sidecar (.json) is written beside it")
    g.set_defaults(func=cmd_generate)

    i = command(sub, "import", "copy a real TTree, RNTuple or Parquet file or directory "
                "(NanoAOD or any flat/jagged table, local or root://) into a source sample",
                "import nano.root --tree Events -o results/sources/real.arrow")
    i.add_argument("file", help="the file or directory to copy: TTree, RNTuple or Parquet, "
                                "local or root://")
    i.add_argument("--tree", default="Events", help="TTree or RNTuple name (not for Parquet)")
    i.add_argument("--sample", help="sample name recorded in the sidecar (default: file stem)")
    i.add_argument("-o", "--output", required=True,
                   help="the source to write (.arrow); its sidecar (.json) is written beside it")
    time_limit_argument(i)
    i.set_defaults(func=cmd_import)

    s = command(sub, "schema", "branch schemas and value models",
                "schema extract nano.root -o model.json")
    ssub = s.add_subparsers(dest="schema_command", required=True, metavar="SUBCOMMAND")
    se = command(ssub, "extract", "learn a value model (schema, value distributions, "
                 "multiplicities, mantissa bits) from a real file: TTree, RNTuple or Parquet",
                 "schema extract nano.root --tree Events -o model.json")
    se.add_argument("file", help="the real file to learn from: TTree, RNTuple or Parquet")
    se.add_argument("--tree", default="Events", help="TTree or RNTuple name (not for Parquet)")
    se.add_argument("-o", "--output", required=True, help="the value model JSON to write")
    time_limit_argument(se)
    se.set_defaults(func=cmd_schema_extract)

    v = command(sub, "validate-model", "compare a real file with a synthetic sample of the same "
                "size, written through the same codecs",
                "validate-model nano.root --held-out -o fidelity.md")
    v.add_argument("file", help="the real file: TTree, RNTuple or Parquet (file or directory)")
    v.add_argument("model", nargs="?", help="value model JSON (default: built-in)")
    v.add_argument("--tree", default="Events", help="TTree or RNTuple name (not for Parquet)")
    v.add_argument("--held-out", action="store_true",
                   help="out of sample: learn the model from the file's first half of entries "
                        "and judge it against the second")
    v.add_argument("--learn-from", metavar="FILE",
                   help="out of sample: learn the model from this file (same --tree) and "
                        "judge it against the first")
    v.add_argument("--seed", type=config_value("samples.*.seed"), default=1,
                   help="the random seed of the synthetic sample (default: %(default)s)")
    v.add_argument("-o", "--output", help="also write the report (Markdown) here")
    v.add_argument("--report-only", action="store_true",
                   help="exit 0 even when the synthetic sample misses the goal")
    time_limit_argument(v)
    v.set_defaults(func=cmd_validate_model)
