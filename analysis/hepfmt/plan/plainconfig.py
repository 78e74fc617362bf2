"""Snakemake in hepfmt's venv reads a config file as hepfmt does: plain YAML, never code.

Snakemake 9 loads every ``--configfile`` (and the Snakefile's ``configfile:``) through YTE, its
YAML templating, in ``snakemake.common.configfile._load_configfile``, before the Snakefile runs:
a config that sets ``__use_yte__: true`` has its ``__definitions__`` executed and its
``?``-values evaluated as Python, so ``snakemake -n --configfile C`` would run C's code before
any check of hepfmt's could refuse it. Snakemake has no switch for this (9.27.1: YTE is asked
for ``require_use_yte``, nothing more), and a check in the Snakefile comes after it.

So the venv's Python replaces that function as Snakemake imports it: a ``.pth`` line (written
by ``make``, :func:`install`) puts :class:`_Finder` on ``sys.meta_path``, which patches the
module once it is loaded; a config file is then read by :func:`hepfmt.plan.configfile.read`
(bounded, a regular file, strict YAML, YTE's keys refused) and a refusal is one line and exit
status 2, as from ``hepfmt check-config``. The line is cheap (this module imports nothing at
start) and harmless: any failure of the hook leaves Snakemake as it was, and the Snakefile's
own check (:func:`hepfmt.plan.config.for_workflow`) still refuses a YTE config before any
rule runs, for a Snakemake outside the venv, where the code has run by then.
"""

from __future__ import annotations

import os
import sys
import sysconfig
from importlib.abc import MetaPathFinder
from importlib.machinery import ModuleSpec
from pathlib import Path

#: The module whose config loader is replaced.
TARGET = "snakemake.common.configfile"
#: The ``.pth`` file (in the venv's site-packages) that installs the hook at every start.
PTH = "hepfmt-plain-configs.pth"
PTH_LINE = ("import sys; exec(\"try:\\n import hepfmt.plan.plainconfig as p; p.hook()\\n"
            "except Exception:\\n pass\")\n")


def _load_configfile(original):
    def load(configpath_or_obj, filetype="Config"):
        if filetype != "Config" or not isinstance(configpath_or_obj, str | os.PathLike):
            return original(configpath_or_obj, filetype)
        from hepfmt.errors import HepfmtError
        from hepfmt.plan import configfile

        try:
            return configfile.read(configpath_or_obj)
        except HepfmtError as exc:
            print(f"hepfmt: error: {exc}", file=sys.stderr)
            raise SystemExit(2) from None

    load.hepfmt_plain = True
    return load


def patch(module: object) -> None:
    """Replace ``module``'s (Snakemake's) config loader by hepfmt's, once."""
    original = module._load_configfile
    if not getattr(original, "hepfmt_plain", False):
        module._load_configfile = _load_configfile(original)


class _Finder(MetaPathFinder):
    """Finds nothing itself: wraps the loader the other finders give :data:`TARGET`."""

    def find_spec(self, fullname: str, path: object, target: object = None) -> ModuleSpec | None:
        if fullname != TARGET:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None:
                break
        else:
            return None
        run = spec.loader.exec_module

        def exec_module(module: object) -> None:
            run(module)
            patch(module)

        spec.loader.exec_module = exec_module
        return spec


def hook() -> None:
    """Patch Snakemake's config loader when it is imported (or now, if it has been)."""
    if TARGET in sys.modules:
        patch(sys.modules[TARGET])
    elif not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())


def install(site_packages: str | Path | None = None) -> Path:
    """Write the ``.pth`` line into this Python's (the venv's) site-packages; its path."""
    where = Path(site_packages or sysconfig.get_paths()["purelib"]) / PTH
    where.write_text(PTH_LINE)
    return where


if __name__ == "__main__":
    print(f"wrote {install()}")
