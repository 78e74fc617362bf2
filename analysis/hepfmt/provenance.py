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
from collections.abc import Iterable
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

#: The distributions always named, whether or not the package's metadata can be read.
LIBRARIES = ("root", "pyarrow", "uproot", "awkward", "numpy", "pandas", "snakemake")


def dependencies() -> tuple[str, ...]:
    """Every direct dependency pyproject.toml pins (the one home of versions): every library
    that writes, reads or times a number (polars, DuckDB, h5py, Lance, Vortex, ...) is named by
    its version without a second list to keep. :data:`LIBRARIES` when the package is not
    installed (a checkout on PYTHONPATH)."""
    try:
        required = metadata.requires("hepfmt") or []
    except metadata.PackageNotFoundError:
        return LIBRARIES
    names = [r.split(";")[0].split("[")[0].split("=")[0].split("<")[0].split(">")[0].strip()
             for r in required if "extra ==" not in r]
    return tuple(dict.fromkeys([*LIBRARIES, *(n.lower() for n in names if n)]))


def library_versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for lib in dependencies():
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


#: Filesystem types by kind. Only on a local disk does dropping this machine's page cache make
#: the next read come from the device: a network or parallel filesystem (NFS, Lustre, GPFS,
#: CVMFS and other FUSE mounts) also caches on its servers (or in a FUSE daemon), where no client
#: can evict or inspect it, and tmpfs is memory. Cold reads there can never be verified.
FS_KINDS = {
    "lustre": "lustre", "gpfs": "gpfs", "nfs": "nfs", "nfs4": "nfs", "cvmfs2": "cvmfs",
    "tmpfs": "tmpfs", "ramfs": "tmpfs", "devtmpfs": "tmpfs",
    "ext2": "local", "ext3": "local", "ext4": "local", "xfs": "local", "btrfs": "local",
    "zfs": "local", "f2fs": "local", "overlay": "local",
}
_NETWORK_TYPES = ("cifs", "smb3", "smbfs", "ceph", "beegfs", "9p", "virtiofs", "afs", "panfs",
                  "glusterfs", "wekafs")


def fs_kind(fstype: str, device: str = "", mount: str = "") -> str:
    """lustre, gpfs, nfs, cvmfs, fuse, network, tmpfs, local or unknown, from a mount entry."""
    if fstype.startswith("fuse"):
        # CVMFS mounts as fuse with device cvmfs2, under /cvmfs; EOS, sshfs, ... are other FUSE
        return "cvmfs" if device == "cvmfs2" or mount.startswith("/cvmfs") else "fuse"
    if fstype in FS_KINDS:
        return FS_KINDS[fstype]
    if fstype in _NETWORK_TYPES:
        return "network"
    return "unknown"


def filesystem(path: str | Path) -> dict[str, object]:
    """Mount holding ``path`` (the longest matching mount in /proc), its type and kind, and
    whether a cold read can be verified on it (see ``FS_KINDS``)."""
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
    kind = fs_kind(best[1], best[2], best[0])
    return {"mount": best[0], "type": best[1], "device": best[2], "kind": kind,
            "cold_verifiable": kind == "local"}


def batch_job() -> dict[str, str]:
    """The batch job this process runs in, if any: ties a figure to the job (and node) that
    made it, e.g. to check that a measurement had its node to itself."""
    env = os.environ
    if "SLURM_JOB_ID" in env:
        return {"system": "slurm", "job_id": env["SLURM_JOB_ID"],
                "node": env.get("SLURMD_NODENAME", platform.node()),
                "cpus_on_node": env.get("SLURM_CPUS_ON_NODE", "")}
    if "_CONDOR_JOB_AD" in env or "_CONDOR_SCRATCH_DIR" in env:
        ad = _condor_job_ad(env.get("_CONDOR_JOB_AD", ""))
        return {"system": "htcondor", "job_id": ad.get("GlobalJobId", ad.get("ClusterId", "")),
                "node": platform.node(), "cpus": ad.get("RequestCpus", "")}
    return {"system": "none"}


def batch_summary(jobs: Iterable[dict]) -> dict[str, list[str]]:
    """The batch systems and job ids behind a set of results (a table's provenance)."""
    jobs = list(jobs)
    return {"systems": sorted({j.get("system", "none") for j in jobs}),
            "job_ids": sorted({j["job_id"] for j in jobs if j.get("job_id")},
                              key=lambda j: (len(j), j))}


def describe_batch(summary: dict) -> str:
    """One provenance line: where the results were made."""
    jobs = summary.get("job_ids", [])
    systems = [s for s in summary.get("systems", []) if s != "none"]
    if not systems:
        return "ran on: this machine, no batch system"
    shown = ", ".join(jobs[:10]) + (f", … ({len(jobs)} jobs)" if len(jobs) > 10 else "")
    return f"ran in batch jobs: {' + '.join(systems)} {shown}"


def describe_filesystem(fs: dict) -> str:
    """One provenance line: the data's filesystem, and whether cold figures can hold there."""
    line = (f"data filesystem: {fs.get('kind', '?')} ({fs.get('type', '?')}) at "
            f"{fs.get('mount', '?')}")
    if not fs.get("cold_verifiable", True):
        line += "; cold reads cannot be verified there: all flagged †"
    return line


def _condor_job_ad(path: str) -> dict[str, str]:
    out = {}
    try:
        for line in Path(path).read_text().splitlines():
            key, sep, value = line.partition(" = ")
            if sep:
                out[key.strip()] = value.strip().strip('"')
    except OSError:
        pass
    return out


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


def cpu_slug(cpu: str | None = None) -> str:
    """A CPU model as a directory name (``Intel(R) Xeon(R) Processor`` -> ``intel-xeon``): a
    read speed is a fact about a machine, so ``results/reference/`` keeps one run per model."""
    import re

    text = (cpu if cpu is not None else str(machine()["cpu"])).lower()
    text = re.sub(r"\((r|tm)\)|\b(processor|cpu|core\(tm\))\b|@.*$", " ", text)
    return "-".join(re.findall(r"[a-z0-9]+", text)) or "unknown"


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


def stamp(command: str) -> str:
    """The first line of a committed benchmark output: the command that made it, when, at
    which commit, on which CPU (a number a document includes says where it comes from)."""
    return (f"# $ {command}; {datetime.now(UTC):%Y-%m-%dT%H:%M:%SZ}; commit {git_commit()}; "
            f"{machine()['cpu']}")


def collect(config: dict | None = None, data_path: str | Path = ".") -> dict:
    doc: dict[str, object] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "versions": library_versions(),
        "machine": machine(),
        "filesystem": filesystem(data_path),
        "batch": batch_job(),
        "hepfmt_commit": git_commit(),
    }
    if config is not None:
        doc["config_hash"] = config_hash(config)
    return doc
