"""Errors a user sees: each names the file (or config key) and the problem, nothing more.

A library's message is often a dump: ROOT's crash banner and the stack trace of every thread, a
Rust error with thirty frames of ``Backtrace:``, a Python traceback. An error keeps that whole
text (``detail``, what ``hepfmt --verbose`` prints), but its message is :func:`brief`'s: the
lines that say something, on one line, cut at :data:`MAX_CHARS`. This is the one place where a
library's text becomes a hepfmt message; a child process's dump goes through it too
(:mod:`hepfmt.measure.isolated`).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import NoReturn

#: Set (to 1) when the user asked for the libraries' own messages (``hepfmt --verbose``).
VERBOSE = "HEPFMT_VERBOSE"

#: The longest message an error shows without ``--verbose``: a line a terminal shows whole.
MAX_CHARS = 300

#: A line that only draws: ROOT's banners (``=====``), rules, underlines of a traceback (``^^^``).
_RULE = re.compile(r"^[\s=\-*#_~+^.]*$")
#: A frame of gdb's backtrace (``#3  0x7f... in f ()``), wherever it is
_GDB_FRAME = re.compile(r"^#\d+\s")
#: A frame of a backtrace after its heading: Rust's (``  12: name``, ``at src/x.rs:3``)
_FRAME = re.compile(r"^\s*(#\d+\s|\d+:\s|at\s|<unknown>)")
#: Where a backtrace starts: Rust's ``Backtrace:`` / ``stack backtrace:``, ROOT's crash dump.
_BACKTRACE = re.compile(r"^\s*(stack\s+)?backtrace:?\s*$", re.IGNORECASE)
_CRASH_DUMP = ("There was a crash.", "This is the entire stack trace of all threads:")
#: Lines that only point elsewhere (Rust's hint, Python's chaining notes).
_POINTERS = re.compile(r"^(note: .*RUST_BACKTRACE|During handling of the above exception|"
                       r"The above exception was the direct cause)")
#: A backtrace already folded into one line: ``... Backtrace: 0: <unknown> 1: ... _start )``
_INLINE_BACKTRACE = re.compile(r"\s*\b(?:stack\s+)?backtrace:\s*0:\s.*?(?=\)*\s*$)",
                               re.IGNORECASE)
#: A rule inside a line (``read failed: =====``, a banner that was folded into it).
_INLINE_RULE = re.compile(r"\s*[=*#~-]{5,}\s*")


def meaningful_lines(text: str) -> list[str]:
    """The lines of a library's message that say something: no backtrace (Rust's section, the
    crash dump ROOT prints after ``*** Break ***``, a Python traceback's frames), no rule of
    ``=`` and no blank line."""
    out: list[str] = []
    in_trace = False  # inside a backtrace or a Python traceback's frames
    for raw in str(text).splitlines():
        line = raw.rstrip()
        if line.strip() in _CRASH_DUMP:
            break  # ROOT's dump of every thread's stack: nothing after it is the message
        if _BACKTRACE.match(line):
            in_trace = True
            continue
        if line.startswith("Traceback (most recent call last):"):
            in_trace = True
            continue
        if in_trace:
            if _FRAME.match(line) or line.startswith((" ", "\t")) or not line.strip():
                continue
            in_trace = False  # the exception a Python traceback ends with, or what follows
        if _RULE.match(line) or _GDB_FRAME.match(line) or _POINTERS.match(line):
            continue
        line = _INLINE_RULE.sub(" ", _INLINE_BACKTRACE.sub("", line)).strip()
        if line:
            out.append(" ".join(line.split()))
    return out


def brief(text: str) -> str:
    """A library's message as one short line (see :func:`meaningful_lines`), cut at
    :data:`MAX_CHARS`; the whole text is for ``--verbose``."""
    lines = meaningful_lines(text)
    # a parenthesis closing a library's text sits alone on the line after its last one
    line = re.sub(r" \)", ")", " ".join(lines)) if lines else " ".join(str(text).split())
    return line if len(line) <= MAX_CHARS else line[:MAX_CHARS].rsplit(" ", 1)[0] + " …"


def verbose() -> bool:
    """Whether the user asked for the libraries' whole messages (``--verbose``)."""
    return bool(os.environ.get(VERBOSE))


class HepfmtError(Exception):
    """Base class; the CLI prints these as one line and exits with status 2.

    ``detail`` is the whole text, libraries' dumps included (default: the message as given),
    which the CLI prints instead under ``--verbose``."""

    def __init__(self, message: str, detail: str | None = None) -> None:
        self.detail = str(message) if detail is None else detail
        super().__init__(brief(message))


class InputError(HepfmtError):
    """A file that is missing, truncated, corrupt or not what it claims to be."""

    def __init__(self, path: str | Path, problem: str, detail: str | None = None) -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}", detail)


class ConfigError(HepfmtError):
    """A config value that fails the schema; names the key path."""

    def __init__(self, key: str, problem: str) -> None:
        self.key = key
        self.problem = problem
        super().__init__(f"config key {key!r}: {problem}")


class UsageError(HepfmtError):
    """A command-line option with a value the command cannot use; names the option (a
    :class:`ConfigError` names a config key, which a flag is not)."""

    def __init__(self, option: str, problem: str) -> None:
        self.option = option
        super().__init__(f"option {option}: {problem}")


class VerificationError(HepfmtError):
    """A written file or a read result that does not match what was asked or expected."""

    def __init__(self, path: str | Path, problem: str, detail: str | None = None) -> None:
        self.path = str(path)
        super().__init__(f"{path}: {problem}", detail)


#: cppyy's exceptions for a signal caught inside C++ (the ROOT backend turns signals into them).
CXX_SIGNALS = frozenset({"SegmentationViolation", "BusError", "IllegalInstruction",
                         "AbortSignal"})
_crashed_in_cxx = False


def crashed_in_cxx(exc: BaseException | None) -> bool:
    """Whether ``exc`` or an exception it was raised from is a crash caught inside C++."""
    while exc is not None:
        if type(exc).__name__ in CXX_SIGNALS:
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def note_failure(exc: BaseException) -> None:
    """What a process's entry point does with the error it ends on, for :func:`exit_with`."""
    global _crashed_in_cxx
    _crashed_in_cxx = _crashed_in_cxx or crashed_in_cxx(exc)


def exit_with(code: int) -> NoReturn:
    """End the process with ``code``. After a crash caught inside C++ (a damaged TTree), the
    library's state is not to be trusted: ROOT's teardown at exit, closing what it still lists,
    crashed on what the caught crash left behind (fuzzing TTree files, 2 of 2 runs). Then the
    process leaves without teardown, its output flushed, so its status is still ``code``."""
    if _crashed_in_cxx:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)

