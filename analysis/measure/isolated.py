"""One measurement per fresh Python interpreter.

Timings must not depend on what ran before them in the same process: library state, JIT caches,
allocator history, or another library's imports. So each measurement runs as
``python -m <module> SPEC_JSON OUT``: the parent passes a spec (a dataclass), the child runs one
function on it and writes the result to OUT; a child's failure reaches the parent as one line
naming the file.

A child opens a file it did not write, so it runs under a memory cap
(:mod:`analysis.measure.memcap`), which it sets itself before anything reads the file; the parent
waits for it with ``wait4`` and so learns its peak resident memory, which tells a child that ran
out of its cap from one that crashed for another reason.
"""

from __future__ import annotations

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

from analysis.atomic import scratch_dir
from analysis.errors import (
    HepfmtError,
    InputError,
    VerificationError,
    brief,
    exit_with,
    note_failure,
    verbose,
)
from analysis.measure import memcap


def spawn(module: str, spec: object, path: str | Path, what: str, timeout: float,
          wrap: Callable[[list[str]], list[str]] | None = None,
          data_bytes: float | None = None, threads: int = 1) -> dict:
    """Run ``module``'s :func:`child` on ``spec`` in a new interpreter; return its result.
    ``wrap`` turns the command into the one to run (e.g. one that enters a throttled cgroup
    first: :meth:`~analysis.measure.storage.blockdev.Device.command`); ``data_bytes`` (the
    uncompressed bytes the child holds) and ``threads`` size its memory cap
    (:func:`~analysis.measure.memcap.cap_for`)."""
    argv = [sys.executable, "-m", module, json.dumps(asdict(spec))]
    return _run(argv, path, what, timeout, wrap, memcap.cap_for(path, data_bytes, threads))


def call(function: str, kwargs: dict, path: str | Path, what: str, timeout: float,
         data_bytes: float | None = None) -> object:
    """``function`` (``module:name``) called with ``kwargs`` in a new interpreter: for opening
    a file nobody has verified, whose library may crash (a segfault in ROOT becomes an error
    naming ``path`` instead of killing the caller); under a memory cap as :func:`spawn`."""
    return _run([sys.executable, "-m", __name__, function, json.dumps(kwargs)], path, what,
                timeout, None, memcap.cap_for(path, data_bytes))["result"]


def hwm(pid: int | str = "self") -> int:
    """A process's peak resident memory so far (``VmHWM``, bytes); 0 once it has gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def wait(proc: subprocess.Popen, timeout: float) -> tuple[int, int] | None:
    """(exit status as ``returncode``, peak RSS bytes of the child and the children it
    waited for), or None when ``timeout`` passed first (the child is then killed).

    The kernel's peak for a child (``wait4``'s ``ru_maxrss``) includes the memory it had before
    it executed its program, which is its parent's (a forked copy, or the parent's own pages
    under vfork): a child of a parent that had grown to gigabytes would seem to have used them.
    So where ``ru_maxrss`` does not exceed the parent's own peak, the child's peak is the
    largest ``VmHWM`` of its program seen while waiting."""
    deadline = time.monotonic() + timeout
    inherited = hwm()
    seen = 0
    pause = 0.001
    while True:
        seen = max(seen, hwm(proc.pid))
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() > deadline:
            proc.kill()
            os.wait4(proc.pid, 0)
            proc.returncode = -signal.SIGKILL
            return None
        time.sleep(pause)
        pause = min(2 * pause, 0.05)
    proc.returncode = os.waitstatus_to_exitcode(status)
    peak = usage.ru_maxrss * 1024
    return proc.returncode, peak if peak > inherited else seen


def _run(cmd: list[str], path: str | Path, what: str, timeout: float,
         wrap: Callable[[list[str]], list[str]] | None, cap: int | None) -> dict:
    # written down (analysis.atomic): a run that finds its process dead removes what a kill
    # left here
    with scratch_dir(prefix=f"hepfmt-fresh-{os.getpid()}-") as tmp:
        out = Path(tmp) / "result.json"
        cmd = [*cmd, str(out)]
        if wrap is not None:
            cmd = wrap(cmd)
        with open(Path(tmp) / "stderr", "w+", errors="replace") as err:
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=err, env=memcap.child_env(cap))
            ended = wait(proc, timeout)
            err.seek(0)
            stderr = err.read()
        if ended is None:
            raise VerificationError(path, f"{what} timed out ({timeout} s)")
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


def start() -> None:
    """A child's first step: the memory cap, before it opens any file; ROOT's alpha notice off."""
    memcap.apply()
    warnings.filterwarnings("ignore", message=r"\s*This distribution of ROOT is in alpha stage")


def reporting(body: Callable[[], object]) -> int:
    """``body()``, and the child's exit status: 0, or 2 after one ``hepfmt:`` line on stderr
    (the parent turns it into its own line; all of the libraries' text with --verbose)."""
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
        print(f"hepfmt: {type(exc).__name__}: {brief(str(exc))}", file=sys.stderr)
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


if __name__ == "__main__":  # python -m analysis.measure.isolated MODULE:FUNCTION KWARGS OUT
    exit_with(_call_child(sys.argv[1:]))
