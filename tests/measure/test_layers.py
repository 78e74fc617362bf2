"""``hepfmt bench layers`` end to end: a real ``perf record`` attached to real ROOT readers."""

from __future__ import annotations

import shutil

import pytest

from analysis.cli import main

pytestmark = pytest.mark.skipif(shutil.which("perf") is None, reason="perf is not installed")


def test_bench_layers_profiles_each_reader(written, source, tmp_path, capsys):
    out = tmp_path / "layers.txt"
    rc = main(["bench", "layers", str(written("ttree", "zstd-5")), "--source", str(source),
               "--format", "ttree", "--readers", "getentry,columnar", "--seconds", "0.3",
               "-o", str(out)])
    assert rc == 0
    text = out.read_text()
    rows = [line for line in text.splitlines() if line.startswith(("| getentry", "| columnar"))]
    assert len(rows) == 2
    for row in rows:  # the layers' shares add up to the whole profile
        shares = [float(c.strip().rstrip("%")) for c in row.split("|")[3:-1]]
        assert sum(shares) == pytest.approx(100, abs=len(shares))
    assert "codec bound (zstd" in text
    assert "GetEntriesSerialized on the jagged branches" in text
    assert text.strip() in capsys.readouterr().out


def test_bench_layers_refuses_an_unknown_reader(written, source, capsys):
    rc = main(["bench", "layers", str(written("ttree", "zstd-5")), "--source", str(source),
               "--format", "ttree", "--readers", "nosuch"])
    assert rc == 2
    assert "no reader 'nosuch'" in capsys.readouterr().err
