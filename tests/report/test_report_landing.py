"""The report as a newcomer meets it (issue 39, part 5): the landing page shows the run's answer
and its summary figure first and says rightly how to read them; every result is listed by a
title, not by its file's path; every caption is short and links to how it was made.

Fast: the workflow is parsed (not run) through Snakemake's API, and the landing page is rendered
as ``snakemake --report`` renders it (Jinja2, then docutils) from stand-in files. The real
report of a tiny run is what ``tools/screenshot.py`` is for.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from helpers import ROOT
from hepfmt.report import direction, report_rst

REPORT = ROOT / "workflow" / "report"
LANDING = REPORT / "workflow.rst"
CAPTIONS = sorted(p for p in REPORT.glob("*.rst") if p != LANDING)
#: The most words a caption may have (issue 39): the report's side panel stays readable.
MAX_WORDS = 60
#: Every caption ends with this link, to the docs page that says how the result was made: the
#: repository's Markdown file, relative to the report at its default place
#: (results/report.html), and named in the text so that a moved report still says where.
DOCS_LINK = re.compile(r"How it was made: `docs/(?P<page>[\w./-]+\.md) <\.\./docs/(?P=page)>`__\.")
JINJA = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.DOTALL)


def words(rst: str) -> list[str]:
    """The words a reader reads: Jinja left out (what it renders depends on the run), a link
    counted by its text, markup and lone symbols (×, /, =) not counted."""
    text = JINJA.sub(" ", rst)
    text = re.sub(r"`([^`<]*?)\s*<[^<>`\s]+>`_{1,2}", r"\1", text)
    return [w for w in text.split() if re.search(r"\w", w)]


def test_word_count_reads_as_a_reader_would() -> None:
    rst = ("**Size** of {{ snakemake.config['samples']|length }} samples × 2.\n"
           "How it was made: `docs/a.md <../docs/a.md>`__.")
    assert words(rst) == ["**Size**", "of", "samples", "2.", "How", "it", "was", "made:",
                          "docs/a.md."]


@pytest.mark.parametrize("caption", CAPTIONS, ids=lambda p: p.name)
def test_caption_is_short_and_links_to_how_it_was_made(caption: Path) -> None:
    text = caption.read_text()
    n = len(words(text))
    assert n <= MAX_WORDS, f"{caption.name}: {n} words"
    link = DOCS_LINK.search(text)
    assert link, f"{caption.name}: no 'How it was made: `docs/PAGE.md <../docs/PAGE.md>`__.'"
    assert (ROOT / "docs" / link["page"]).is_file(), f"{caption.name}: docs/{link['page']}"


# --- every result in the report has a title --------------------------------------------------

@pytest.fixture(scope="module")
def report_outputs(tmp_path_factory: pytest.TempPathFactory) -> list[SimpleNamespace]:
    """Every file the workflow marks for the report, with its report flag, from the workflow
    as Snakemake parses it (every rule of every target, the generated figure rules included)."""
    from snakemake.api import SnakemakeApi
    from snakemake.io import get_flag_value, is_flagged
    from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings

    tmp = tmp_path_factory.mktemp("report-landing")
    config = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())
    config["results"] = str(tmp / "results")
    (tmp / "config.yaml").write_text(yaml.safe_dump(config))
    cwd = Path.cwd()
    try:
        with SnakemakeApi(OutputSettings(quiet={"all"})) as api:
            wf = api.workflow(resource_settings=ResourceSettings(cores=1),
                              config_settings=ConfigSettings(configfiles=[tmp / "config.yaml"]),
                              snakefile=ROOT / "Snakefile", workdir=ROOT)
            # the parsed workflow (Snakemake parses on first use of this attribute)
            rules = list(wf._workflow.rules)
            out = [SimpleNamespace(rule=r.name, path=str(f), flag=get_flag_value(f, "report"))
                   for r in rules for f in [*r.output, *r.input] if is_flagged(f, "report")]
    finally:
        import os

        os.chdir(cwd)
    assert out, "no report outputs parsed"
    return out


def test_every_result_has_a_title_not_a_path(report_outputs: list[SimpleNamespace]) -> None:
    for o in report_outputs:
        labels = o.flag.labels
        assert isinstance(labels, dict) and list(labels) == ["title"], (o.rule, o.path, labels)
        title = labels["title"]
        assert isinstance(title, str) and title.strip(), (o.rule, o.path)
        assert not re.search(r"\.(png|pdf|csv|html|md|json)\b|results/", title), (o.path, title)


def test_titles_are_unique_where_the_report_lists_them(
        report_outputs: list[SimpleNamespace]) -> None:
    """Snakemake keys a subcategory's rows by their labels: two results with one title would
    show as one row (the other unreachable)."""
    seen: dict[tuple, str] = {}
    for o in report_outputs:
        key = (o.flag.category, o.flag.subcategory, o.flag.labels["title"])
        assert key not in seen, f"{o.path} and {seen[key]}: {key}"
        seen[key] = o.path


def test_every_result_has_a_caption_and_every_caption_a_result(
        report_outputs: list[SimpleNamespace]) -> None:
    used = set()
    for o in report_outputs:
        assert o.flag.caption is not None, o.path
        caption = Path(o.flag.caption.get_path_or_uri(secret_free=True)).resolve()
        assert caption.is_file(), (o.path, caption)
        used.add(caption)
    assert {p.resolve() for p in CAPTIONS} <= used, "captions no result uses"


def test_the_answer_and_its_figure_come_first(report_outputs: list[SimpleNamespace]) -> None:
    """The report's categories are listed alphabetically: "Answer" before Figures and Tables,
    and the answer's text and figure together in it."""
    answer = {Path(o.path).name: o.flag for o in report_outputs if o.flag.category == "Answer"}
    assert "answer.md" in answer
    categories = sorted({o.flag.category for o in report_outputs})
    assert categories[0] == "Answer", categories
    assert len({(f.category, f.subcategory) for f in answer.values()}) == 1


