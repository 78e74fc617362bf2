"""One measurement per fresh Python interpreter.

Timings must not depend on what ran before them in the same process: library state, JIT caches,
allocator history, or another library's imports. So each measurement runs as
``python -m <module> SPEC_JSON OUT``: the parent passes a spec (a dataclass), the child runs one
function on it and writes the result to OUT; a child's failure reaches the parent as one line
naming the file.

A child opens a file it did not write, so it runs under a memory cap
(:mod:`hepfmt.measure.memcap`), which it sets itself before anything reads the file; the parent
waits for it with ``wait4`` and so learns its peak resident memory, which tells a child that ran
out of its cap from one that crashed for another reason.

It runs under a time limit too (:mod:`hepfmt.measure.timelimit`): a damaged file can make a
library loop as well as allocate. The child leads a process group of its own, so that what it
started (a library's helper, a shell's command) is killed with it; it asks the kernel to kill it
if its parent dies, as the group no longer shares its parent's (a job killed by the workflow).

A library's own exception in a child is a diagnosis naming the file (:func:`reporting`), never
a bare exception name: its type and text are the detail (``--verbose``).
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import json
import os
import signal
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from hepfmt.atomic import release_scratch_of, scratch_dir
from hepfmt.errors import (
    HepfmtError,
    InputError,
    VerificationError,
    brief,
    exit_with,
    note_failure,
    verbose,
)
from hepfmt.measure import memcap, timelimit

#: What the parent tells its child: the file it reads and what it does (JSON ``[path, what]``),
#: for the child's own line; and the parent's pid, to die with it.
SUBJECT = "HEPFMT_SUBJECT"
PARENT = "HEPFMT_PARENT_PID"
#: prctl's option for a signal on the parent's death (linux/prctl.h).
_PR_SET_PDEATHSIG = 1
#: This child's :data:`SUBJECT`, taken out of the environment at :func:`start` (a process it
#: starts itself is not reading for the same parent).
_subject: tuple[str, str] | None = None


def spawn(module: str, spec: object, path: str | Path, what: str, timeout: float,
          wrap: Callable[[list[str]], list[str]] | None = None,
          data_bytes: float | None = None, threads: int = 1) -> dict:
    """Run ``module``'s :func:`child` on ``spec`` in a new interpreter; return its result.
    ``wrap`` turns the command into the one to run (e.g. one that enters a throttled cgroup
    first: :meth:`~hepfmt.measure.storage.blockdev.Device.command`); ``data_bytes`` (the
    uncompressed bytes the child holds) and ``threads`` size its memory cap
    (:func:`~hepfmt.measure.memcap.cap_for`); the time limit is the file's
    (:func:`~hepfmt.measure.timelimit.effective`), at most ``timeout``."""
    fields = asdict(spec)
    argv = [sys.executable, "-m", module, json.dumps(fields)]
    return _run(argv, path, what, timeout, wrap, memcap.cap_for(path, data_bytes, threads),
                timelimit.timing_budget(fields))


def call(function: str, kwargs: dict, path: str | Path, what: str, timeout: float,
         data_bytes: float | None = None, busy_s: float = 0.0) -> object:
    """``function`` (``module:name``) called with ``kwargs`` in a new interpreter: for opening
    a file nobody has verified, whose library may crash (a segfault in ROOT becomes an error
    naming ``path`` instead of killing the caller); under a memory cap and a time limit as
    :func:`spawn`; ``busy_s``: the seconds its own work takes whatever the file's size (a
    judgement's writes), added to the limit."""
    return _run([sys.executable, "-m", __name__, function, json.dumps(kwargs)], path, what,
                timeout, None, memcap.cap_for(path, data_bytes),
                timelimit.timing_budget(kwargs) + busy_s)["result"]


