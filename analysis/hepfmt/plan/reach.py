"""Whether a config's remote samples can be reached, asked once, at ``hepfmt check-config``.

A sample ``file:`` that is a URL (``root://``, ``http(s)://``) is opened by its import job,
hours into a run, when a closed port or a mistyped host fails it. ``check-config`` asks each
server for a TCP connection first, with a short time-out: a server that does not answer is a
warning naming the URL (an error under ``--strict``). The Snakefile never asks (a parse must
not wait on the network), and a connection says nothing of the file itself (its path, the
permission to read it): the import job finds those.
"""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

#: How long a server may take to accept a connection.
TIMEOUT_S = 3.0
#: The port of each scheme when a URL gives none.
PORTS = {"root": 1094, "xroot": 1094, "roots": 1094, "http": 80, "https": 443,
         "s3": 443, "gs": 443}


def problem(url: str, timeout: float = TIMEOUT_S) -> str | None:
    """Why ``url``'s server cannot be reached (no host, an unknown scheme's port, a name that
    does not resolve, a refused or unanswered connection), or None."""
    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port or PORTS.get(parts.scheme.lower())
    except ValueError as exc:  # a port that is no number, or out of range
        return f"{url!r} is no URL ({exc})"
    if parts.scheme.lower() == "file":
        return None  # a local file: checked as one
    if not host:
        return f"{url!r} names no host"
    if port is None:
        return f"{url!r}: no port known for {parts.scheme}:// (give one: host:port)"
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except OSError as exc:
        why = "no answer" if isinstance(exc, TimeoutError) else exc.strerror or str(exc)
        return (f"{url!r} cannot be reached: {host}:{port}: {why} (time-out {timeout:g} s); "
                "its import job would fail")


def unreachable(config: dict, timeout: float = TIMEOUT_S) -> list[tuple[str, str]]:
    """(key, why) of each sample URL of ``config`` whose server cannot be reached."""
    out = []
    for name, sample in config["samples"].items():
        url = sample.get("file", "")
        if "://" in url and (why := problem(url, timeout)):
            out.append((f"samples.{name}.file", why))
    return out
