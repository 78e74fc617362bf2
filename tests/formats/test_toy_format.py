"""Adding a format is one adapter file plus one registry line: a toy format, written to a
temporary module and registered at run time, goes through write, describe, the measured read
(in its own child process, as the workflow runs it) and the tables like a built-in one."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from conftest import CLUSTER_SIZE, N_EVENTS, SELECTION
from hepfmt import formats
from hepfmt.cli import main

#: An Arrow IPC *stream* of one uncompressed record batch per cluster: the least a format
#: needs (a writer that keeps clusters, a describe that reads them back, one reader).
TOY = textwrap.dedent('''
    from pathlib import Path

    import pyarrow as pa

    from hepfmt.atomic import atomic_path
    from hepfmt.formats.base import Format, Layout, arrow_reader, check_layout, require_branches
    from hepfmt.samples.source import iter_clusters, read_source_meta, schema_of


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


    def check(path, branches):
        require_branches(path, _batches(path)[0].schema.names, branches)


    def chunks(path, branches, threads, marks):
        batches = _batches(path)
        marks.opened()
        for batch in batches:
            yield batch.select(branches)


    FORMAT = Format(algorithms=frozenset({"none"}), dictionary=False, write=write,
                    describe=describe, options=frozenset(),
                    readers={"toy": arrow_reader("toy", "pyarrow", lambda threads: None, chunks,
                                                 check)})
''')


#: The toy format with a reader of known cost: its scan sleeps OPEN_S before the file counts
#: as open, SETUP_S before the first event, PER_EVENT_S per event; a sleep is a lower bound.
OPEN_S, SETUP_S, PER_EVENT_S = 0.03, 0.15, 2e-4
SLEEPY = textwrap.dedent(f'''
    import time

    from hepfmt.formats.base import Format, Reader
    from toyformat import FORMAT as TOY, _batches


    def scan(path, branches, threads, marks):
        time.sleep({OPEN_S})
        batches = _batches(path)
        marks.opened()
        time.sleep({SETUP_S})
        done = 0
        for batch in batches:
            time.sleep({PER_EVENT_S} * batch.num_rows)
            done += batch.num_rows
            marks.chunk(done)
        return done


    FORMAT = Format(algorithms=TOY.algorithms, dictionary=False, write=TOY.write,
                    describe=TOY.describe, options=frozenset(),
                    readers={{"sleepy": Reader("sleepy", "pyarrow", lambda threads: None,
                                              TOY.readers["toy"].read, scan)}})
''')


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The toy adapter as a module of its own, importable here and in child processes."""
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "toyformat.py").write_text(TOY)
    (plugins / "sleepyformat.py").write_text(SLEEPY)
    monkeypatch.setitem(formats.REGISTRY, "sleepy",
                        formats.Entry("sleepy", "Sleepy", "toy", "sleepyformat"))
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

    # the tables: the plan record of a config naming the toy format, then tabulate
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({
        "results": str(tmp_path / "results"), "samples": {"DY": {"process": "DYJetsToLL",
                                                     "n_events": N_EVENTS}},
        "cluster_sizes": [CLUSTER_SIZE], "formats": {"toy": {"variants": ["none"]}},
        "measure": {"modes": ["warm"], "repetitions": 5,
                    "selections": {"ten": SELECTION, "all": "*"}}}))
    plan = tmp_path / "plan.json"
    assert main(["plan-record", str(config), "-o", str(plan)]) == 0
    assert main(["tabulate", "--plan", str(plan), "--sizes", str(size), "--reads", str(reads),
                 "-o", str(tmp_path / "tables")]) == 0
    sizes = pd.read_csv(tmp_path / "tables" / "size.csv", comment="#")
    assert list(sizes.label) == ["Toy"] and sizes.normalized_size_mean.iloc[0] > 0
    table = pd.read_csv(tmp_path / "tables" / "reads.csv", comment="#")
    assert set(zip(table.label, table.reader, table.selection, strict=True)) == {
        ("Toy", "toy", "ten"), ("Toy", "toy", "all")}


def test_marks_split_a_read_into_open_setup_and_steady_rate(toy, source, tmp_path) -> None:
    """A reader of known artificial costs, measured as the workflow measures (own process):
    each span between its marks is at least what its sleeps guarantee (a sleep is a lower
    bound; load only lengthens it), the steady rate at most the rate the per-event sleep
    allows, and the parts are the arithmetic of the marks."""
    out = tmp_path / "c.toy"
    assert main(["convert", str(source), "--format", toy, "--variant", "none",
                 "--cluster-size", str(CLUSTER_SIZE), "-o", str(out)]) == 0
    reads = tmp_path / "reads.json"
    assert main(["measure", str(out), "--source", str(source), "--format", "sleepy",
                 "--variant", "none", "--cluster-size", str(CLUSTER_SIZE), "--readers",
                 "sleepy", "--selection", "all=*", "--modes", "warm", "--min-repetitions", "3",
                 "--repetitions", "4", "--budget-s", "1", "-o", str(reads)]) == 0
    (r,) = json.loads(reads.read_text())["reads"]
    assert r["chunks"] == 3 and r["throughput_method"] == "chunks after the first"
    setups = []
    for rep in r["repetitions"]:
        opened, ((n1, t1), (n2, t2), (nk, tk)) = rep["opened_s"], rep["chunks"]
        assert (n1, n2, nk) == (250, 500, N_EVENTS)
        assert opened >= OPEN_S  # the sleep before the open mark
        assert t1 - opened >= SETUP_S + n1 * PER_EVENT_S  # set-up, then the first chunk
        assert t2 - t1 >= (n2 - n1) * PER_EVENT_S and tk - t2 >= (nk - n2) * PER_EVENT_S
        assert rep["wall_s"] >= tk
        setups.append(t1 - opened - n1 * (tk - t1) / (nk - n1))
    # the parts: medians over the repetitions of what each one's marks say
    assert r["open_s"] == pytest.approx(float(np.median([p["opened_s"]
                                                        for p in r["repetitions"]])))
    assert r["setup_s"] == pytest.approx(float(np.median(setups)))
    assert r["events_per_s_steady"] <= 1 / PER_EVENT_S
    assert 3 <= r["n_repetitions"] <= 4 and r["n_repetitions"] == len(r["repetitions"])
    assert r["median_lo_s"] <= r["median_s"] <= r["median_hi_s"]
    assert isinstance(r["precision_reached"], bool)
    assert r["mb_per_s_steady_naive"] > 0
