"""The metadata-cost study of wide tables: hepfmt metadata ..."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hepfmt.cli.arguments import (
    command,
    config_value,
    input_file,
    option,
    time_limit_argument,
    timeout_argument,
)
from hepfmt.defaults import default


def cmd_metadata_write(a: argparse.Namespace) -> None:
    from hepfmt import formats
    from hepfmt.atomic import write_json
    from hepfmt.metastudy import widefiles
    from hepfmt.provenance import collect

    layout = widefiles.WideFileLayout.parse(a.layout)
    codec = formats.get("parquet" if layout.format == "parquet" else "ttree").variant(
        a.codec, "--codec")
    ds = widefiles.dataset(a.dataset, a.row_groups, a.rows_per_group, a.seed, a.source)
    record = widefiles.write(ds, layout, a.output, codec, dict(a.option))
    write_json(a.layout_output, {**record, "provenance": collect(data_path=Path(a.output).parent)})


def cmd_metadata_time(a: argparse.Namespace) -> None:
    from hepfmt.metastudy.decode import load_layout, time_file
    from hepfmt.metastudy.rusthelper import binary_from

    input_file(a.file)
    time_file(a.file, load_layout(a.layout), a.implementations.split(","), a.repetitions,
              a.budget, a.output, binary_from(a.rust_helper), a.timeout)


def cmd_metadata_tabulate(a: argparse.Namespace) -> None:
    from hepfmt.metastudy import plots, tables
    from hepfmt.plan import config as cfg
    from hepfmt.report.documents import read_provenance

    df = tables.tabulate(cfg.load(a.config), a.timings, a.output, a.provenance)
    prov = read_provenance(a.provenance or Path(a.output) / "provenance.json")
    plots.plot(df, a.plots or a.output, prov, a.config_name)


def cmd_metadata_build_helper(a: argparse.Namespace) -> None:
    from hepfmt.metastudy.rusthelper import build

    doc = build(a.output)
    print(f"arrow-rs helper: {doc.get('binary') or 'not available: ' + doc['reason']}",
          file=sys.stderr)


def register(sub: argparse._SubParsersAction) -> None:
    md = command(sub, "metadata", "metadata cost of wide tables (decode time and size vs number "
                 "of columns)", "metadata write float32-c1000 --layout parquet-page "
                 "--codec snappy+dict -o wide.parquet --layout-output wide.layout.json")
    msub = md.add_subparsers(dest="metadata_command", required=True, metavar="SUBCOMMAND")
    w = command(msub, "write", "write one wide file and verify it from its metadata",
                "metadata write float32-c1000 --layout parquet-page --codec snappy+dict "
                "-o wide.parquet --layout-output wide.layout.json")
    w.add_argument("dataset", help="float32-c<N>, string-c<N> or nanoaod-<sample>")
    w.add_argument("--layout", required=True,
                   help="parquet-none, parquet-chunk, parquet-page, ttree or rntuple")
    w.add_argument("--row-groups", type=config_value("metadata.row_groups"), default=20,
                   help="row groups (clusters) to write (default: %(default)s)")
    w.add_argument("--rows-per-group", type=config_value("metadata.rows_per_group"),
                   default=1000, metavar="EVENTS",
                   help="rows (events) per row group (default: %(default)s)")
    w.add_argument("--seed", type=config_value("metadata.seed"), default=1,
                   help="the random seed of the values (default: %(default)s)")
    w.add_argument("--codec", required=True, help="e.g. snappy+dict (Parquet), zstd-5 (ROOT)")
    w.add_argument("--source", help="the sample (Arrow IPC) of a nanoaod-<sample> dataset")
    w.add_argument("--option", type=option, action="append", default=[],
                   help="pyarrow ParquetWriter option KEY=VALUE (repeatable)")
    w.add_argument("-o", "--output", required=True, help="the wide file to write")
    w.add_argument("--layout-output", required=True,
                   help="where to write what the file's metadata says (JSON)")
    w.set_defaults(func=cmd_metadata_write)

    t = command(msub, "time", "time metadata decoding of one file, per implementation",
                "metadata time wide.parquet --layout wide.layout.json --implementations "
                "pyarrow,arrow-rs --budget-s 10 -o wide.timings.json")
    t.add_argument("file", help="a wide file from 'metadata write'")
    t.add_argument("--layout", required=True, help="the file's record from 'metadata write'")
    t.add_argument("--implementations", required=True, help="comma-separated, e.g. "
                                                             "pyarrow,arrow-rs")
    t.add_argument("--repetitions", type=config_value("metadata.repetitions"),
                   default=default("metadata.repetitions"),
                   help="the most timed decodes per implementation (default: %(default)s)")
    t.add_argument("--budget-s", "--budget", dest="budget", metavar="SECONDS",
                   type=config_value("metadata.budget_s", float),
                   default=default("metadata.budget_s"),
                   help="seconds per implementation after which "
                        f"{default('metadata.min_repetitions')} repetitions suffice "
                        "(default: %(default)s)")
    t.add_argument("--rust-helper", help="record from 'metadata build-helper' (arrow-rs)")
    timeout_argument(t, "metadata.timeout_s")
    time_limit_argument(t)
    t.add_argument("-o", "--output", required=True, help="the timings (JSON) to write")
    t.set_defaults(func=cmd_metadata_time)

    b = command(msub, "build-helper", "build the optional Rust (arrow-rs) decoder",
                "metadata build-helper -o results/metadata/rust-helper.json")
    b.add_argument("-o", "--output", required=True, help="where to record whether it built")
    b.set_defaults(func=cmd_metadata_build_helper)

    g = command(msub, "tabulate", "tables and plots from metadata timings",
                "metadata tabulate --config results/config.yaml --timings "
                "results/metadata/timings/*.json -o results/metadata/tables")
    g.add_argument("--config", required=True, help="the study's config file")
    g.add_argument("--timings", nargs="+", required=True,
                   help="timing records from 'metadata time'")
    g.add_argument("-o", "--output", required=True, help="output directory for tables")
    g.add_argument("--plots", help="output directory for plots (default: -o)")
    g.add_argument("--provenance", help="where to write provenance.json (default: in -o)")
    g.add_argument("--config-name", help="how the plots' footer names the config")
    g.set_defaults(func=cmd_metadata_tabulate)
