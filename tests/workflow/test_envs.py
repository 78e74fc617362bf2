"""The conda environments (envs/*.yaml) pin the same versions as the pip lock.

conda itself cannot be installed on the test machine, so the environments are never built here:
this is what can be checked without it. Every rule with a shell or script names an environment
that exists; every package of an environment is pinned exactly; each pin equals the version in
requirements.lock, through an explicit name map where conda-forge and PyPI differ; and every
direct dependency of pyproject.toml that the rules need is in the environments.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
import yaml

from helpers import ROOT

ENVS = sorted((ROOT / "envs").glob("*.yaml"))

#: conda-forge/bioconda name -> PyPI name, where they differ.
CONDA_TO_PYPI = {
    "snakemake-minimal": "snakemake",
    "python-htcondor": "htcondor",
    "python-xxhash": "xxhash",
    "matplotlib-base": "matplotlib",  # matplotlib without a GUI toolkit
    "python-duckdb": "duckdb",
}
#: conda-forge's `root` is ROOT itself, versioned as ROOT; the PyPI wheel `root` has its own
#: version numbers. Each wheel version of the lock -> the ROOT release it contains (checked
#: against the installed wheel's RVersion.hxx below).
ROOT_IN_WHEEL = {"0.1a12": "6.40.00"}
NOT_PINNED = {"python", "pip"}  # the interpreter series is pinned (=3.11), pip is a tool


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def lock() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        if "==" in line and not line.startswith("#"):
            name, version = line.split("==", 1)
            pins[norm(name)] = version.strip()
    return pins


def env_pins(path: Path) -> dict[str, str]:
    """conda name -> version; pip entries of the env under their PyPI names, prefixed pip:."""
    pins = {}
    for dep in yaml.safe_load(path.read_text())["dependencies"]:
        if isinstance(dep, dict):
            for req in dep.get("pip", []):
                name, _, version = req.partition("==")
                pins[f"pip:{norm(name)}"] = version
            continue
        m = re.fullmatch(r"([A-Za-z0-9_.-]+)\s*(?:==?|\s)\s*([^=\s]*)", dep)
        name, version = (m.group(1), m.group(2)) if m else (dep, "")
        pins[norm(name)] = version
    return pins


@pytest.mark.parametrize("path", ENVS, ids=lambda p: p.name)
def test_env_is_conda_forge_and_pins_every_package(path: Path) -> None:
    env = yaml.safe_load(path.read_text())
    assert env["channels"][0] == "conda-forge"
    assert env["name"].startswith("hepfmt-")
    for name, version in env_pins(path).items():
        if name not in NOT_PINNED:
            assert re.fullmatch(r"[0-9][0-9A-Za-z.]*", version or ""), (path.name, name)


@pytest.mark.parametrize("path", ENVS, ids=lambda p: p.name)
def test_env_pins_equal_the_pip_lock(path: Path) -> None:
    pins = lock()
    for name, version in env_pins(path).items():
        if name in NOT_PINNED:
            continue
        if name == "root":
            assert version == ROOT_IN_WHEEL[pins["root"]], (path.name, version)
            continue
        pypi = norm(CONDA_TO_PYPI.get(name, name.removeprefix("pip:")))
        assert pypi in pins, f"{path.name}: {name} is not in requirements.lock"
        assert version == pins[pypi], f"{path.name}: {name} {version} != lock {pins[pypi]}"


def test_the_root_pairing_is_the_installed_wheel() -> None:
    from hepfmt.provenance import _root_version

    assert _root_version() == ROOT_IN_WHEEL[lock()["root"]]


def test_every_rule_names_an_existing_environment() -> None:
    rules = (ROOT / "workflow" / "rules").glob("*.smk")
    named = {}
    for smk in rules:
        for rule, env in re.findall(r"rule (\w+):.*?conda:\s*\n\s*\"([^\"]+)\"",
                                    smk.read_text(), flags=re.S):
            named[rule] = (smk.parent / env).resolve()
    assert set(named) >= {"generate", "convert", "measure", "tabulate", "resolved_config"}
    assert all(p.exists() and p.parent == ROOT / "envs" for p in named.values()), named
    assert named["convert"].name == named["measure"].name == "root.yaml"


def test_direct_dependencies_are_in_the_environments() -> None:
    """What pyproject.toml installs for the pip route, the conda route installs too."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    direct = {norm(re.split(r"[=<>\[; ]", d, maxsplit=1)[0]) for d in project["dependencies"]}
    provided = {"root"}  # as conda-forge's root, see ROOT_IN_WHEEL
    for path in ENVS:
        provided |= {norm(CONDA_TO_PYPI.get(n, n.removeprefix("pip:"))) for n in env_pins(path)}
    assert direct - provided == set()
