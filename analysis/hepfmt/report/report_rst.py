"""What the report's landing page needs from docutils, which renders it: the run's answer,
a Markdown file, and its summary figure, embedded in the page.

Snakemake's report renders its landing page (``workflow/report/workflow.rst``) with docutils,
which reads reStructuredText only, while the answer is Markdown, the one text README and the
docs include too. Rather than a second rendering of the answer that could drift from the first,
the landing includes the very file with this module's parser::

    .. include:: results/tables/answer.md
       :parser: hepfmt.report.report_rst

(docutils imports the module named by ``:parser:`` and uses its ``Parser``). The Markdown
becomes one raw HTML node (CommonMark with tables, as GitHub and MkDocs render the same file);
its HTML, such as the ``<sub>`` of each sentence's source, is ``hepfmt answer``'s and passes
through as written.

The report is one self-contained HTML file, so a figure must be in it, not beside it: the
``data-image`` directive is ``image`` with the file as a ``data:`` URI. Snakemake's own
``embeddedimage`` means to do that but does not (its ``Image.run`` comes before the mixin's in
the method order, so the page would point at a path on the machine that built the report). The
Snakefile imports this module, which registers the directive before the report renders.
"""

from __future__ import annotations

import base64
import mimetypes
from pathlib import Path

import docutils.parsers
from docutils import nodes
from docutils.parsers.rst import directives
from docutils.parsers.rst.directives.images import Image
from markdown_it import MarkdownIt


def to_html(text: str) -> str:
    """``text`` (Markdown) as an HTML fragment."""
    return MarkdownIt("commonmark").enable("table").render(text)


def data_uri(path: str | Path) -> str:
    """The file as a ``data:`` URI, which needs nothing beside the page that holds it."""
    mime = mimetypes.guess_type(str(path))[0] or "application/octet-stream"
    return f"data:{mime};base64,{base64.b64encode(Path(path).read_bytes()).decode('ascii')}"


class Parser(docutils.parsers.Parser):
    """Markdown for docutils' ``include`` directive (its ``:parser:`` option)."""

    supported = ("markdown", "md")
    config_section = "hepfmt markdown parser"

    def parse(self, inputstring: str, document: nodes.document) -> None:
        self.setup_parse(inputstring, document)
        document += nodes.raw("", to_html(inputstring), format="html")
        self.finish_parse()


class DataImage(Image):
    """``.. data-image:: path``: an image embedded in the page (the options of ``image``)."""

    def run(self) -> list[nodes.Node]:
        self.arguments[0] = data_uri(directives.uri(self.arguments[0]))
        return super().run()


directives.register_directive("data-image", DataImage)
