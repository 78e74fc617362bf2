"""The process's one connection to a Dask scheduler, shared by the distributed engines: a user's
session connects once, outside any timing, and every engine it runs uses that client."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from distributed import Client

_client: Client | None = None


def connect(address: str) -> Client:
    """Connect to the scheduler at ``address`` (``tcp://host:8786``), replacing any earlier
    connection: a test or a benchmark may move from one cluster to the next."""
    global _client
    from distributed import Client

    if _client is not None:
        _client.close()
    _client = Client(address, set_as_default=False)
    return _client


def client() -> Client:
    if _client is None:
        raise RuntimeError("no Dask cluster: call connect(address) first")
    return _client


def close() -> None:
    """Leave the scheduler, before its cluster is shut down (a client left connected logs the
    shutdown as an error)."""
    global _client
    if _client is not None:
        _client.close()
        _client = None
