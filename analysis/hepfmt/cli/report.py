"""From records to tables and figures, and the config's check: plan-record, tabulate, figure,
check-config."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hepfmt.cli.arguments import command


def cmd_plan_record(a: argparse.Namespace) -> None:
    from hepfmt.atomic import write_json
    from hepfmt.plan import config as cfg
    from hepfmt.plan.record import record

    write_json(a.output, record(cfg.load(a.config)))


def cmd_tabulate(a: argparse.Namespace) -> None:
    from hepfmt.report import plan_record
    from hepfmt.report.tables import tabulate

    tabulate(plan_record.load(a.plan), a.sizes, a.reads, a.output, a.provenance, a.pairs)


def cmd_figure(a: argparse.Namespace) -> None:
    from hepfmt.report.figures import make

    for path in make(a.family, a.tables, a.provenance, a.plan, a.output, a.config_name):
        print(f"wrote {path}", file=sys.stderr)


def cmd_answer(a: argparse.Namespace) -> None:
    from hepfmt.report import answer

    written = answer.write(a.tables, a.output or a.tables, a.metadata, a.provenance, a.source,
                           a.other_reference)
    for gap in written.facts.gaps:
        print(f"hepfmt answer: {gap.text}", file=sys.stderr)
    if a.into:
        answer.embed(a.into, Path(a.output or a.tables) / "answer.md")


def cmd_check_config(a: argparse.Namespace) -> None:
    """Everything a run would refuse, refused now; then what the run will cost, and where that
    exceeds this machine (warnings only: the run may go to a batch cluster)."""
    from hepfmt.errors import ConfigError
    from hepfmt.plan import calibration, cost, reach, resources
    from hepfmt.plan import config as cfg

    c = cfg.load(a.config)
    for key, why in reach.unreachable(c):
        if a.strict:
            raise ConfigError(key, why)
        print(f"hepfmt check-config: warning: config key {key!r}: {why}", file=sys.stderr)
    if a.calibrate:  # another run's records: the default's, to estimate config/paper.yaml
        fits = calibration.fit(calibration.run_config(a.calibrate), a.calibrate)
    else:
        fits = calibration.fit(c)
    est = resources.whole_study(c, fits)
    quota = c.get("disk_quota_gb")
    if quota is not None and est.disk_gb > quota:
        raise ConfigError("disk_quota_gb", f"the planned peak disk ({est.disk_gb:,.1f} GB, "
                          f"{est.disk_words}) is above the quota of {quota:,.1f} GB: set "
                          "keep_files: false, or fewer file_groups_in_flight")
    print(f"{a.config}: valid; {len(c['samples'])} samples")
    print(est.describe())
    print(cost.basis(c))
    print(calibration.whole(c, fits).describe())
    print(calibration.describe(fits, c["results"], a.calibrate))
    print(f"timing: {resources.placement_words(c)}")
    for w in resources.machine_warnings(est, c):
        print(f"hepfmt check-config: warning: {w}", file=sys.stderr)



def register(sub: argparse._SubParsersAction) -> None:
    r = command(sub, "plan-record", "what the tables and figures need of the study (labels, "
                "readers, pairings, selections), as JSON",
                "plan-record results/config.yaml -o results/plan.json")
    r.add_argument("config", help="the resolved config (results/config.yaml)")
    r.add_argument("-o", "--output", required=True, help="where to write it (results/plan.json)")
    r.set_defaults(func=cmd_plan_record)

    t = command(sub, "tabulate", "size, read-time and ratio tables from measurements",
                "tabulate --plan results/plan.json --sizes results/sizes/*.json "
                "--reads results/reads/*.json -o results/tables")
    t.add_argument("--plan", required=True, help="the plan record (from plan-record)")
    t.add_argument("--sizes", nargs="+", required=True, help="size records from convert")
    t.add_argument("--reads", nargs="*", default=[], help="read measurements from measure")
    t.add_argument("--pairs", nargs="*", default=[],
                   help="paired ROOT / Parquet measurements from pair (the ratios' reads)")
    t.add_argument("-o", "--output", required=True, help="output directory for tables")
    t.add_argument("--provenance", help="where to write provenance.json (default: in -o)")
    t.set_defaults(func=cmd_tabulate)

    from hepfmt.report.figures import FAMILIES  # the registry: no plotting library imported

    f = command(sub, "figure", "draw one figure family (PNG + PDF) from the tables",
                f"figure {next(iter(FAMILIES))} --tables results/tables --provenance "
                "results/tables/provenance.json --plan results/plan.json -o results/figures")
    f.add_argument("family", help="a figure family: " + ", ".join(FAMILIES))
    f.add_argument("--tables", required=True, help="directory of tabulate's CSV tables")
    f.add_argument("--provenance", required=True, help="tabulate's provenance.json")
    f.add_argument("--plan", required=True, help="the plan record (from plan-record)")
    f.add_argument("--config-name", help="how the footer names the config (e.g. default.yaml)")
    f.add_argument("-o", "--output", required=True, help="output directory")
    f.set_defaults(func=cmd_figure)

    a = command(sub, "answer", "the run's answer (answer.md, answer.json) from its tables only",
                "answer --tables results/tables --metadata results/metadata/tables")
    a.add_argument("--tables", required=True,
                   help="directory of tabulate's tables (results/tables, or a reference run)")
    a.add_argument("--metadata", help="directory of the metadata study's tables, if it ran")
    a.add_argument("--provenance", help="the tables' provenance.json (default: beside them)")
    a.add_argument("-o", "--output", help="where to write answer.md and answer.json "
                                          "(default: the tables' directory)")
    a.add_argument("--source", help="how answer.md names the tables (default: --tables)")
    a.add_argument("--into", metavar="FILE", help="also copy answer.md into FILE between its "
                   "'<!-- answer:begin -->' and '<!-- answer:end -->' lines (the README)")
    a.add_argument("--other-reference", metavar="DIR", help="another CPU's run (a reference "
                   "directory, or a results directory with tables/ratios.csv): where it "
                   "disagrees with a stated ratio, the answer says so with both numbers")
    a.set_defaults(func=cmd_answer)

    k = command(sub, "check-config", "validate a config file; count its files and estimate "
                "their disk, memory and CPU", "check-config config/default.yaml")
    k.add_argument("config", help="the config file (YAML) to check")
    k.add_argument("--strict", action="store_true",
                   help="refuse a sample URL whose server cannot be reached (default: a warning)")
    k.add_argument("--calibrate", metavar="RUN",
                   help="fit the cost model to the benchmark records of the run in RUN (a "
                        "results directory that ran, or a reference) instead of this config's "
                        "own results directory: e.g. config/paper.yaml from the default's run")
    k.set_defaults(func=cmd_check_config)

