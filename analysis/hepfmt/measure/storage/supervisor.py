"""A process that outlives a ledger's owner and releases the ledger when the owner dies.

A ledger (:mod:`.ledger`) makes a SIGKILLed owner's leftovers undoable, but only by whoever
calls :func:`~.ledger.reap`: until the next ``storage`` job, a killed one's loop device stays
attached, its filesystem mounted, its cgroup and image in place, its servers running. So each
ledger starts one of these at its creation: in a session of its own (a kill of the owner's
process group does not reach it), with no terminal and no file of the owner's held open, it
waits on a pidfd of the owner (polling the owner's start time where pidfds are missing) and
releases the ledger the moment the owner is gone; it exits without doing anything once the
owner closed the ledger itself (the file is gone). It undoes only what the ledger names, under
the ledger's lock, exactly as :func:`~.ledger.reap` would.
"""

from __future__ import annotations

import contextlib
import os
import select
import sys
from pathlib import Path

from hepfmt.measure.storage import ledger

#: How often the ledger file's existence (and, without a pidfd, the owner) is looked at.
POLL_S = 0.5


def _owner_fd(pid: int) -> int | None:
    """A pidfd of ``pid`` (readable once it exits), or None where the kernel has none."""
    with contextlib.suppress(AttributeError, OSError):
        return os.pidfd_open(pid)
    return None


def watch(path: Path, pid: int, started: int | None, poll_s: float = POLL_S) -> list[str]:
    """Wait until the owner ``pid`` (started at ``started``) is gone, then release the ledger
    at ``path``; return at once when the ledger is gone (the owner closed it). The errors of
    what could not be undone (the ledger is kept for a later reap then)."""
    fd = _owner_fd(pid)
    try:
        # after the pidfd is open: a pid that was reused meanwhile fails the start time
        while ledger.alive(pid, started):
            if not path.exists():
                return []
            if select.select([] if fd is None else [fd], [], [], poll_s)[0]:
                break  # the owner exited (a zombie not yet collected holds nothing either)
    finally:
        if fd is not None:
            os.close(fd)
    return ledger.release(path)


def main(argv: list[str]) -> int:
    """``python -m hepfmt.measure.storage.supervisor LEDGER PID STARTED``."""
    path, pid, started = Path(argv[0]), int(argv[1]), argv[2]
    # what could not be undone stays in the ledger: the next reap tries again and says so
    return 1 if watch(path, pid, None if started == "none" else int(started)) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
