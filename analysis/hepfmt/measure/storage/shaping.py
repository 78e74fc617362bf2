"""Latency and bandwidth between a reader and a local server, by Toxiproxy.

This kernel has no ``netem`` qdisc, and ``tc`` on the shared loopback would slow every process
of the machine, so the network of a ``remote`` profile is a TCP proxy in user space: Toxiproxy
(Shopify, maintained, Go), whose ``latency`` toxic delays data in each direction and whose
``bandwidth`` toxic caps its rate. It is not packaged by Debian bookworm nor PyPI; it is built
from its Go module into the venv (see :data:`INSTALL`) and found on PATH or beside the venv's
python. Its latency is in whole milliseconds per direction, so a profile's round trip is split
into two whole-millisecond halves (1 ms: 0 up, 1 down; a request waits for its answer, so only
the sum matters), and a round trip that is not a whole number of milliseconds is refused as
:class:`Unavailable`, never run with a rounded figure. No maintained tool found offers finer
delays on loopback without netem (docs/storage.md).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

from hepfmt.measure.storage import Unavailable
from hepfmt.measure.storage.ledger import Ledger, start_time
from hepfmt.measure.storage.profiles import Profile
from hepfmt.measure.storage.servers import HOST, free_port, wait_for_port

BINARY = "toxiproxy-server"
INSTALL = ("GOBIN=$(mktemp -d) go install github.com/Shopify/toxiproxy/v2/cmd/server@v2.5.0 "
           "&& mv $GOBIN/server .venv/bin/toxiproxy-server")


def find_binary() -> str:
    here = Path(sys.executable).parent / BINARY
    found = shutil.which(BINARY) or (str(here) if here.exists() else None)
    if found is None:
        raise Unavailable(f"{BINARY} is not installed (no netem in this kernel, so latency needs "
                          f"a proxy): {INSTALL}")
    return found


def one_way_ms(profile: Profile) -> dict[str, int]:
    """The profile's round trip as whole milliseconds per direction (the reply's direction
    takes the odd one); :class:`Unavailable` if it is not a whole number of milliseconds."""
    rtt_ms = profile.latency_s * 1e3
    if abs(rtt_ms - round(rtt_ms)) > 1e-9:
        raise Unavailable(f"profile {profile.name} needs a {rtt_ms:g} ms round trip; "
                          "Toxiproxy's latency toxic has 1 ms resolution and this kernel has "
                          "no netem qdisc for finer delays")
    up = round(rtt_ms) // 2
    return {"upstream": up, "downstream": round(rtt_ms) - up}


def toxics(profile: Profile) -> list[dict]:
    """The toxics that make a connection look like ``profile``: its round trip split over the
    two directions (:func:`one_way_ms`), and the bandwidth cap on the server-to-client stream
    (KB/s, as Toxiproxy counts)."""
    if profile.kind != "remote":
        raise ValueError(f"profile {profile.name} is {profile.kind}, not remote")
    out = [{"name": f"latency_{s}", "type": "latency", "stream": s, "toxicity": 1.0,
            "attributes": {"latency": ms, "jitter": 0}}
           for s, ms in one_way_ms(profile).items() if ms]
    out.append({"name": "bandwidth", "type": "bandwidth", "stream": "downstream",
                "toxicity": 1.0, "attributes": {"rate": max(1, int(profile.bandwidth_bps / 1e3))}})
    return out


class Toxiproxy:
    """``with Toxiproxy() as tp: port = tp.shape(profile, upstream_port)``: connect to
    ``port`` instead of the server's and every byte pays the profile's latency and rate."""

    def __init__(self, ledger_root: Path | None = None) -> None:
        self.binary = find_binary()
        self._ledger_root = ledger_root

    def __enter__(self) -> Toxiproxy:
        self.ledger = Ledger(self._ledger_root)
        try:
            self.api_port = free_port()
            log = Path(tempfile.gettempdir()) / f"hepfmt-toxiproxy-{self.ledger.path.stem}.log"
            self.ledger.add("file", path=str(log))
            with open(log, "w") as out:  # the child keeps its own copy of the fd
                self.proc = subprocess.Popen(
                    [self.binary, "-host", HOST, "-port", str(self.api_port)],
                    stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                    start_new_session=True)
            self.ledger.add("process", pid=self.proc.pid, started=start_time(self.proc.pid))
            wait_for_port(self.api_port, lambda: self.proc.poll() is None)
        except BaseException:
            self.ledger.close()
            raise
        return self

    def _post(self, path: str, body: dict) -> dict:
        req = urllib.request.Request(f"http://{HOST}:{self.api_port}{path}",
                                     data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read() or b"{}")

    def shape(self, profile: Profile, upstream_port: int, name: str | None = None) -> int:
        """A proxy to ``127.0.0.1:upstream_port`` with ``profile``'s toxics; its port."""
        wanted = toxics(profile)  # refuses an unrepresentable profile before anything starts
        port = free_port()
        name = name or f"{profile.name}-{upstream_port}"
        self._post("/proxies", {"name": name, "listen": f"{HOST}:{port}",
                                "upstream": f"{HOST}:{upstream_port}", "enabled": True})
        for toxic in wanted:
            self._post(f"/proxies/{name}/toxics", toxic)
        return port

    def __exit__(self, *exc: object) -> None:
        errors = self.ledger.close()
        if errors:
            raise OSError("toxiproxy teardown failed: " + "; ".join(errors))
