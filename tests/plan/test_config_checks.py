"""Configs are checked completely before any job: each one below used to be accepted and to
fail a job later (or, worse, to succeed with a wrong file); now it is refused at once, with one
line naming the key. And ``hepfmt check-config`` says what a valid study will cost.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from hepfmt.cli import main
from hepfmt.errors import ConfigError
from hepfmt.plan import config as cfg
from hepfmt.plan import resources, schema, study

ROOT = Path(__file__).resolve().parents[2]


def _base() -> dict:
    return yaml.safe_load((ROOT / "config" / "test.yaml").read_text())


def _opts(fmt: str, **kw: object) -> Callable[[dict], None]:
    return lambda c: c["formats"][fmt].setdefault("options", {}).update(kw)


def _fmt(name: str, **fcfg: object) -> Callable[[dict], None]:
    return lambda c: c["formats"].update({name: fcfg})


def _sample(**kw: object) -> Callable[[dict], None]:
    return lambda c: c["samples"]["TTJets"].update(kw)


REFUSED: dict[str, tuple[Callable[[dict], None], str, str]] = {
    # sizes and counts: positive and bounded
    "basket_size -1": (_opts("ttree", basket_size=-1), "formats.ttree.options.basket_size",
                       "less than the minimum of 1024"),
    "page_size 0": (_fmt("rntuple", variants=["zstd-5"], options={"page_size": 0}),
                    "formats.rntuple.options.page_size", "less than the minimum"),
    "data_page_size 2 GiB": (_opts("parquet", data_page_size=2**31),
                             "formats.parquet.options.data_page_size", "greater than the maximum"),
    "n_events 1e13": (_sample(n_events=10**13), "samples.TTJets.n_events",
                      "greater than the maximum of 100000000"),
    "n_events '1e13' (YAML reads a string)": (_sample(n_events=yaml.safe_load("1e13")),
                                              "samples.TTJets.n_events", "not of type 'integer'"),
    "cluster size 1e9": (lambda c: c.update(cluster_sizes=[500, 10**9]), "cluster_sizes[1]",
                         "greater than the maximum"),
    "repetitions 1e6": (lambda c: c["measure"].update(repetitions=10**6), "measure.repetitions",
                        "greater than the maximum"),
    "timeout_s 1e9": (lambda c: c["measure"].update(timeout_s=1e9), "measure.timeout_s",
                      "greater than the maximum"),
    "threads 5000": (lambda c: c["measure"].update(threads=5000), "measure.threads",
                     "5000 is greater than the maximum of 1024"),
    "metadata rows 1e9": (lambda c: c.update(metadata={"rows_per_group": 10**9}),
                          "metadata.rows_per_group", "greater than the maximum"),
    # codec levels per codec and library
    "ROOT zstd-99": (lambda c: c["formats"]["ttree"]["variants"].append("zstd-99"),
                     "formats.ttree.variants[2]", "zstd levels are 1-9"),
    "Parquet gzip-42": (lambda c: c["formats"]["parquet"]["variants"].append("gzip-42"),
                        "formats.parquet.variants[2]", "gzip levels are 1-9"),
    "snappy-7": (lambda c: c["formats"]["parquet"]["variants"].append("snappy-7"),
                 "formats.parquet.variants[2]", "snappy takes no level"),
    "metadata ROOT zstd-99": (lambda c: c.update(metadata={"codecs": {"ttree": "zstd-99"}}),
                              "metadata.codecs.ttree", "zstd levels are 1-9"),
    # writer options: names, types, values
    "pyarrow keyword typo": (_opts("parquet", data_page_sise=32000),
                             "formats.parquet.options.data_page_sise",
                             "not a pyarrow ParquetWriter keyword "
                             "(did you mean 'data_page_size'?)"),
    "pyarrow keyword of the wrong type": (_opts("parquet", data_page_size="32k"),
                                          "formats.parquet.options.data_page_size",
                                          "'32k' is not of type 'int'"),
    "unquoted data_page_version": (_opts("parquet", data_page_version=2.0),
                                   "formats.parquet.options.data_page_version",
                                   "2.0 is not one of ['1.0', '2.0']"),
    "write_statistics 'yes'": (_opts("parquet", write_statistics="yes"),
                               "formats.parquet.options.write_statistics",
                               "is not of type 'bool or list'"),
    "a pyarrow object": (_opts("parquet", sorting_columns=["event"]),
                         "formats.parquet.options.sorting_columns", "needs a pyarrow object"),
    "compression as an option": (_opts("parquet", compression="gzip"),
                                 "formats.parquet.options.compression", "set by each variant"),
    "statistics given twice": (_opts("parquet_bss", write_page_index=False),
                               "formats.parquet_bss.options.write_page_index",
                               "given twice: 'statistics' sets it too"),
    "unknown statistics level": (_opts("parquet", statistics="all"),
                                 "formats.parquet.options.statistics",
                                 "'all' is not one of ['none', 'chunk', 'page']"),
    "unknown TTree option": (_opts("ttree", offset_map=False), "formats.ttree.options.offset_map",
                             "ttree has no option 'offset_map'"),
    "basket_policy": (_opts("ttree", basket_policy="huge"),
                      "formats.ttree.options.basket_policy", "is not one of"),
    "store_offsets 'no'": (_opts("ttree", store_offsets="no"),
                           "formats.ttree.options.store_offsets", "not of type 'boolean'"),
    "metadata parquet_options": (lambda c: c.update(metadata={"parquet_options": {
        "statistics": "page"}}), "metadata.parquet_options.statistics",
        "set by metadata.stats_levels"),
    # a cluster larger than a sample
    "cluster size above a sample": (lambda c: c.update(cluster_sizes=[500, 1500, 3000]),
                                    "cluster_sizes[2]",
                                    "3000 is above the 1500 events of sample 'DYJetsToLL'"),
    # readers
    "unknown compare reader": (lambda c: c["compare"].update(readers={"ttree": "nope"}),
                               "compare.readers.ttree", "no reader 'nope' for ttree"),
    "compare reader of another format": (
        lambda c: c["compare"].update(readers={"ttree": "rdf", "parquet": "rdf"}),
        "compare.readers.parquet", "no reader 'rdf' for parquet"),
    "compare reader of no format": (lambda c: c["compare"].update(readers={"tree": "rdf"}),
                                    "compare.readers.tree", "neither a format of formats"),
    # the model
    "missing model": (lambda c: c.update(model="/no/such.model.json"), "model",
                      "no such file '/no/such.model.json'"),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_refused_before_any_job_naming_the_key(name: str) -> None:
    edit, key, problem = REFUSED[name]
    c = _base()
    edit(c)
    with pytest.raises(ConfigError) as err:
        cfg.validate(c)
    message = str(err.value)
    assert message.startswith(f"config key {key!r}: "), message
    assert problem in message, message
    assert "\n" not in message


# -- input files: opened and checked (magic bytes), never imported ------------------------------

def _refused(c: dict) -> str:
    with pytest.raises(ConfigError) as err:
        cfg.validate(c)
    assert "\n" not in str(err.value)
    return str(err.value)


def test_a_model_that_is_not_a_model_is_refused(tmp_path: Path) -> None:
    text = tmp_path / "notes.json"
    text.write_text("these are my notes\n")
    c = _base()
    c["model"] = str(text)
    assert _refused(c).startswith("config key 'model': ")
    assert "not a hepfmt schema" in _refused(c)
    schema_only = tmp_path / "schema.json"  # a schema but no value model
    schema_only.write_text('{"branches": [{"name": "x", "dtype": "float32"}]}')
    c["model"] = str(schema_only)
    assert "config key 'model': " in _refused(c)


@pytest.mark.parametrize(("content", "problem"), [
    (None, "no such file"),
    (b"", "is empty"),
    (b"event,pt\n1,20.5\n", "neither a ROOT nor a Parquet file (first four bytes b'even')"),
])
def test_a_sample_file_that_is_not_an_input_is_refused(tmp_path: Path, content: bytes | None,
                                                        problem: str) -> None:
    path = tmp_path / "real.root"
    if content is not None:
        path.write_bytes(content)
    c = _base()
    c["samples"]["real"] = {"file": str(path)}
    message = _refused(c)
    assert message.startswith("config key 'samples.real.file': "), message
    assert problem in message


def test_a_sample_file_is_checked_by_its_header(tmp_path: Path) -> None:
    """A file's branch names are read before any job (the selections are resolved with them),
    its events are not; a Parquet file's footer also gives its events, so a cluster size above
    them is refused."""
    c = _base()
    root_file = tmp_path / "real.root"
    root_file.write_bytes(b"root" + bytes(100))
    c["samples"]["real"] = {"file": str(root_file)}
    assert _refused(c).startswith("config key 'samples.real.file': ")

    parquet_file = tmp_path / "real.parquet"
    pq.write_table(pa.table({"nMuon": pa.array(range(700), pa.int32())}), parquet_file)
    c = _base()
    c["samples"]["real"] = {"file": str(parquet_file)}
    c["measure"]["selections"] = {"muons": ["nMuon"]}
    assert _refused(c).startswith(
        "config key 'cluster_sizes[1]': 1500 is above the 700 events of sample 'real'")
    c["cluster_sizes"] = [500]
    cfg.validate(c)


# -- the schema's option rules agree with the adapters ------------------------------------------

def test_option_rules_name_only_options_the_adapters_have() -> None:
    from hepfmt import formats
    from hepfmt.plan.options import parquet_keywords

    for adapter, rules in schema.load()["$defs"]["options"].items():
        if adapter == "description":
            continue
        names = set(rules["properties"])
        known = formats.get(adapter).options
        if known is None:  # Parquet: pyarrow's keywords and hepfmt's shorthands
            known = set(parquet_keywords()) | {"statistics", "byte_stream_split"}
        assert names <= set(known), (adapter, names - set(known))


def test_option_enums_are_the_adapters_own() -> None:
    from hepfmt.formats import lance, parquet
    from hepfmt.formats.root import ttree

    rules = schema.load()["$defs"]["options"]
    assert rules["ttree"]["properties"]["basket_policy"]["enum"] == list(ttree.BASKET_POLICIES)
    assert rules["ttree"]["properties"]["writer"]["enum"] == list(ttree.WRITERS)
    assert rules["parquet"]["properties"]["statistics"]["enum"] == list(parquet.STATISTICS)
    assert rules["parquet"]["properties"]["byte_stream_split"]["enum"] == list(
        parquet.BYTE_STREAM_SPLIT)
    assert set(map(str, rules["lance"]["properties"]["version"]["enum"])) == set(lance.VERSIONS)


# -- what a study costs -------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["default.yaml", "test.yaml", "paper.yaml"])
def test_shipped_configs_are_valid_and_estimated(name: str) -> None:
    c = cfg.load(ROOT / "config" / name)
    est = resources.whole_study(c)
    assert est.files == len(study.files(c))
    assert est.measurements == len(study.read_plan(c))
    assert est.pair_jobs == len(study.pair_plan(c))
    assert est.events == sum(s["n_events"] for s in c["samples"].values())
    assert est.disk_gb > 0
    assert est.cpu_hours > 0
    assert 0 < est.mem_peak_mb < 8_000


def test_the_estimate_grows_with_the_events() -> None:
    small = cfg.validate(_base())
    big = _base()
    for s in big["samples"].values():
        s["n_events"] *= 100
    big = resources.whole_study(cfg.validate(big))
    assert big.disk_gb > 50 * resources.whole_study(small).disk_gb
    assert big.cpu_hours > 10 * resources.whole_study(small).cpu_hours


def test_warnings_name_what_this_machine_lacks(monkeypatch: pytest.MonkeyPatch,
                                              tmp_path: Path) -> None:
    import hepfmt.provenance

    monkeypatch.setattr(hepfmt.provenance, "machine",
                        lambda: {"cores": 2, "memory_bytes": 4 * 10**9})
    c = cfg.validate(_base())
    c["results"] = str(tmp_path / "not" / "yet" / "made")
    huge = resources.StudyEstimate(events=10**8, files=10, measurements=10, disk_gb=1e9,
                                   mem_peak_mb=64_000, cpu_hours=10_000)
    warnings = resources.machine_warnings(huge, c)
    assert [w.split(":")[0] for w in warnings] == ["disk", "memory", "CPU"]
    assert str(tmp_path) in warnings[0]  # free space where results would go
    assert "64.0 GB, this machine has 4.0 GB" in warnings[1]
    tiny = resources.StudyEstimate(events=1, files=1, measurements=1, disk_gb=0, mem_peak_mb=1,
                                   cpu_hours=0)
    assert resources.machine_warnings(tiny, c) == []
    c["measure"]["threads"] = [1, 4]
    assert resources.machine_warnings(tiny, c)[0].startswith("measure.threads: 4 reader threads")


def test_check_config_prints_the_estimate(capsys: pytest.CaptureFixture) -> None:
    assert main(["check-config", str(ROOT / "config" / "test.yaml")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith("test.yaml: valid; 2 samples")
    assert out[1].startswith("estimate: 3,000 events, 20 files to write (20 read-measured), "
                             "0 pair jobs, disk peak up to ")
    assert "(written files kept)" in out[1]
    assert "memory peak" in out[1] and "core-hours" in out[1]
    # where the timing jobs run (one CPU model per ratio)
    assert any(line.startswith("timing: timing jobs (measure, pair)") for line in out)


def test_check_config_refuses_in_one_line(tmp_path: Path) -> None:
    """End to end, the installed command: exit status 2 and one line naming the key."""
    c = _base()
    c["formats"]["ttree"]["options"] = {"basket_size": -1}
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(c))
    hepfmt = Path(sys.executable).parent / "hepfmt"
    proc = subprocess.run([str(hepfmt), "check-config", str(path)], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.splitlines() == [
        "hepfmt check-config: error: config key 'formats.ttree.options.basket_size': "
        "-1 is less than the minimum of 1024"]


# -- the pairings' readers are ones the study times ---------------------------------------------

def test_without_compare_cluster_sizes_no_reader_of_a_pairing_is_asked_for() -> None:
    """Ratios of reads come from pair jobs only: without compare.cluster_sizes there are none,
    and a pairing's reader the measure grid leaves out is no reason to refuse the config."""
    c = _base()
    c["compare"].pop("cluster_sizes", None)
    c["measure"]["readers"] = {"ttree": ["uproot"], "parquet": ["pyarrow"]}
    cfg.validate(c)
