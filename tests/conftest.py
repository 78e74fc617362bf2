"""Shared fixtures: one small generated source sample and the files written from it.

The sample is small (600 events) with clusters of 250 events, so every written file has two full
clusters and a partial last one ([250, 250, 100]) and the whole suite stays fast.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

PROCESS = "DYJetsToLL"
SEED = 7
N_EVENTS = 600
CLUSTER_SIZE = 250

#: The 10-branch analysis selection (muons, MET, jets).
SELECTION = ["nMuon", "Muon_pt", "Muon_eta", "Muon_phi", "MET_pt",
             "nJet", "Jet_pt", "Jet_eta", "Jet_phi", "Jet_mass"]


def compressed_variant(fmt: str) -> str:
    """The adapter's :attr:`~hepfmt.formats.base.Format.compressed_variant`."""
    from hepfmt import formats

    return formats.get(fmt).compressed_variant


@pytest.fixture(scope="session")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The source sample and its sidecar, written exactly as ``hepfmt generate`` writes them."""
    from hepfmt.cli import main

    path = tmp_path_factory.mktemp("source") / "dy.arrow"
    rc = main(["generate", "--process", PROCESS, "--events", str(N_EVENTS),
               "--seed", str(SEED), "-o", str(path)])
    assert rc == 0
    return path


@pytest.fixture(scope="session")
def source_meta(source: Path) -> dict:
    from hepfmt.samples.source import read_source_meta

    return read_source_meta(source)


@pytest.fixture(scope="session")
def schema(source_meta: dict):
    from hepfmt.samples.source import schema_of

    return schema_of(source_meta)


@pytest.fixture(scope="session")
def source_table(source: Path) -> pa.Table:
    from hepfmt.samples.source import open_source

    return open_source(source).read_all()


@pytest.fixture(scope="session")
def selection() -> list[str]:
    return list(SELECTION)


@pytest.fixture(scope="session")
def written(source: Path, tmp_path_factory: pytest.TempPathFactory):
    """Factory ``written(format, variant, **options) -> path``; each file is written once."""
    from hepfmt import formats

    root = tmp_path_factory.mktemp("written")
    cache: dict[tuple, Path] = {}

    def write(format_name: str, variant: str, **options) -> Path:
        key = (format_name, variant, tuple(sorted(options.items())))
        if key not in cache:
            fmt = formats.get(format_name)
            tag = "".join(f"_{k}-{v}" for k, v in key[2])
            # the format in the name: TTree and RNTuple share the extension
            out = root / f"{format_name}_{variant}{tag}.{formats.extension(format_name)}"
            fmt.write(source, out, fmt.variant(variant), CLUSTER_SIZE, dict(options))
            cache[key] = out
        return cache[key]

    return write


# --- `make check`: which tests are slow -------------------------------------------------------
# `make check` runs `pytest -m "not slow"`: the tests that need no Snakemake run, no server
# (SLURM, XRootD, toxiproxy), no child process with a cap to reach and no written files of every
# format (ROOT's JIT), within minutes on 2 cores. `make test` runs every test. A test is slow
# when its file marks it `@pytest.mark.slow` (a Snakemake run inside pytest) or when it falls
# under a list below, marked at collection so that no test file needs editing. Each entry was
# found by measuring (`pytest tests/<dir> -m "not slow" --durations=0`, one directory at a time)
# and says why it is slow. A new slow module or fixture belongs in these lists.

TESTS = Path(__file__).resolve().parent

#: Directories under tests/ every test of which is slow.
SLOW_DIRECTORIES = {
    "workflow": "real Snakemake runs of a tiny study, locally and through a local SLURM",
}

#: Modules (paths under tests/) every test of which is slow.
SLOW_MODULES = {
    "test_faults.py": "each damaged file goes through a hepfmt command in a child process, "
                      "for every format and kind of damage",
    "measure/test_paired_reads.py": "pairs of live worker processes over rounds of fresh "
                                    "processes, and a machine made busy on purpose",
    "measure/test_fastest_side.py": "measure records of several readers, then pair jobs",
    "measure/test_storage.py": "a real XRootD server, toxiproxy and throttled loop devices",
    "measure/test_storage_release.py": "loop devices, mounts and servers of killed owners",
    "measure/test_reproduce.py": "every job of a plan measured twice, in child processes",
    "measure/test_fidelity_heldout.py": "validate-model on parts of the real nano_dy.root",
    "measure/test_layers.py": "a real `perf record` attached to ROOT and pyarrow readers",
    "measure/test_proof_order.py": "a reordered or changed file written and proven per format",
    "measure/test_verify.py": "convert and its proofs per format, a full disk on a tmpfs",
    "measure/test_digest.py": "convert, then measure on a changed file, as commands",
    "measure/test_side_files.py": "hepfmt commands in child processes on hostile side files",
    "measure/test_timelimit.py": "child processes killed at real time limits",
    "measure/test_memcap.py": "child processes grown to a real memory cap",
    "measure/test_bound.py": "every block of every codec's file decompressed",
    "queries/test_workload.py": "a local Dask cluster, `hepfmt query` end to end and a "
                                "Snakemake dry run",
    "samples/test_inputs.py": "every kind of input made from the full nano_dy.root, imported "
                              "and validated",
    "samples/test_root_rntuple.py": "ROOT's RNTupleImporter on the full nano_dy.root",
    "formats/test_root_writers.py": "TTree and RNTuple written by uproot, read back by every "
                                    "reader (ROOT's JIT, uproot's RNTuple reader)",
    "formats/test_scan.py": "every reader's timed scan of every format (ROOT's JIT)",
    "report/test_figures.py": "every figure family drawn as PNG and PDF from a whole study",
    "metastudy/test_metadata.py": "wide files in every format up to NanoAOD's width, decodes "
                                  "timed in fresh processes",
}

#: Fixtures that make every test using them slow.
SLOW_FIXTURES = {
    "written": "files written through the format adapters (ROOT's writers and readers are "
               "JIT-compiled), read back by every reader",
}

#: Parameter values that make a parametrized test slow.
SLOW_PARAMETERS = {
    "paper.yaml": "plans every job of the paper study",
}

#: Single tests, as "path::name" (every parameter) or "path::name[parameters]" (that one).
SLOW_TESTS = {
    "plan/test_cost.py::test_check_config_prints_the_paper_studys_cpu_hours":
        "plans every job of the paper study",
    "plan/test_pairs.py::test_every_shipped_pairing_fits_the_pair_rule":
        "plans the pairings of every shipped config, the paper study's included",
}


def slow_because(item: pytest.Item) -> str | None:
    """Why ``item`` is slow by the lists above, or None."""
    path = Path(str(item.path)).resolve()
    if not path.is_relative_to(TESTS):
        return None
    module = path.relative_to(TESTS).as_posix()
    name = getattr(item, "originalname", item.name)
    callspec = getattr(item, "callspec", None)
    values = [v for v in callspec.params.values() if isinstance(v, str)] if callspec else []
    return (SLOW_DIRECTORIES.get(module.split("/", 1)[0]) or SLOW_MODULES.get(module)
            or next((SLOW_FIXTURES[f] for f in getattr(item, "fixturenames", ())
                     if f in SLOW_FIXTURES), None)
            or next((SLOW_PARAMETERS[v] for v in values if v in SLOW_PARAMETERS), None)
            or SLOW_TESTS.get(f"{module}::{item.name}") or SLOW_TESTS.get(f"{module}::{name}"))


# `make test` deals the tests to a worker per core (pytest-xdist, `--dist loadgroup`), a module
# at a time: its module fixtures (a whole Snakemake study, a server) are made once, on one
# worker. Modules that hold something of the machine's (a SLURM's daemons and its ports, loop
# devices and their ledgers, a server's port) share a group: never two of them at once.

#: Modules (paths under tests/) that must not run beside each other, by what they hold.
SERIAL_GROUPS = {
    "workflow/test_slurm.py": "the machine's SLURM (its daemons, its config under /etc/slurm)",
    "workflow/test_profiles.py": "the machine's SLURM (its daemons, its config under /etc/slurm)",
    "measure/test_storage.py": "loop devices, cgroups, an XRootD server and toxiproxy",
    "measure/test_storage_release.py": "loop devices, cgroups, an XRootD server and toxiproxy",
}


def worker_group(item: pytest.Item) -> str:
    """The group ``item`` runs in under pytest-xdist: its module's, or a shared one."""
    path = Path(str(item.path)).resolve()
    module = path.relative_to(TESTS).as_posix() if path.is_relative_to(TESTS) else str(path)
    return SERIAL_GROUPS.get(module, module)


def start_rank(item: pytest.Item) -> int:
    """Whole Snakemake studies first, then the other slow modules, then the rest: workers take
    groups in collection order, so a long group started last would run alone at the end."""
    path = Path(str(item.path)).resolve()
    module = path.relative_to(TESTS).as_posix() if path.is_relative_to(TESTS) else ""
    if module.split("/", 1)[0] in SLOW_DIRECTORIES:
        return 0
    return 1 if module in SLOW_MODULES else 2


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if slow_because(item):
            item.add_marker(pytest.mark.slow)
        item.add_marker(pytest.mark.xdist_group(worker_group(item)))
    items.sort(key=start_rank)  # stable: a module's tests stay together, in their order
