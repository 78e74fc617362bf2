"""hepfmt: how do ROOT and Parquet compare on NanoAOD-like data, on this machine, today.

The package is one subpackage per stage of the study, each importing only the stages below it
(checked by the import contracts in pyproject.toml):

* ``plan``: the config and what it asks for (files, read plan, pairs, paths, batch resources);
* ``metastudy``: the metadata-cost study of wide tables;
* ``report``: tables, documents and figures, from the records the other stages wrote;
* ``measure``: sizes, timed reads in isolated processes, the page cache, timing summaries;
* ``formats``: one adapter per on-disk format (``formats/root/`` for ROOT), one registry;
* ``samples``: the source samples: schema, value model, generation, import;
* ``codec``, ``checksum``, ``provenance``, ``atomic``, ``errors``: shared by every stage.

``cli`` is the ``hepfmt`` command the workflow's rules call.
"""

def __getattr__(name: str) -> str:
    """``__version__``, from the package metadata (pyproject.toml's [project] version: its one
    source), looked up only when asked: importlib.metadata's scan of the installed
    distributions is not work every ``import hepfmt`` of every job should do."""
    if name != "__version__":
        raise AttributeError(f"module 'hepfmt' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("hepfmt")
    except PackageNotFoundError:  # a checkout used without installing it
        return "0+unknown"
