"""The one place hepfmt talks to ROOT: import, C++ helpers, names and type maps, opening files.

Every ROOT-using module (the TTree and RNTuple adapters, the wide-table writer, the metadata
study) imports ROOT through :func:`root`, which sets batch mode and declares hepfmt's C++ helpers
(``cxx/*.cxx``, or a path given by the caller) once per process. The readers are different:
declaring them to cling costs ~10 s of JIT in every measurement process, so they are compiled
once per environment into a cached library (:func:`compile_readers`).

A damaged file must not end the process that reads it (a measurement, or the whole test run):
:func:`root` also turns ROOT's aborting messages (``Fatal``, a failed ``R__ASSERT``) into C++
exceptions and crashes inside a call into ROOT into Python exceptions, and
:func:`require_root_file` keeps files without ROOT's header away from ROOT.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from hepfmt.errors import VERBOSE, InputError
from hepfmt.formats.base import is_url

#: The TTree / RNTuple every hepfmt ROOT file holds (NanoAOD's name).
TREE = "Events"
CXX = Path(__file__).resolve().with_name("cxx")
#: numpy dtype name -> TTree leaf type code (``Muon_pt[nMuon]/F``).
LEAF_CODES = {"bool": "O", "int8": "B", "uint8": "b", "int16": "S", "uint16": "s", "int32": "I",
              "uint32": "i", "int64": "L", "uint64": "l", "float32": "F", "float64": "D"}
#: numpy dtype name -> C++ type of an RNTuple field (and of an RVec's items).
CPP_TYPES = {"bool": "bool", "int8": "std::int8_t", "uint8": "std::uint8_t",
             "int16": "std::int16_t", "uint16": "std::uint16_t", "int32": "std::int32_t",
             "uint32": "std::uint32_t", "int64": "std::int64_t", "uint64": "std::uint64_t",
             "float32": "float", "float64": "double"}
#: The compiled readers: the sources, their interface (all Python declares) and a header.
READERS_CXX = ("readers.cxx", "codecs.cxx", "tree_layout.cxx", "readers.hxx", "checksum.hxx")
READERS_SOURCES = tuple(n for n in READERS_CXX if n.endswith(".cxx"))
READERS_HEADER = "readers.hxx"
READERS = "readers"
#: The error handler that turns ROOT's process-ending messages into exceptions (``fatal.cxx``).
FATAL = "fatal"

T = TypeVar("T")
_declared: set[str] = set()


def root(*helpers: str | Path):
    """ROOT in batch mode, with the named helpers declared once per process: a name is a file
    of ``cxx/`` without its ``.cxx``, a path any other C++ file; :data:`READERS` loads the
    compiled readers."""
    import ROOT

    ROOT.gROOT.SetBatch(True)
    if not os.environ.get(VERBOSE):  # hepfmt names the file and the problem in one line
        ROOT.gErrorIgnoreLevel = ROOT.kFatal
        ROOT.gEnv.SetValue("Root.Stacktrace", "no")  # not ROOT's crash report either
    if FATAL not in _declared:  # before any helper: ROOT's aborts become exceptions
        if not ROOT.gInterpreter.Declare(f'#include "{CXX / FATAL}.cxx"'):
            raise RuntimeError(f"cling could not compile {CXX / FATAL}.cxx")
        ROOT.hepfmt_fatal.install()
        _signals_as_exceptions()
        _declared.add(FATAL)
    for helper in helpers:
        key = str(helper)
        if key in _declared:
            continue
        if key == READERS:
            compile_readers(ROOT)
        else:
            path = Path(helper) if isinstance(helper, Path) else CXX / f"{helper}.cxx"
            if not ROOT.gInterpreter.Declare(f'#include "{path}"'):
                raise RuntimeError(f"cling could not compile {path}")
        _declared.add(key)
    return ROOT


def _signals_as_exceptions() -> None:
    """A crash inside ROOT (a segmentation violation on a header whose lengths are garbage,
    found by feeding it random bytes after the ``root`` magic) becomes a Python exception at the
    cppyy call that crashed (cppyy jumps back to it), so the adapter names the file instead of
    the process dying. Quietly unless verbose: no stack trace, no "*** Break ***" line."""
    import cppyy.ll

    cppyy.ll.set_signals_as_exception(True)
    if not os.environ.get(VERBOSE):
        os.environ.setdefault("CPPYY_CRASH_QUIET", "1")


def _readers_text() -> str:
    return "".join((CXX / name).read_text() for name in READERS_CXX)


def reader_cache_dir(ROOT) -> Path:
    """Where the compiled readers live: inside this Python environment by default
    (``$HEPFMT_CACHE`` overrides), under a key of the sources, ROOT's version and ROOT's
    installation directory. A library built against another ROOT installation (another
    venv) must never be loaded: it would pull a second copy of ROOT into the process."""
    root_dir = str(Path(ROOT.__file__).resolve().parent)
    key = hashlib.sha256((_readers_text() + ROOT.gROOT.GetVersion() + root_dir).encode())
    base = Path(os.environ.get("HEPFMT_CACHE") or Path(sys.prefix) / "var" / "cache" / "hepfmt")
    return base / key.hexdigest()[:16]


#: The ROOT libraries the readers link against (and zlib, which ROOT links too, for the
#: codec bound's gzip pages).
READER_LIBS = ("Core", "RIO", "Tree", "TreePlayer", "ROOTDataFrame", "ROOTNTuple", "ROOTVecOps",
               "z")


def _compile_command(ROOT, srcs: list[Path], out: Path) -> list[str]:
    """The C++ compiler and standard ROOT's own ACLiC uses, on ROOT's headers and libraries,
    without a dictionary (see :func:`compile_readers`)."""
    make = str(ROOT.gSystem.GetMakeSharedLib())
    std = re.search(r"-std=\S+", make)
    inc, lib = str(ROOT.gROOT.GetIncludeDir()), str(ROOT.gROOT.GetLibDir())
    return [os.environ.get("CXX", "c++"), "-O2", "-shared", "-fPIC", "-pthread",
            std.group(0) if std else "-std=c++17", "-fsized-deallocation", f"-I{inc}",
            f"-I{srcs[0].parent}", *map(str, srcs), "-o", str(out), f"-L{lib}",
            *(f"-l{name}" for name in READER_LIBS), f"-Wl,-rpath,{lib}"]


def compile_readers(ROOT) -> None:
    """Build the readers once per environment into a cached plain shared library, then load
    it and declare only its interface (``readers.hxx``).

    The library has no ROOT dictionary on purpose: loading one built by ACLiC made cling parse
    the RDataFrame headers it was built from, about 6 s in every process that read a ROOT file
    (every measurement, every verified write); this one loads in ~0.05 s. The build (~40 s)
    happens once, under a lock, since concurrent first builds would clobber each other.
    """
    cache = reader_cache_dir(ROOT)
    cache.mkdir(parents=True, exist_ok=True)
    lib = cache / "hepfmt_readers.so"
    with open(cache / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not lib.exists():
            for name in READERS_CXX:
                shutil.copyfile(CXX / name, cache / name)
            tmp = lib.with_suffix(".tmp.so")
            build = subprocess.run(
                _compile_command(ROOT, [cache / n for n in READERS_SOURCES], tmp),
                capture_output=True, text=True)
            if build.returncode != 0:
                tail = "\n".join(build.stderr.strip().splitlines()[-5:])
                raise RuntimeError(f"could not compile {', '.join(READERS_SOURCES)} in {CXX}:"
                                   f"\n{tail}")
            tmp.replace(lib)
    if ROOT.gSystem.Load(str(lib)) < 0:
        raise RuntimeError(f"ROOT could not load {lib}")
    if not ROOT.gInterpreter.Declare(f'#include "{cache / READERS_HEADER}"'):
        raise RuntimeError(f"cling could not declare {cache / READERS_HEADER}")


#: cppyy's exceptions for a signal inside C++ (:func:`_signals_as_exceptions`).
SIGNALS = ("SegmentationViolation", "BusError", "IllegalInstruction", "AbortSignal")


def cxx_what(exc: BaseException) -> str:
    """A C++ exception's own message, out of cppyy's text for it (which leads with the whole
    signature of the function that threw: ``<signature> =>\n    runtime_error: <what>``). Of an
    overloaded function's failures, the last (the overload that took the arguments)."""
    text = str(exc)
    signal = next((s for s in SIGNALS if s in text or type(exc).__name__ == s), None)
    if signal:
        return f"crashed inside ROOT ({signal}, caught)"
    m = re.search(r".*=>\s*(?:[A-Za-z_][\w:]*: )?(.*)\Z", text, re.S)
    return " ".join((m.group(1) if m else text).split())


