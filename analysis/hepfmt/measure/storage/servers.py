"""A real XRootD server on 127.0.0.1, serving files over root:// and (XrdHttp) HTTP ranges.

Debian's ``xrootd-server`` is what sites run, so a read through it exercises the readers' real
remote paths: ROOT's TNetXNG client, uproot through fsspec-xrootd, pyarrow through fsspec's HTTP
file. The server is started on free ports, waited for until both ports accept connections, and
stopped by its pid (recorded in the ledger first). xrootd refuses to run as root, so as root it
drops to ``nobody`` (``-R``) and serves a world-readable export directory of its own.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from hepfmt.measure.storage import Unavailable
from hepfmt.measure.storage.ledger import Ledger, start_time

HOST = "127.0.0.1"
RUN_AS = "nobody"
HTTP_PLUGIN = "libXrdHttp-5.so"
LIB_DIRS = ("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/lib")


def free_port() -> int:
    """A port the kernel just had free on 127.0.0.1 (the server binds it moments later)."""
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def wait_for_port(port: int, alive, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not alive():
            raise OSError(f"server exited before listening on {HOST}:{port}")
        try:
            with socket.create_connection((HOST, port), timeout=1):
                return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"nothing listens on {HOST}:{port} after {timeout_s:.0f} s")


def _has_http_plugin() -> bool:
    return any((Path(d) / HTTP_PLUGIN).exists() for d in LIB_DIRS)


class XRootDServer:
    """``with XRootDServer() as srv: url = srv.root_url(srv.publish(path))``."""

    def __init__(self, http: bool = True, ledger_root: Path | None = None,
                 trace: bool = False) -> None:
        """``trace``: log every read request (offset and length) for
        :func:`~.counters.xrootd_served`: what the server saw clients ask for."""
        if shutil.which("xrootd") is None:
            raise Unavailable("xrootd is not installed (Debian package xrootd-server)")
        if http and not _has_http_plugin():
            raise Unavailable(f"XRootD's HTTP plugin {HTTP_PLUGIN} is missing (Debian package "
                              "xrootd-server-plugins)")
        self.http, self.trace = http, trace
        self._ledger_root = ledger_root
        self.port = self.http_port = 0
        self.pid: int | None = None

    def __enter__(self) -> XRootDServer:
        self.ledger = Ledger(self._ledger_root)
        try:
            self._start()
        except BaseException:
            self.ledger.close()
            raise
        return self

    def _start(self) -> None:
        base = Path(tempfile.gettempdir()) / f"hepfmt-xrootd-{self.ledger.path.stem}"
        self.ledger.add("dir", path=str(base))
        self.export, admin = base / "export", base / "admin"
        for d in (base, self.export, admin):
            d.mkdir(mode=0o755)
        if os.geteuid() == 0:  # xrootd: "Security reasons prohibit running as superuser"
            shutil.chown(admin, RUN_AS)
        self.port = free_port()
        lines = [f"xrd.port {self.port}", "all.export /", f"oss.localroot {self.export}",
                 f"all.adminpath {admin}", f"all.pidpath {admin}"]
        if self.trace:
            lines.append("xrootd.trace fs fsio")
        if self.http:
            self.http_port = free_port()
            lines.append(f"xrd.protocol XrdHttp:{self.http_port} libXrdHttp.so")
        config = base / "xrootd.cfg"
        config.write_text("\n".join(lines) + "\n")
        self.log = admin / "xrootd.log"
        argv = ["xrootd", "-c", str(config), "-l", str(self.log)]
        if os.geteuid() == 0:
            argv[1:1] = ["-R", RUN_AS]
        # the process is recorded the moment it exists: its pid is only known after fork
        with open(base / "stderr", "w") as err:  # the child keeps its own copy of the fd
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=err, start_new_session=True)
        self.proc, self.pid = proc, proc.pid
        self.ledger.add("process", pid=proc.pid, started=start_time(proc.pid))
        try:
            for port in (self.port, self.http_port) if self.http else (self.port,):
                wait_for_port(port, lambda: proc.poll() is None)
        except (OSError, TimeoutError) as exc:
            raise OSError(f"xrootd did not start: {exc}\n{self.log_tail()}") from exc

    def log_tail(self, n: int = 20) -> str:
        for path in (self.log, self.log.parent.parent / "stderr"):
            if path.exists() and path.stat().st_size:
                return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
        return ""

    def publish(self, path: str | Path, name: str | None = None) -> str:
        """Make a file servable (a hard link where possible, else a copy); its served name."""
        name = name or Path(path).name
        out = self.export / name
        try:
            os.link(path, out)
        except OSError:
            shutil.copyfile(path, out)
        os.chmod(out, 0o644)
        return name

    def root_url(self, name: str, port: int | None = None) -> str:
        return f"root://{HOST}:{port or self.port}//{name}"

    def http_url(self, name: str, port: int | None = None) -> str:
        if not self.http:
            raise ValueError("this server was started without its HTTP interface")
        return f"http://{HOST}:{port or self.http_port}/{name}"

    def __exit__(self, *exc: object) -> None:
        self.proc.poll()
        errors = self.ledger.close()
        if errors:
            raise OSError("xrootd teardown failed: " + "; ".join(errors))

