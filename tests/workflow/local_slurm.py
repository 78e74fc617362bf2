"""A real single-node SLURM cluster on localhost, for testing the SLURM profile for real.

What it takes to make one on a machine without systemd or cgroups was worked out by hand (see
``shared/notes/slurm-local.md``); this module is that recipe, so that each pitfall is handled in
one place:

* the config must be ``/etc/slurm/slurm.conf`` (the job step clears ``SLURM_CONF`` before its
  ``srun``), so an existing config that this module did not write is never touched: the cluster
  is refused instead;
* no cgroups: process tracking by ``/proc``, no task plugin, no accounting (hence no ``sacct``:
  the profile asks the executor to use ``squeue``);
* every daemon started here is stopped by the PID it wrote, never by name, whatever happens;
  a munge daemon that was already running is left alone.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

CONF = Path("/etc/slurm/slurm.conf")
#: One cluster at a time on a machine (the config path is fixed): a second test run waits.
LOCK = Path("/tmp/hepfmt-local-slurm.lock")
LOCK_WAIT_S = 900
MARKER = "# written by hepfmt tests/workflow/local_slurm.py"
PACKAGES = ("slurmctld", "slurmd", "slurm-client", "munge")
#: RealMemory of the node: jobs asking more than this stay pending for ever.
NODE_MEMORY_MB = 4000
#: The longest a daemon may take to start, write its PID file or register: seconds on an idle
#: machine, allowed many times that on a loaded one (the SLURM test is skipped if exceeded).
STARTUP_S = 120.0


class SlurmUnavailable(RuntimeError):
    """SLURM cannot run here (not installed, not root, a foreign config): a reason to skip."""


def tool(name: str) -> str:
    """Absolute path of a SLURM or munge program (daemons live in /usr/sbin, maybe off PATH)."""
    found = shutil.which(name, path=os.pathsep.join((os.environ.get("PATH", ""), "/usr/sbin",
                                                      "/sbin")))
    if not found:
        raise SlurmUnavailable(f"{name} is not installed (Debian packages {' '.join(PACKAGES)})")
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _stop_pid(pid: int, grace_s: float = 10.0) -> None:
    """SIGTERM, wait, then SIGKILL: a daemon stuck in shutdown must not outlive the test."""
    if not _alive(pid):
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        if not _alive(pid):
            return
        time.sleep(0.2)
    if _alive(pid):
        os.kill(pid, signal.SIGKILL)


def _read_pid(path: Path, timeout_s: float = STARTUP_S) -> int:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            return int(path.read_text().strip())
        except (OSError, ValueError):
            time.sleep(0.1)
    raise SlurmUnavailable(f"{path.name} never appeared: the daemon did not start")


def slurm_conf(state: Path, cpus: int, ctld_port: int, slurmd_port: int) -> str:
    """slurm.conf of one node, localhost, with everything that needs cgroups or a database off."""
    return "\n".join([
        MARKER,
        "ClusterName=hepfmt-test",
        "SlurmctldHost=localhost",
        f"SlurmctldPort={ctld_port}",
        f"SlurmdPort={slurmd_port}",
        "SlurmUser=root",
        "SlurmdUser=root",
        "AuthType=auth/munge",
        f"StateSaveLocation={state}/ctld",
        f"SlurmdSpoolDir={state}/slurmd",
        f"SlurmctldPidFile={state}/slurmctld.pid",
        f"SlurmdPidFile={state}/slurmd.pid",
        f"SlurmctldLogFile={state}/slurmctld.log",
        f"SlurmdLogFile={state}/slurmd.log",
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "JobAcctGatherType=jobacct_gather/none",
        "AccountingStorageType=accounting_storage/none",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core_Memory",
        "SchedulerType=sched/backfill",
        "ReturnToService=2",
        "MinJobAge=600",
        "MpiDefault=none",
        f"NodeName=localhost NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={NODE_MEMORY_MB} "
        "State=UNKNOWN",
        "PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP",
        "",
    ])


class LocalSlurm:
    """Start with :meth:`start`, always :meth:`stop` (a fixture finalizer does)."""

    def __init__(self, state: Path) -> None:
        self.state = state
        self.cpus = os.cpu_count() or 1
        self._pids: list[int] = []  # in the order to stop them
        self._wrote_conf = False
        self._lock: int | None = None

    def _acquire(self) -> None:
        self._lock = os.open(LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + LOCK_WAIT_S
        while True:
            try:
                fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise SlurmUnavailable(f"another test run held {LOCK} for "
                                           f"{LOCK_WAIT_S} s") from None
                time.sleep(1)

    def start(self) -> None:
        for name in ("slurmctld", "slurmd", "sbatch", "squeue", "scontrol", "munged", "runuser"):
            tool(name)
        if os.geteuid() != 0:
            raise SlurmUnavailable("starting slurmd and munged needs root")
        self._acquire()
        if CONF.exists() and MARKER not in CONF.read_text():
            raise SlurmUnavailable(f"{CONF} exists and was not written by hepfmt: not touching it")
        for sub in ("ctld", "slurmd"):
            (self.state / sub).mkdir(parents=True, exist_ok=True)
        self._start_munge()
        CONF.parent.mkdir(parents=True, exist_ok=True)
        CONF.write_text(slurm_conf(self.state, self.cpus, _free_port(), _free_port()))
        self._wrote_conf = True
        self._daemon([tool("slurmctld"), "-f", str(CONF)], self.state / "slurmctld.pid")
        self._daemon([tool("slurmd"), "-f", str(CONF), "-N", "localhost"],
                     self.state / "slurmd.pid")
        self._wait_idle()

    def _start_munge(self) -> None:
        if subprocess.run([tool("munge"), "-n"], capture_output=True).returncode == 0:
            return  # a munge daemon is already serving: use it, leave it running
        run = Path("/run/munge")
        run.mkdir(parents=True, exist_ok=True)
        shutil.chown(run, "munge", "munge")
        pidfile = run / "munged.pid"  # munged runs as munge: it can write only there
        pidfile.unlink(missing_ok=True)
        subprocess.run([tool("runuser"), "-u", "munge", "--", tool("munged")], check=True,
                       capture_output=True, timeout=STARTUP_S)
        self._pids.insert(0, _read_pid(pidfile))  # stopped last
        deadline = time.monotonic() + STARTUP_S
        while subprocess.run([tool("munge"), "-n"], capture_output=True).returncode != 0:
            if time.monotonic() > deadline:
                raise SlurmUnavailable("munged started but `munge -n` fails")
            time.sleep(0.2)

    def _daemon(self, cmd: list[str], pidfile: Path) -> None:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=STARTUP_S)
        if proc.returncode != 0:
            raise SlurmUnavailable(f"{Path(cmd[0]).name} failed: {proc.stderr.strip()[-500:]}")
        self._pids.insert(0, _read_pid(pidfile))  # stopped before the ones started earlier

    def _wait_idle(self, timeout_s: float = STARTUP_S) -> None:
        deadline = time.monotonic() + timeout_s
        state = ""
        while time.monotonic() < deadline:
            state = subprocess.run([tool("sinfo"), "-h", "-o", "%T"], capture_output=True,
                                   text=True).stdout.strip()
            if state == "idle":
                return
            time.sleep(0.5)
        raise SlurmUnavailable(f"the node never became idle (sinfo says {state!r}); "
                               f"logs in {self.state}")

    def job(self, job_id: str) -> dict[str, str]:
        """``scontrol show job`` as a dict (finished jobs stay visible for MinJobAge)."""
        out = subprocess.run([tool("scontrol"), "show", "job", "-o", job_id], capture_output=True,
                             text=True, timeout=30).stdout
        return dict(f.split("=", 1) for f in out.split() if "=" in f)

    def _cancel_jobs(self) -> None:
        """Cancel the jobs still queued or running (a test that failed half-way): slurmd's end
        does not end them. They are this private cluster's jobs, submitted by the test."""
        try:
            ids = subprocess.run([tool("squeue"), "-h", "-o", "%i"], capture_output=True,
                                 text=True, timeout=30).stdout.split()
            if ids:
                subprocess.run([tool("scancel"), *ids], capture_output=True, timeout=30)
                deadline = time.monotonic() + 15
                while time.monotonic() < deadline and subprocess.run(
                        [tool("squeue"), "-h", "-t", "running,completing", "-o", "%i"],
                        capture_output=True, text=True, timeout=30).stdout.strip():
                    time.sleep(0.5)
        except (OSError, subprocess.SubprocessError, SlurmUnavailable):
            pass  # the daemons are stopped next, whatever happened here

    def stop(self) -> None:
        """Cancel leftover jobs, then stop what was started here by PID (slurmd, slurmctld,
        then munged)."""
        if self._wrote_conf and len(self._pids) >= 2:
            self._cancel_jobs()
        for pid in self._pids:
            _stop_pid(pid)
        self._pids.clear()
        if self._wrote_conf:
            CONF.unlink(missing_ok=True)
            self._wrote_conf = False
        if self._lock is not None:
            os.close(self._lock)  # releases the flock
            self._lock = None

    def logs(self) -> str:
        """The daemons' logs, for a failure message."""
        return "\n".join(p.read_text()[-2000:] for p in sorted(self.state.glob("*.log")))
