"""Adding a format is one adapter file plus one registry line: a toy format, written to a
temporary module and registered at run time, goes through write, describe, the measured read
(in its own child process, as the workflow runs it) and the tables like a built-in one."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest
from conftest import CLUSTER_SIZE, N_EVENTS, SELECTION

from analysis import formats
from analysis.cli import main

#: An Arrow IPC *stream* of one uncompressed record batch per cluster: the least a format
#: needs (a writer that keeps clusters, a describe that reads them back, one reader).
TOY = textwrap.dedent('''
    from pathlib import Path

    import pyarrow as pa

    from analysis.atomic import atomic_path
    from analysis.formats.base import (Format, Layout, Reader, add_checksums, check_layout,
                                       require_branches)
    from analysis.samples.source import iter_clusters, read_source_meta, schema_of


    def write(source, out, variant, cluster_size, options):
        meta = read_source_meta(source)
        names = schema_of(meta).names
        with atomic_path(out) as tmp:
            with pa.OSFile(str(tmp), "wb") as sink:
                writer = None
                for table, _ in iter_clusters(source, names, cluster_size):
                    batch = table.combine_chunks().to_batches()[0]
                    writer = writer or pa.ipc.new_stream(sink, batch.schema)
                    writer.write_batch(batch)
                writer.close()
            check_layout(describe(tmp), out, meta["n_events"], cluster_size, len(names))


    def _batches(path):
        with pa.memory_map(str(path)) as f:
            return list(pa.ipc.open_stream(f))


    def describe(path):
        batches = _batches(path)
        size = Path(path).stat().st_size
        return Layout.of(entries=sum(b.num_rows for b in batches),
                         clusters=[b.num_rows for b in batches],
                         branches=batches[0].num_columns, file_bytes=size, zip_bytes=size,
                         zip_bytes_by_branch={})


    def read(path, branches, threads=1):
        out = dict.fromkeys(branches, (0, 0))
        for batch in _batches(path):
            require_branches(path, batch.schema.names, branches)
            add_checksums(out, batch, branches)
        return out


    FORMAT = Format(algorithms=frozenset({"none"}), dictionary=False, write=write,
                    describe=describe, options=frozenset(),
                    readers={"toy": Reader("toy", "pyarrow", lambda threads: None, read)})
''')


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The toy adapter as a module of its own, importable here and in child processes."""
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "toyformat.py").write_text(TOY)
    monkeypatch.syspath_prepend(str(plugins))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        p for p in (str(plugins), os.environ.get("PYTHONPATH")) if p))
    monkeypatch.setitem(formats.REGISTRY, "toy",
                        formats.Entry("toy", "Toy", "toy", "toyformat"))  # the registry line
    return "toy"


def test_a_registered_toy_format_is_written_described_and_read(toy, source, tmp_path) -> None:
    out = tmp_path / f"c{CLUSTER_SIZE}.{formats.extension(toy)}"
    size = tmp_path / "size.json"
    assert main(["convert", str(source), "--format", toy, "--variant", "none",
                 "--cluster-size", str(CLUSTER_SIZE), "-o", str(out),
                 "--size-output", str(size)]) == 0
    record = json.loads(size.read_text())
    assert record["layout"]["clusters"] == [250, 250, 100]
    assert record["normalized_size"] > 0

    layout = formats.get(toy).describe(out)
    assert (layout.entries, layout.clusters) == (N_EVENTS, [250, 250, 100])

    reads = tmp_path / "reads.json"
    assert main(["measure", str(out), "--source", str(source), "--format", toy,
                 "--variant", "none", "--cluster-size", str(CLUSTER_SIZE), "--readers", "toy",
                 "--selection", "ten=" + ",".join(SELECTION), "--selection", "all=*",
                 "--modes", "warm", "--repetitions", "5", "-o", str(reads)]) == 0
    doc = json.loads(reads.read_text())
    assert {(r["reader"], r["selection"]) for r in doc["reads"]} == {("toy", "ten"),
                                                                   ("toy", "all")}
