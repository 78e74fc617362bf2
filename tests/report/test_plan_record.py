"""The report reads the plan record and never re-plans: the record holds what tables and
figures need, in config order, and no report module imports the planning stage."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from hepfmt.cli import main
from hepfmt.errors import InputError
from hepfmt.plan.config import validate
from hepfmt.report import plan_record

REPORT = Path(__file__).resolve().parents[2] / "analysis" / "hepfmt" / "report"


def _config() -> dict:
    return validate({
        "samples": {"A": {"process": "DYJetsToLL", "n_events": 100}},
        "cluster_sizes": [100],
        "formats": {"parquet": {"variants": ["zstd-3", "none"]},
                    "ttree": {"variants": ["none"]},
                    "ttree_b": {"adapter": "ttree", "label": "TTree B", "variants": ["none"]}},
        "measure": {"readers": {"ttree": ["uproot", "rdf"]},
                    "selections": {"zz": ["nMuon"], "10": "*"}},
        "compare": {"pairs": [{"ttree": "none", "parquet": "none", "label": "uncompressed"}],
                    "readers": {"ttree": "uproot", "parquet": "pyarrow"}},
    })


def test_plan_record_keeps_config_order_and_each_sides_reader(tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    c = tmp_path / "config.yaml"
    c.write_text(json.dumps(_config()))  # JSON is YAML
    assert main(["plan-record", str(c), "-o", str(path)]) == 0
    plan = plan_record.load(path)
    assert plan_record.format_names(plan) == ["parquet", "ttree", "ttree_b"]
    assert plan_record.label(plan, "ttree_b") == "TTree B"
    assert plan_record.adapter(plan, "ttree_b") == "ttree"
    assert plan_record.readers(plan, "ttree") == ["uproot", "rdf"]
    assert plan_record.variants(plan, "parquet") == ["zstd-3", "none"]
    assert list(plan_record.selections(plan)) == ["zz", "10"]
    (pair,) = plan["pairs"]
    # each side's reader, how it reads (kind), how it hands the data over (mode) and the
    # knobs it asks for (a memory pool)
    # (and the other formats a "fastest" side may be read from: none here)
    assert pair["ttree"] == {"format": "ttree", "variant": "none", "reader": "uproot",
                             "named": False, "candidates": [], "kind": "columnar",
                             "mode": "hand-over", "knobs": {}}
    assert pair["parquet"] == {"format": "parquet", "variant": "none", "reader": "pyarrow",
                               "named": False, "candidates": [], "kind": "columnar",
                               "mode": "hand-over", "knobs": {"memory_pool": "default"}}
    assert plan["config"]["formats"]["ttree_b"]["label"] == "TTree B"


def test_incomplete_plan_record_is_named(tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    path.write_text('{"formats": []}')
    with pytest.raises(InputError, match=re.escape(str(path))):
        plan_record.load(path)


def test_report_never_imports_the_planning_stage() -> None:
    offenders = [p for p in REPORT.rglob("*.py") if "hepfmt.plan" in p.read_text()]
    assert offenders == []


def test_figure_registry_loads_no_plotting_library() -> None:
    """The Snakefile imports the registry while it parses: it must stay cheap."""
    code = ("import sys; from hepfmt.report import figures; "
            "print(sorted(figures.FAMILIES), 'matplotlib' in sys.modules, "
            "'pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.split("]")[1].split() == ["False", "False"]
