"""Storage that behaves like storage: emulated block devices and local remote servers.

This VM's disk is cached by its host, so a read whose pages were evicted from the guest's page
cache still arrives at memory speed and "cold" equals "warm". The modules here give a read a
bottleneck it cannot skip: a loop device throttled by a cgroup (:mod:`.blockdev`), or an XRootD
server on localhost behind a latency/bandwidth proxy (:mod:`.servers`, :mod:`.shaping`). Every
resource they create is recorded by id before use (:mod:`.ledger`) and torn down by that id,
also after an error or after the owning process was killed.
"""

from __future__ import annotations


class Unavailable(RuntimeError):
    """A storage profile cannot be emulated here; the message names what is missing, so the
    profile is reported as skipped, never as measured."""
