"""Command-line fragments reach the CLI as the words they mean, whatever paths the config names."""

from __future__ import annotations

import shlex

from hepfmt.plan import commands


def _config(**sample) -> dict:
    return {"model": "my models/nano.json", "samples": {"A": sample},
            "formats": {"parquet": {"options": {"data_page_version": "2.0", "statistics": "page"}}},
            "measure": {"selections": {"ten": ["nMuon", ["MET_pt", "PFMET_pt"]], "all": "*"}},
            "metadata": {"row_groups": 2, "rows_per_group": 10, "seed": 1,
                         "parquet_options": {"data_page_size": 1048576}}}


def test_a_generated_sample_names_its_model_as_one_word() -> None:
    words = shlex.split(commands.sample(_config(process="QCD", n_events=10), "A"))
    assert words[:2] == ["hepfmt", "generate"]
    assert words[words.index("--model") + 1] == "my models/nano.json"


def test_an_imported_sample_names_its_file_as_one_word() -> None:
    c = _config(file="/data/it's here.root")
    words = shlex.split(commands.sample(c, "A"))
    assert words[:3] == ["hepfmt", "import", "/data/it's here.root"]
    assert commands.sample_inputs(c, "A") == ["/data/it's here.root"]
    assert commands.sample_inputs(_config(file="root://eos/x.root"), "A") == []  # remote


def test_writer_options_keep_their_yaml_quotes() -> None:
    words = shlex.split(commands.writer_options(_config(), "parquet"))
    assert words[0::2] == ["--option", "--option"]
    assert words[1].startswith("data_page_version='2.0'")
    assert words[3].startswith("statistics=page")


def test_selections_and_optional_flags_are_single_words() -> None:
    # a remote sample's selections go as the config writes them: its measure job resolves them
    remote = _config(file="root://eos/x.root")
    assert shlex.split(commands.selections(remote, "A")) == [
        "--selection", "ten=nMuon,MET_pt|PFMET_pt", "--selection", "all=*"]
    assert shlex.split(commands.flag("--source", ["a b/s.arrow"])) == ["--source", "a b/s.arrow"]
    assert commands.flag("--source", []) == ""
    assert shlex.split(commands.metadata_write(_config())) == [
        "--row-groups", "2", "--rows-per-group", "10", "--seed", "1",
        "--option", "data_page_size=1048576"]