def hwm(pid: int | str = "self") -> int:
    """A process's peak resident memory so far (``VmHWM``, bytes); 0 once it has gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def kill_group(proc: subprocess.Popen) -> None:
    """Kill the child and, where it leads a process group (:func:`_run`'s children), everything
    in the group; then reap the child. (A child that shares its parent's group, a pair worker,
    is killed alone: the group is the caller's.)"""
    try:
        if os.getpgid(proc.pid) == proc.pid:
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except ProcessLookupError:
        pass
    with contextlib.suppress(ChildProcessError):  # reaped already
        os.waitpid(proc.pid, 0)
    proc.returncode = -signal.SIGKILL


def wait(proc: subprocess.Popen, timeout: float) -> tuple[int, int] | None:
    """(exit status as ``returncode``, peak RSS bytes of the child and the children it
    waited for), or None when ``timeout`` passed first (the child is then killed with its
    process group: :func:`kill_group`; so it is when the wait is interrupted, by Ctrl-C).

    The kernel's peak for a child (``wait4``'s ``ru_maxrss``) includes the memory it had before
    it executed its program, which is its parent's (a forked copy, or the parent's own pages
    under vfork): a child of a parent that had grown to gigabytes would seem to have used them.
    So where ``ru_maxrss`` does not exceed the parent's own peak, the child's peak is the
    largest ``VmHWM`` of its program seen while waiting."""
    deadline = time.monotonic() + timeout
    inherited = hwm()
    seen = 0
    pause = 0.001
    try:
        while True:
            seen = max(seen, hwm(proc.pid))
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                kill_group(proc)
                return None
            time.sleep(pause)
            pause = min(2 * pause, 0.05)
    except BaseException:  # Ctrl-C: a child in a group of its own would not see it
        kill_group(proc)
        raise
    proc.returncode = os.waitstatus_to_exitcode(status)
    peak = usage.ru_maxrss * 1024
    return proc.returncode, peak if peak > inherited else seen


def child_env(path: str | Path, what: str, cap: int | None) -> dict[str, str]:
    """A child's environment: its memory cap, and what it reads and does (:data:`SUBJECT`)."""
    return {**memcap.child_env(cap), SUBJECT: json.dumps([str(path), what]),
            PARENT: str(os.getpid())}


def _run(cmd: list[str], path: str | Path, what: str, timeout: float,
         wrap: Callable[[list[str]], list[str]] | None, cap: int | None,
         busy_s: float = 0.0) -> dict:
    seconds, by_limit = timelimit.effective(path, timeout, busy_s)
    # written down (hepfmt.atomic): a run that finds its process dead removes what a kill
    # left here
    with scratch_dir(prefix=f"hepfmt-fresh-{os.getpid()}-") as tmp:
        out = Path(tmp) / "result.json"
        cmd = [*cmd, str(out)]
        if wrap is not None:  # a new session is no new cgroup: the wrap still moves it there
            cmd = wrap(cmd)
        with open(Path(tmp) / "stderr", "w+", errors="replace") as err:
            began = time.monotonic()
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=err, env=child_env(path, what, cap),
                                    start_new_session=True)
            ended = wait(proc, seconds)
            release_scratch_of(proc.pid)  # what it could not remove itself (a C++ abort)
            err.seek(0)
            stderr = err.read()
        if ended is None:
            raise timelimit.stopped(path, what, time.monotonic() - began, seconds, by_limit)
        returncode, peak = ended
        if returncode == 0 and out.exists():
            return json.loads(out.read_text())
        raise failure(path, what, returncode, stderr, peak, cap)


def failure(path: str | Path, what: str, returncode: int, stderr: str, peak: int,
            cap: int | None) -> HepfmtError:
    """The one-line error of a child that failed: out of its memory cap, crashed, or said why
    (its own ``hepfmt:`` line, else the first meaningful lines of what its library printed);
    the child's whole output is the error's detail (``--verbose``)."""
    path = str(path)
    detail = (f"{path}: {what} failed (exit status {returncode}, peak resident memory "
              f"{memcap.gb(peak)}, memory cap {memcap.gb(cap) if cap else 'none'}):\n{stderr}")
    crashed = returncode < 0 or "*** Break ***" in stderr  # ROOT's handler exits after a signal
    if memcap.reached(cap, stderr, crashed, peak):
        return memcap.exceeded(path, cap, detail)
    if returncode < 0:
        return InputError(path, f"{what} crashed ({signal.Signals(-returncode).name}): the "
                                "library could not handle this file", detail)
    own = [x for x in stderr.splitlines() if x.startswith("hepfmt: ")]
    if own:
        line = own[-1].removeprefix("hepfmt: ")
        if line.startswith(f"{path}: "):  # the child named the file already
            return VerificationError(path, line[len(f"{path}: "):], detail)
        return VerificationError(path, f"{what} failed: {line}", detail)
    if crashed:
        return InputError(path, f"{what} crashed: the library could not handle this file "
                                f"({brief(stderr)})", detail)
    return VerificationError(path, f"{what} failed: {brief(stderr) or '(no output)'}", detail)


def _die_with_parent() -> None:
    """Be killed when the parent dies (Linux; elsewhere nothing): a child in a session of its
    own would outlive a parent the workflow killed. A parent gone before this (it is no longer
    the parent) ends the child at once. The parent's pid leaves the environment: a process
    this one starts has another parent."""
    parent = os.environ.pop(PARENT, None)
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if parent and parent != str(os.getppid()):
        os._exit(2)


def _take_subject() -> tuple[str, str] | None:
    try:
        path, what = json.loads(os.environ.pop(SUBJECT, ""))
    except (ValueError, TypeError):
        return None
    return str(path), str(what)


def start() -> None:
    """A child's first step: the memory cap, before it opens any file; death with its parent;
    what it reads, for its line (:func:`subject`); ROOT's alpha notice off."""
    global _subject
    memcap.apply()
    _die_with_parent()
    _subject = _take_subject()
    warnings.filterwarnings("ignore", message=r"\s*This distribution of ROOT is in alpha stage")


def subject() -> tuple[str, str] | None:
    """The file this child reads and what it does, as its parent said (:data:`SUBJECT`); None
    where it did not (a process not started by :func:`spawn` or :func:`call`)."""
    return _subject


def library_failure(exc: BaseException, about: tuple[str, str] | None = None) -> str:
    """The line of a library's own exception: what could not be read, and the library's words
    briefly (:func:`brief`), not its exception's name (that is the detail)."""
    words = brief(str(exc)) or "no message; --verbose for the detail"
    line = f"the library could not read it ({words})"
    return f"{about[0]}: {about[1]} failed: {line}" if about else line


def reporting(body: Callable[[], object]) -> int:
    """``body()``, and the child's exit status: 0, or 2 after one ``hepfmt:`` line on stderr
    (the parent turns it into its own line; all of the libraries' text with --verbose). A
    library's exception is named on the next line, which is detail only (the parent's
    :func:`memcap.reached` reads a ``MemoryError`` there)."""
    try:
        body()
    except HepfmtError as exc:
        note_failure(exc)
        print(f"hepfmt: {exc}", file=sys.stderr)
        if verbose():
            print(exc.detail, file=sys.stderr)
        if memcap.out_of_memory(exc):  # for the parent (memcap.reached), whatever it says
            print("(raised from a MemoryError)", file=sys.stderr)
        return 2
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # a library's own error (a Rust panic is no Exception): one
        note_failure(exc)         # line, all of it with --verbose
        if verbose():
            raise
        print(f"hepfmt: {library_failure(exc, subject())}", file=sys.stderr)
        print(f"(raised as {type(exc).__name__}: {brief(str(exc))})", file=sys.stderr)
        return 2
    return 0


def child(argv: list[str], spec_type: type, body: Callable[[object], dict]) -> int:
    """The child's entry point: ``argv`` is ``[SPEC_JSON, OUT]``; exit status 2 on an error."""
    start()
    spec = spec_type(**json.loads(argv[0]))
    return reporting(lambda: Path(argv[1]).write_text(json.dumps(body(spec))))


def _call_child(argv: list[str]) -> int:
    function, kwargs, out = argv
    module, name = function.split(":")
    return child([kwargs, out], dict, lambda kw: {
        "result": getattr(importlib.import_module(module), name)(**kw)})


if __name__ == "__main__":  # python -m hepfmt.measure.isolated MODULE:FUNCTION KWARGS OUT
    exit_with(_call_child(sys.argv[1:]))
