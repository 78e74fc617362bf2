"""Build the optional Rust helper (``tools/parquet-footer``), or say why it is not there.

The arrow-rs row of the metadata study is the "fastest known decoder" reference, not a result
the study depends on: a machine without ``cargo``, or offline without the crates in cargo's
cache, still runs the study. So the build never fails the workflow; it writes a small record
saying whether the binary exists (and where), which the timing jobs read.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from hepfmt import records
from hepfmt.atomic import write_json
from hepfmt.metastudy.decode import RUST_HELPER, rust_helper_version

BINARY = RUST_HELPER / "target" / "release" / "parquet-footer"


def build(record: str | Path, timeout: float = 1800.0) -> dict:
    """``cargo build --release --locked`` (the committed Cargo.lock pins every crate)."""
    cargo = shutil.which("cargo")
    if cargo is None:
        doc = {"available": False, "reason": "cargo is not on PATH"}
    else:
        cmd = [cargo, "build", "--release", "--locked", "--quiet", "--manifest-path",
               str(RUST_HELPER / "Cargo.toml")]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
            ok, why = proc.returncode == 0, (proc.stderr.strip().splitlines() or [""])[-1]
        except (OSError, subprocess.TimeoutExpired) as exc:
            ok, why = False, str(exc)
        doc = ({"available": True, "binary": str(BINARY), "parquet_crate": rust_helper_version()}
               if ok and BINARY.exists() else {"available": False,
                                               "reason": f"cargo build failed: {why}"})
    write_json(record, doc)
    return doc


def binary_from(record: str | Path | None) -> str | None:
    """The helper binary a build record names, if it was built."""
    if record is None:
        return None

    doc = records.load(record, ("available",), "helper build record")
    return doc["binary"] if doc.get("available") and Path(doc["binary"]).exists() else None
