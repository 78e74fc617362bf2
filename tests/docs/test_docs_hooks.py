"""The docs site's hooks: the blocks rendered from code cover what the code has, and the
reference runs are served where the pages link them."""

from __future__ import annotations

import importlib.util
from types import ModuleType

import pytest
from mkdocs.config import load_config
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import Files

from helpers import ROOT
from hepfmt.cli import build_parser
from hepfmt.measure.storage.profiles import PROFILES
from hepfmt.queries.tasks import TASKS
from hepfmt.samples.processes import PROCESSES

HOOKS = ROOT / "docs" / "hooks"


def hook(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"docs_hook_{name}", HOOKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


generated = hook("generated")
reference = hook("reference")


def test_the_cli_reference_has_every_command() -> None:
    text = generated.cli_reference()
    words = [" ".join(("hepfmt", *w)) for w, _ in generated.commands(build_parser())]
    assert len(words) > 10
    for title in words:
        assert f"`{title}`\n\n```text\nusage: {title}" in text


def test_the_cli_reference_does_not_depend_on_the_terminal(monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    narrow = generated.cli_reference()
    monkeypatch.setenv("COLUMNS", "300")
    assert generated.cli_reference() == narrow


def test_tables_from_code_have_every_row() -> None:
    assert all(f"| {name} |" in generated.processes_table() for name in PROCESSES)
    assert all(f"| `{name}` |" in generated.storage_profiles_table() for name in PROFILES)
    assert all(f"| {number} |" in generated.adl_tasks_table() for number in TASKS)


def test_a_marker_is_replaced_and_an_unknown_one_fails() -> None:
    page = "before\n<!-- generated: adl-tasks -->\nafter\n"
    rendered = generated.render(page)
    assert "<!-- generated" not in rendered and "| 8 |" in rendered
    with pytest.raises(PluginError, match="no-such-block"):
        generated.render("<!-- generated: no-such-block -->\n")


def test_every_marker_in_the_pages_is_known() -> None:
    for page in (ROOT / "docs").rglob("*.md"):
        for name in generated.MARKER.findall(page.read_text()):
            assert name in generated.BLOCKS, (page, name)


@pytest.fixture(scope="module")
def config():
    return load_config(config_file=str(ROOT / "mkdocs.yml"))


def test_the_reference_runs_are_served_under_their_repository_path(config) -> None:
    files = reference.on_files(Files([]), config)
    uris = {f.src_uri for f in files}
    on_disk = {p.relative_to(ROOT).as_posix()
               for p in (ROOT / "results" / "reference").rglob("*")
               if p.is_file() and p.suffix != ".md"}
    assert uris == on_disk
    assert "results/reference/amd-epyc/ratios.csv" in uris


def test_snippets_resolve_against_the_checkout(config) -> None:
    config = reference.on_config(config)
    assert config.mdx_configs["pymdownx.snippets"]["base_path"] == [str(ROOT)]
    assert config.mdx_configs["pymdownx.snippets"]["check_paths"] is True


def test_the_site_loads_no_web_fonts(config) -> None:
    assert config.theme["font"] is False


def test_no_page_is_left_out_of_the_nav(config) -> None:
    def listed(nav) -> set[str]:
        items = nav.values() if isinstance(nav, dict) else nav
        out: set[str] = set()
        for item in items:
            out |= {item} if isinstance(item, str) else listed(item)
        return out

    on_disk = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")
               if "hooks" not in p.parts}
    assert listed(config.nav) == on_disk

