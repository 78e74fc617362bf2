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
    """The adapter's :attr:`~analysis.formats.base.Format.compressed_variant`."""
    from analysis import formats

    return formats.get(fmt).compressed_variant


@pytest.fixture(scope="session")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The source sample and its sidecar, written exactly as ``hepfmt generate`` writes them."""
    from analysis.cli import main

    path = tmp_path_factory.mktemp("source") / "dy.arrow"
    rc = main(["generate", "--process", PROCESS, "--events", str(N_EVENTS),
               "--seed", str(SEED), "-o", str(path)])
    assert rc == 0
    return path


@pytest.fixture(scope="session")
def source_meta(source: Path) -> dict:
    from analysis.samples.source import read_source_meta

    return read_source_meta(source)


@pytest.fixture(scope="session")
def schema(source_meta: dict):
    from analysis.samples.source import schema_of

    return schema_of(source_meta)


@pytest.fixture(scope="session")
def source_table(source: Path) -> pa.Table:
    from analysis.samples.source import open_source

    return open_source(source).read_all()


@pytest.fixture(scope="session")
def selection() -> list[str]:
    return list(SELECTION)


@pytest.fixture(scope="session")
def written(source: Path, tmp_path_factory: pytest.TempPathFactory):
    """Factory ``written(format, variant, **options) -> path``; each file is written once."""
    from analysis import formats

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
