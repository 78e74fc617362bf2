"""Where a number came from: library versions, machine, filesystem, config hash, date, commit.

Every measurement file and every table carries this block, so a figure copied out of context can
still be traced to the versions and machine that produced it.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

LIBRARIES = ("root", "pyarrow", "uproot", "awkward", "numpy", "pandas", "snakemake")


def library_versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for lib in LIBRARIES:
        try:
            out[lib] = metadata.version(lib)
        except metadata.PackageNotFoundError:
            out[lib] = "not installed"
    out["ROOT"] = _root_version()
    return out


def _root_version() -> str:
    """ROOT's own version (the wheel's package version is not ROOT's), without importing it."""
    try:
        dist = metadata.distribution("root")
        for f in dist.files or []:
            if f.name == "RVersion.hxx":
                parts = {}
                for line in Path(dist.locate_file(f)).read_text().splitlines():
                    bits = line.split()
                    if len(bits) >= 3 and bits[1].startswith("ROOT_VERSION_") and bits[2].isdigit():
                        parts[bits[1]] = int(bits[2])
                return "{}.{:02d}.{:02d}".format(*(parts[f"ROOT_VERSION_{k}"]
                                                   for k in ("MAJOR", "MINOR", "PATCH")))
    except (metadata.PackageNotFoundError, OSError, KeyError):
        pass
    return "unknown"


def filesystem(path: str | Path) -> dict[str, str]:
    """Filesystem type and mount point holding ``path`` (longest matching mount in /proc)."""
    target = os.path.realpath(path)
    best = ("", "unknown", "unknown")
    try:
        with open("/proc/mounts") as f:
            for line in f:
                dev, mnt, fstype, *_ = line.split()
                if (target == mnt or target.startswith(mnt.rstrip("/") + "/")) and \
                        len(mnt) >= len(best[0]):
                    best = (mnt, fstype, dev)
    except OSError:
        pass
    return {"mount": best[0], "type": best[1], "device": best[2]}


def machine() -> dict[str, object]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = 0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem = int(line.split()[1]) * 1024
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_bytes": mem,
            "kernel": platform.release(), "hostname": platform.node()}


def config_hash(config: dict) -> str:
    return hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:16]


def git_commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, timeout=5, cwd=Path(__file__).parent)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=5,
                               cwd=Path(__file__).parent).stdout.strip()
        return out.stdout.strip() + ("-dirty" if dirty else "") if out.returncode == 0 else "none"
    except (OSError, subprocess.SubprocessError):
        return "none"


def collect(config: dict | None = None, data_path: str | Path = ".") -> dict:
    doc: dict[str, object] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "versions": library_versions(),
        "machine": machine(),
        "filesystem": filesystem(data_path),
        "hepfmt_commit": git_commit(),
    }
    if config is not None:
        doc["config_hash"] = config_hash(config)
    return doc
