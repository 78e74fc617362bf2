"""MkDocs hook: the committed reference runs are part of the site, read where they live.

Measured numbers reach a reader only as generated files under ``results/reference/``
(tables, figures, one-off notes with their provenance). Copying them into ``docs/`` would
make a second home that drifts; so the snippets extension reads them from the repository
(``--8<-- "results/reference/..."``) and this hook adds the non-Markdown ones (figures,
CSV, text) to the site under the same path, so that a page links a figure by the path it
has in the repository and ``mkdocs build --strict`` fails on a figure that does not exist.
"""

from __future__ import annotations

from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

#: What of the repository the site serves besides docs/: the reference runs.
SERVED = ("results/reference",)
#: Markdown of a run is included into pages (snippets), never a page of its own.
NOT_SERVED_SUFFIXES = (".md",)


def repository(config: MkDocsConfig) -> Path:
    """The checkout: the directory of mkdocs.yml, whatever directory mkdocs runs from."""
    return Path(config.config_file_path).resolve().parent


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """Snippets resolve against the checkout, so ``mkdocs build -f`` works from anywhere."""
    snippets = config.mdx_configs.setdefault("pymdownx.snippets", {})
    snippets["base_path"] = [str(repository(config))]
    return config


def on_files(files: Files, config: MkDocsConfig) -> Files:
    root = repository(config)
    for top in SERVED:
        for path in sorted((root / top).rglob("*")):
            if path.is_file() and path.suffix not in NOT_SERVED_SUFFIXES:
                files.append(File(path.relative_to(root).as_posix(), src_dir=str(root),
                                  dest_dir=config.site_dir,
                                  use_directory_urls=config.use_directory_urls))
    return files
