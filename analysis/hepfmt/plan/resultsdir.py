"""Where a run may write: a results directory of hepfmt's own.

A run writes, rewrites and cleans up below ``results`` (its files, tables, figures, logs; the
resume removes what a killed job left). So ``results`` (with ``..`` and every symlink
resolved: ``/proc/self/cwd``, a link to the project) is refused, in one line naming the key,
when it is

- the filesystem root, the project root or a directory holding the project;
- a system directory (:data:`SYSTEM_TREES`, or anything inside one; :data:`SYSTEM_DIRS`
  themselves), or inside a ``.git`` directory;
- one of the project's own directories (:data:`PROJECT_OWN`: its sources, configs, workflow,
  package, venv) or inside one;
- a directory of a git repository's tracked files (git's, where git is installed): ``results``
  is, or lies inside, a directory (other than the repository's top) that directly holds a
  tracked file, or a tracked file lies under ``results`` where the run writes
  (:func:`layout`: ``results/reference/amd-epyc`` would have its ``config.yaml``,
  ``provenance.json`` and ``figures/`` overwritten). The default ``results`` holds the
  committed ``reference/`` runs, which no run writes: it passes;
- an existing directory that is not hepfmt's: a results directory is new, empty, carries
  hepfmt's marker (:data:`MARKER`, written when a run takes it: :func:`mark`), or holds an
  earlier run's files (the lock file every run leaves, or two of the directories a run makes
  directly under it: ``sources/``, ``tables/``, ``logs/``, ...; one, a ``logs/`` of a home
  directory, is no sign of a run), or holds nothing but tracked files
  (``results/`` of a fresh clone: its ``reference/`` only), or is the project's own
  ``results/`` (the default; also in a copy without git).

The checks are cheap (no walk of the tree; one ``git ls-files`` below the repository's top):
the Snakefile and ``hepfmt check-config`` both run them (:mod:`hepfmt.plan.checks`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from functools import cache
from pathlib import Path

from hepfmt.atomic import LEDGER, RESULTS_MARKER
from hepfmt.plan import paths

#: The directory holding the Snakefile: no study writes its outputs there or above it.
PROJECT = Path(__file__).resolve().parents[3]
#: A results directory's mark of hepfmt's ownership, written by the run that takes it.
MARKER = RESULTS_MARKER
#: The lock file every run leaves in its results directory (hepfmt.plan.lock).
LOCK = ".hepfmt.lock"
#: System directories refused with everything inside them.
SYSTEM_TREES = tuple(Path(p) for p in (
    "/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/sbin",
    "/snap", "/sys", "/usr", "/var/backups", "/var/cache", "/var/lib", "/var/local",
    "/var/lock", "/var/log", "/var/mail", "/var/opt", "/var/run", "/var/spool"))
#: Directories refused themselves, not what is inside them (``/tmp/x``, ``/home/me/results``).
SYSTEM_DIRS = tuple(Path(p) for p in (
    "/", "/home", "/media", "/mnt", "/opt", "/root", "/run", "/srv", "/tmp", "/var",
    "/var/tmp"))
#: The project's own directories (relative to :data:`PROJECT`): none may hold results.
PROJECT_OWN = (".ci", ".git", ".snakemake", ".venv", "analysis", "config", "docs", "envs",
               "hepfmt.egg-info", "tests", "tools", "workflow", "results/reference")
#: Names a run writes that many a directory holds: no sign of an earlier run.
COMMON_NAMES = frozenset({"config.yaml", "provenance.json", "plan.json"})
#: How long ``git ls-files`` may take before the tracked-file check is passed over.
GIT_TIMEOUT_S = 20.0


@cache
def layout() -> frozenset[str]:
    """The names a run writes directly under ``results`` (from :mod:`hepfmt.plan.paths`, the
    one home of every path), with its lock and marker."""
    names = {"logs", "benchmarks", LOCK, MARKER, LEDGER}
    templates = [v for v in vars(paths).values() if isinstance(v, str)]
    templates += list(paths.META.values())
    for t in templates:
        if t.startswith("{results}/"):
            names.add(t.split("/")[1])
    return frozenset(names)


def _inside(where: Path, root: Path) -> bool:
    return where == root or root in where.parents


def problem(text: str) -> str | None:
    """Why a run may not write into ``results: text``, or None (see the module docstring).
    Raises ``OSError``/``ValueError``/``RuntimeError`` for a path no directory can have."""
    where = Path(text).resolve()
    for check in (_project, _system, _git_dir, _own, _tracked, _ownership):
        why = check(text, where)
        if why:
            return why
    return None


def _project(text: str, where: Path) -> str | None:
    if where == PROJECT or where in PROJECT.parents:
        what = ("the filesystem root" if where == Path(where.anchor) else
                "the project root (the directory holding the Snakefile)" if where == PROJECT
                else "a directory holding the project")
        return f"{text!r} is {what}; outputs need a directory of their own (e.g. results)"
    return None


def _resolved(text: str, where: Path) -> str:
    return "" if str(where) == text else f" ({text!r} resolves to it)"


def _system(text: str, where: Path) -> str | None:
    for tree in SYSTEM_TREES:
        if _inside(where, tree):
            return (f"{str(where)!r} is inside the system directory {str(tree)!r}"
                    f"{_resolved(text, where)}; give a directory of your own")
    if where in SYSTEM_DIRS:
        return (f"{str(where)!r} is a system directory{_resolved(text, where)}; give a "
                "directory of its own (e.g. a new one inside it)")
    return None


def _git_dir(text: str, where: Path) -> str | None:
    if ".git" in where.parts:
        return (f"{str(where)!r} is inside a .git directory{_resolved(text, where)}: "
                "git's own files")
    return None


def _own(text: str, where: Path) -> str | None:
    for name in PROJECT_OWN:
        if _inside(where, PROJECT / name):
            return (f"{str(where)!r} is inside the project's own {name}/"
                    f"{_resolved(text, where)}; outputs need a directory of their own (e.g. "
                    "results)")
    return None


def _existing(where: Path) -> Path:
    made = where
    while not made.exists():
        made = made.parent
    return made


def _git(cwd: Path, *args: str) -> str | None:
    """A git command's output, or None: no git, no repository, an error, too slow."""
    if shutil.which("git") is None:
        return None
    try:
        proc = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True,
                              timeout=GIT_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout if proc.returncode == 0 else None


