"""An emulated block device: a loop device with a filesystem, read through a cgroup throttle.

The loop device is the one block device whose requests this VM does not hand to a host cache
unthrottled: the cgroup's ``read_bps``/``read_iops`` cap applies to every request a process in
that cgroup submits to it. A file copied onto its filesystem and evicted from the page cache
(:func:`hepfmt.measure.pagecache.evict`) must therefore come through the cap when read. The
loop device uses direct I/O on its image so the image's own pages are not cached a second time.

Every resource is recorded in a :class:`~.ledger.Ledger` before it is made and undone by its id
on exit, on error, or (after a kill) by :func:`~.ledger.reap`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from hepfmt.measure.storage import Unavailable
from hepfmt.measure.storage.counters import IOCount, block_device
from hepfmt.measure.storage.ledger import Ledger
from hepfmt.measure.storage.profiles import Profile

CGROUP_V1 = Path("/sys/fs/cgroup/blkio")
CGROUP_V2 = Path("/sys/fs/cgroup")
TOOLS = {"losetup": "util-linux", "mkfs.ext4": "e2fsprogs", "mount": "mount",
         "umount": "mount"}


def cgroup_version() -> int:
    """1 or 2: which cgroup interface can throttle a block device here."""
    if (CGROUP_V1 / "blkio.throttle.read_bps_device").exists():
        return 1
    controllers = CGROUP_V2 / "cgroup.controllers"
    if controllers.exists() and "io" in controllers.read_text().split():
        return 2
    raise Unavailable("no cgroup can throttle a block device here: neither cgroup v1 "
                      f"{CGROUP_V1}/blkio.throttle.read_bps_device nor a cgroup v2 'io' "
                      f"controller in {controllers}")


def check_support() -> int:
    """Raise :class:`Unavailable` naming what is missing; else the cgroup version to use."""
    if os.geteuid() != 0:
        raise Unavailable("emulated block devices need root (loop devices, mounts, cgroups)")
    missing = [f"{tool} (Debian package {pkg})" for tool, pkg in TOOLS.items()
               if shutil.which(tool) is None]
    if missing:
        raise Unavailable(f"missing tools: {', '.join(missing)}")
    if not Path("/dev/loop-control").exists():
        raise Unavailable("the kernel offers no loop devices (/dev/loop-control is missing)")
    return cgroup_version()


def _run(argv: Sequence[str]) -> str:
    done = subprocess.run(list(argv), capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise OSError(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout


@dataclass(frozen=True)
class Device:
    """A mounted, throttled loop device; what a measurement needs to use it."""

    profile: Profile
    loop: str  # /dev/loopN
    mountpoint: Path
    cgroup: Path

    @property
    def procs(self) -> Path:
        return self.cgroup / "cgroup.procs"

    def put(self, path: str | Path, name: str | None = None) -> Path:
        """Copy a file onto the device and write it back, so a read must come from it."""
        out = self.mountpoint / (name or Path(path).name)
        shutil.copyfile(path, out)
        fd = os.open(out, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        return out

    def command(self, argv: Sequence[str]) -> list[str]:
        """``argv`` wrapped so that it runs inside the throttled cgroup: the shell moves
        itself into the cgroup, then execs the command (so the pid stays the same, and
        every child it forks is throttled too)."""
        return ["sh", "-c", 'echo $$ > "$0" && exec "$@"', str(self.procs), *argv]

    def run(self, argv: Sequence[str], **kwargs) -> subprocess.CompletedProcess:
        """Run ``argv`` inside the cgroup (``subprocess.run`` keyword arguments pass on)."""
        return subprocess.run(self.command(argv), **kwargs)

    def reads(self) -> IOCount:
        """Requests completed and bytes read by the loop device so far (all processes)."""
        return block_device(self.loop)


def device_number(dev: str | Path) -> str:
    """``MAJOR:MINOR`` of a block device node, as both cgroup interfaces name a device."""
    rdev = os.stat(dev).st_rdev
    return f"{os.major(rdev)}:{os.minor(rdev)}"


def throttle_lines(version: int, majmin: str, profile: Profile) -> dict[str, str]:
    """What is written to which file of a cgroup to cap reads from device ``majmin`` at the
    profile's bandwidth and IOPS: v1 has a file per limit, v2 one ``io.max`` line with keys
    (only the read limits; writes stay unlimited)."""
    bps = int(profile.bandwidth_bps)
    if version == 1:
        lines = {"blkio.throttle.read_bps_device": f"{majmin} {bps}\n"}
        if profile.iops:
            lines["blkio.throttle.read_iops_device"] = f"{majmin} {int(profile.iops)}\n"
        return lines
    iops = f" riops={int(profile.iops)}" if profile.iops else ""
    return {"io.max": f"{majmin} rbps={bps}{iops}\n"}


def _throttle(version: int, cgroup: Path, dev: str, profile: Profile) -> None:
    for name, line in throttle_lines(version, device_number(dev), profile).items():
        (cgroup / name).write_text(line)


def _cgroup_parent(version: int) -> Path:
    if version == 1:
        return CGROUP_V1
    subtree = CGROUP_V2 / "cgroup.subtree_control"
    if "io" not in subtree.read_text().split():
        raise Unavailable(f"the cgroup v2 'io' controller is not enabled for children of "
                          f"{CGROUP_V2} (enable it: echo +io > {subtree})")
    return CGROUP_V2


@contextmanager
def emulated(profile: Profile, size_bytes: int, workdir: str | Path | None = None,
             ledger_root: Path | None = None) -> Iterator[Device]:
    """A throttled ext4 filesystem of ``size_bytes`` on a loop device for ``profile``.

    The image is a sparse file in ``workdir`` (default: the temporary directory); it, the loop
    device, the mount and the cgroup are removed on exit, whatever happened inside.
    """
    if profile.kind != "block":
        raise ValueError(f"profile {profile.name} is {profile.kind}, not a block device")
    version = check_support()
    parent = _cgroup_parent(version)
    ledger = Ledger(ledger_root)
    try:
        tag = ledger.path.stem
        image = Path(workdir or tempfile.gettempdir()) / f"hepfmt-{tag}.img"
        mountpoint = Path(tempfile.gettempdir()) / f"hepfmt-{tag}.mnt"
        cgroup = parent / f"hepfmt-{tag}"
        ledger.add("file", path=str(image))
        with open(image, "wb") as f:
            f.truncate(max(size_bytes, 16 << 20))
        _run(["mkfs.ext4", "-q", "-F", "-m", "0", str(image)])
        ledger.add("loop", image=str(image))
        loop = _run(["losetup", "--find", "--show", "--direct-io=on", str(image)]).strip()
        ledger.add("dir", path=str(mountpoint))
        mountpoint.mkdir()
        ledger.add("mount", path=str(mountpoint))
        _run(["mount", "-o", "noatime", loop, str(mountpoint)])
        ledger.add("cgroup", path=str(cgroup))
        cgroup.mkdir()
        _throttle(version, cgroup, loop, profile)
        yield Device(profile, loop, mountpoint, cgroup)
    finally:
        errors = ledger.close()
        if errors:
            raise OSError("storage teardown left resources: " + "; ".join(errors))