# --- the landing page -------------------------------------------------------------------------

def render_landing(config: dict, files: list[SimpleNamespace]) -> str:
    """``workflow.rst`` as ``snakemake --report`` renders it (snakemake.report.auto_report):
    Jinja2 with the config and the report's files, then docutils to an HTML body, with the
    directive the Snakefile registers (it imports hepfmt.report.report_rst)."""
    from docutils.core import publish_parts
    from jinja2 import Environment

    env = Environment(trim_blocks=True, lstrip_blocks=True)
    rst = env.from_string(LANDING.read_text()).render(
        snakemake=SimpleNamespace(config=config), categories={}, files=files)
    return publish_parts(rst, writer="html")["html_body"]


@pytest.fixture(scope="module")
def default_config() -> dict:
    from hepfmt.plan import config as cfg

    return cfg.load(ROOT / "config" / "default.yaml")


def stand_ins(tmp: Path) -> list[SimpleNamespace]:
    """An answer (Markdown, as ``hepfmt answer`` writes it) and a summary figure (a PNG)."""
    md = tmp / "answer.md"
    md.write_text("<!-- generated -->\n**Read speed**\n\n- TTree_zstd vs Parquet: ROOT faster: "
                  "3.19× [3.04, 3.65] <sub>[`ratios.csv`: pair=zstd]</sub>\n\n"
                  "| a | b |\n|---|---|\n| 1 | 2 |\n")
    png = tmp / "answer.png"
    png.write_bytes(bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082"))
    return [SimpleNamespace(target=p.name, path=p) for p in (md, png)]


def test_landing_shows_the_answer_and_figure_first(tmp_path: Path,
                                                   default_config: dict) -> None:
    html = render_landing(default_config, stand_ins(tmp_path))
    assert "system-message" not in html, html  # no docutils error or warning on the page
    answer = html.index("<strong>Read speed</strong>")
    assert "TTree_zstd" in html and "<sub>" in html and "<table>" in html  # Markdown, rendered
    figure = html.index('src="data:image/png;base64,')  # in the page, not beside it
    assert max(answer, figure) < html.index("This run</h")  # before everything else


def test_the_snakefile_registers_what_the_landing_uses() -> None:
    """The landing's ``data-image`` directive exists only once hepfmt.report.report_rst is
    imported: by the Snakefile, before ``snakemake --report`` renders the page."""
    assert "from hepfmt.report import report_rst" in (ROOT / "Snakefile").read_text()
    assert ".. data-image::" in LANDING.read_text() and report_rst.__name__ in LANDING.read_text()


def test_landing_without_an_answer_says_how_to_get_one(default_config: dict) -> None:
    html = render_landing(default_config, [])
    assert "system-message" not in html, html
    assert "This report has no answer" in html and "No summary figure" in html


def test_landing_says_rightly_how_to_read_it(tmp_path: Path, default_config: dict) -> None:
    """Every point of the reference is one sample with order-statistic intervals (issue 39: the
    page said "standard deviation over samples"), and the pairs' cluster sizes are listed."""
    text = LANDING.read_text()
    assert "standard deviation over samples" not in " ".join(text.split())
    html = " ".join(render_landing(default_config, stand_ins(tmp_path)).split())
    assert "order-statistic interval" in html
    pairs = ", ".join(map(str, default_config["compare"]["cluster_sizes"]))
    assert "100000" in pairs and "ROOT / Parquet pairs" in html and pairs in html
    assert "ROOT speed / Parquet speed" in html and direction.SPEED_RULE in html
