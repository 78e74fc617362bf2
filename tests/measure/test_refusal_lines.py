"""A library's own exception, in a child that reads a file or in the command itself, is one
line naming the file and what was being done: never a bare exception name
(``AssertionError: env_type_id=…``), which says neither; the name is for ``--verbose``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hepfmt import cli
from hepfmt.cli import main
from hepfmt.errors import VerificationError
from hepfmt.measure import isolated

#: Per child: generous for a machine several times slower than an idle one.
TIMEOUT_S = 600
HERE = str(Path(__file__).resolve().parent)


# --- what the children of these tests run (imported there as test_refusal_lines) ------------

def fail_as_a_library(kind: str) -> None:
    """What libraries raised on damaged files of the corpus (issue 44)."""
    if kind == "assertion":
        raise AssertionError("env_type_id=4096 is not a known type")
    if kind == "attribute":
        return None.attrs
    if kind == "bare":
        raise AssertionError
    raise TypeError("string indices must be integers")


@pytest.fixture
def tests_importable(monkeypatch):
    """This module importable in a child (``isolated.call("test_refusal_lines:...")``)."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [
        HERE, os.environ.get("PYTHONPATH")])))
    monkeypatch.delenv("HEPFMT_VERBOSE", raising=False)


@pytest.mark.parametrize(("kind", "words", "name"), [
    ("assertion", "env_type_id=4096 is not a known type", "AssertionError"),
    ("attribute", "'NoneType' object has no attribute 'attrs'", "AttributeError"),
    ("type", "string indices must be integers", "TypeError"),
    ("bare", "no message; --verbose for the detail", "AssertionError"),
])
def test_a_library_exception_in_a_child_names_the_file(tests_importable, tmp_path, kind,
                                                        words, name):
    path = tmp_path / "damaged.root"
    with pytest.raises(VerificationError) as exc:
        isolated.call("test_refusal_lines:fail_as_a_library", {"kind": kind}, path,
                      "reading its layout", TIMEOUT_S)
    assert str(exc.value) == (f"{path}: reading its layout failed: the library could not read "
                              f"it ({words})")
    assert name not in str(exc.value)
    assert name in exc.value.detail  # for --verbose


def test_a_library_exception_in_the_command_names_the_file(monkeypatch, capsys, tmp_path):
    def fails(a):
        return None.attrs

    monkeypatch.setattr(cli.samples, "cmd_generate", fails)
    out = tmp_path / "s.arrow"
    assert main(["generate", "--process", "DYJetsToLL", "--events", "1", "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"hepfmt generate: error: {out}: generate failed: 'NoneType' object has no "
                   "attribute 'attrs' (--verbose for the detail)")
