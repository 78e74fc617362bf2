"""One measurement per fresh Python interpreter.

Timings must not depend on what ran before them in the same process: library state, JIT caches,
allocator history, or another library's imports. So each measurement runs as
``python -m <module> SPEC_JSON OUT``: the parent passes a spec (a dataclass), the child runs one
function on it and writes the result to OUT; a child's failure reaches the parent as one line
naming the file.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from analysis.errors import HepfmtError, VerificationError


def spawn(module: str, spec: object, path: str | Path, what: str, timeout: float) -> dict:
    """Run ``module``'s :func:`child` on ``spec`` in a new interpreter; return its result."""
    with tempfile.TemporaryDirectory(prefix="hepfmt-fresh-") as tmp:
        out = Path(tmp) / "result.json"
        cmd = [sys.executable, "-m", module, json.dumps(asdict(spec)), str(out)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            raise VerificationError(path, f"{what} timed out ({timeout} s)") from exc
        if proc.returncode != 0 or not out.exists():
            tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
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
    Path(argv[1]).write_text(json.dumps(result))
    return 0
