"""One measurement per fresh Python interpreter.

Timings must not depend on what ran before them in the same process: library state, JIT caches,
allocator history, or another library's imports. So each measurement runs as
``python -m <module> SPEC_JSON OUT``: the parent passes a spec (a dataclass), the child runs one
function on it and writes the result to OUT; a child's failure reaches the parent as one line
naming the file.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from analysis.errors import VERBOSE, HepfmtError, InputError, VerificationError


def spawn(module: str, spec: object, path: str | Path, what: str, timeout: float,
          wrap: Callable[[list[str]], list[str]] | None = None) -> dict:
    """Run ``module``'s :func:`child` on ``spec`` in a new interpreter; return its result.
    ``wrap`` turns the command into the one to run (e.g. one that enters a throttled cgroup
    first: :meth:`~analysis.measure.storage.blockdev.Device.command`)."""
    argv = [sys.executable, "-m", module, json.dumps(asdict(spec))]
    return _run(argv, path, what, timeout, wrap)


def call(function: str, kwargs: dict, path: str | Path, what: str, timeout: float) -> object:
    """``function`` (``module:name``) called with ``kwargs`` in a new interpreter: for opening
    a file nobody has verified, whose library may crash (a segfault in ROOT becomes an error
    naming ``path`` instead of killing the caller)."""
    return _run([sys.executable, "-m", __name__, function, json.dumps(kwargs)], path, what,
                timeout)["result"]


def _run(cmd: list[str], path: str | Path, what: str, timeout: float,
         wrap: Callable[[list[str]], list[str]] | None = None) -> dict:
    # the parent's PID in the name: a run that finds it dead removes what a kill left here
    with tempfile.TemporaryDirectory(prefix=f"hepfmt-fresh-{os.getpid()}-") as tmp:
        out = Path(tmp) / "result.json"
        cmd = [*cmd, str(out)]
        if wrap is not None:
            cmd = wrap(cmd)
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            raise VerificationError(path, f"{what} timed out ({timeout} s)") from exc
        if proc.returncode < 0:
            raise InputError(path, f"{what} crashed ({signal.Signals(-proc.returncode).name}): "
                                   "the library could not handle this file")
        if proc.returncode != 0 or not out.exists():
            tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
            own = tail.removeprefix("hepfmt: ")
            if own != tail and own.startswith(f"{path}: "):  # the child named the file already
                raise VerificationError(path, own[len(f"{path}: "):])
            raise VerificationError(path, f"{what} failed: {tail}")
        return json.loads(out.read_text())


def child(argv: list[str], spec_type: type, body: Callable[[object], dict]) -> int:
    """The child's entry point: ``argv`` is ``[SPEC_JSON, OUT]``; exit status 2 on an error."""
    warnings.filterwarnings("ignore", message=r"\s*This distribution of ROOT is in alpha stage")
    spec = spec_type(**json.loads(argv[0]))
    try:
        result = body(spec)
    except HepfmtError as exc:
        print(f"hepfmt: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # a library's own error: the parent shows the last line
        if os.environ.get(VERBOSE):
            raise
        print(f"hepfmt: {type(exc).__name__}: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    Path(argv[1]).write_text(json.dumps(result))
    return 0


def _call_child(argv: list[str]) -> int:
    function, kwargs, out = argv
    module, name = function.split(":")
    return child([kwargs, out], dict, lambda kw: {
        "result": getattr(importlib.import_module(module), name)(**kw)})


if __name__ == "__main__":  # python -m analysis.measure.isolated MODULE:FUNCTION KWARGS OUT
    sys.exit(_call_child(sys.argv[1:]))