def create(path: str | Path, opener: Callable[[str], T]) -> T:
    """``opener(name)`` run in ``path``'s directory with its base name: ROOT (and uproot) record
    the name a file is created under inside the file, so a full path would make the same data a
    few bytes larger under a longer directory. The files' names themselves have fixed length
    (atomic_path's temporary names), so sizes do not depend on where results live."""
    path = Path(path)
    with contextlib.chdir(path.parent):
        return opener(path.name)


#: The first bytes of every file ROOT writes (TFile's header; RNTuple in a TFile container too).
MAGIC = b"root"


def require_root_file(path: str | Path) -> None:
    """An InputError naming ``path`` unless it exists and begins as a ROOT file. Checked before
    ROOT sees it: RNTuple's reader takes a file without the header for a bare RNTuple and can
    fail on it anywhere; this says what is wrong in words. A URL is left to ROOT's client."""
    if is_url(path):
        return
    try:
        with open(path, "rb") as f:
            head = f.read(len(MAGIC))
    except FileNotFoundError:
        raise InputError(path, "no such file") from None
    except OSError as exc:
        raise InputError(path, f"cannot be read ({exc.strerror or exc})") from exc
    if head != MAGIC:
        what = "it is empty" if not head else f"it begins with {head!r}, not {MAGIC!r}"
        raise InputError(path, f"not a ROOT file ({what})")


def open_file(path: str | Path):
    """A ROOT file opened for reading, or an InputError naming it."""
    ROOT = root()
    require_root_file(path)
    try:  # PyROOT raises OSError for unopenable files; older versions return a zombie
        f = ROOT.TFile.Open(str(path), "READ")
    except OSError as exc:
        raise InputError(path, f"not a readable ROOT file ({exc})") from exc
    except Exception as exc:  # a C++ exception or crash inside TFile's header reading
        raise InputError(path, f"not a readable ROOT file ({cxx_what(exc)})", str(exc)) from exc
    if not f or f.IsZombie():
        raise InputError(path, "not a readable ROOT file")
    return f