def tracked_under(where: Path) -> tuple[Path, list[Path]] | None:
    """The top of the git repository ``where`` is in, and its tracked files under the topmost
    directory between that top and ``where`` (absolute); None outside a repository (or
    without git)."""
    near = _existing(where)
    if not near.is_dir():
        return None
    top = _git(near, "rev-parse", "--show-toplevel")
    if not top:
        return None
    top_path = Path(top.strip()).resolve()
    if not _inside(where, top_path):
        return None
    rel = where.relative_to(top_path)
    spec = rel.parts[0] if rel.parts else "."
    out = _git(top_path, "ls-files", "-z", "--full-name", "--", spec)
    if out is None:
        return None
    return top_path, [top_path / f for f in out.split("\0") if f]


def _tracked(text: str, where: Path) -> str | None:
    found = tracked_under(where)
    if found is None:
        return None
    top, files = found
    holders = {where, *(p for p in where.parents if top in p.parents)}  # below the top
    for f in files:
        if f.parent in holders:
            return (f"{str(f.parent)!r}{'' if f.parent != where else _resolved(text, where)} "
                    f"holds files tracked by git ({f.name}, ...): a run would write among "
                    "them; give a directory of its own")
        if where in f.parents and f.relative_to(where).parts[0] in layout():
            return (f"{str(where)!r} holds files tracked by git where a run writes "
                    f"({f.relative_to(where)}, ...); give a directory of its own")
    return None


def _ownership(text: str, where: Path) -> str | None:
    if not where.exists():
        return None
    if not where.is_dir():
        return f"{str(where)!r} is a file, not a directory"
    try:
        entries = {e.name for e in os.scandir(where)}
    except OSError as exc:
        return f"{str(where)!r} cannot be listed ({exc.strerror})"
    if not entries or MARKER in entries or LOCK in entries or where == PROJECT / "results":
        return None  # (the project's own results/: git ignores all of it but reference/)
    if len(entries & (layout() - COMMON_NAMES)) >= 2:  # an earlier run's, before the marker
        return None
    found = tracked_under(where)
    if found is not None and entries <= {f.relative_to(where).parts[0] for f in found[1]
                                         if where in f.parents}:
        return None  # nothing but tracked files: results/ of a fresh clone
    return (f"{str(where)!r} exists and is not hepfmt's: no {MARKER} marker and no earlier "
            f"run's files in it; give a new or empty directory (a run writes, rewrites and "
            f"cleans up inside it)")


def mark(results: str | Path) -> None:
    """Write hepfmt's marker into ``results`` (a run holding it: hepfmt.plan.lock)."""
    marker = Path(results) / MARKER
    if not marker.exists():
        marker.write_text("a results directory of hepfmt's: its runs write, rewrite and clean "
                          "up inside it\n")
