"""The package's conventions a newcomer and a citation rely on: one version, said the same way
by the package metadata, ``hepfmt --version`` and ``CITATION.cff``; a license file that says
what pyproject declares."""

from __future__ import annotations

import re
from importlib.metadata import version
from pathlib import Path

import pytest

from hepfmt import __version__
from hepfmt.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_one_version_everywhere(capsys: pytest.CaptureFixture) -> None:
    assert __version__ == version("hepfmt")
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"hepfmt {__version__}"
    cff = (ROOT / "CITATION.cff").read_text()
    assert re.search(r"^version: (\S+)$", cff, re.M).group(1) == __version__


def test_the_license_file_is_the_declared_license() -> None:
    assert 'license = {text = "BSD-3-Clause"}' in (ROOT / "pyproject.toml").read_text()
    assert (ROOT / "LICENSE").read_text().startswith("BSD 3-Clause License")
    assert "license: BSD-3-Clause" in (ROOT / "CITATION.cff").read_text()
