"""pyarrow's memory pool as a reader knob: one reader name per pool (``pyarrow-system``).

Which allocator Arrow takes its buffers from moves a read's kernel time by seconds (issue 40: a
first all-branch read of 200000 NanoAOD events spent 5.3 s of 8.2 s in the kernel with the
default pool, 0.8 s with the system one), so a ratio must say which pool its Parquet side used.
The pool is chosen in the reader's ``prepare``, before the read allocates anything, and what the
process then really allocates from (``default_memory_pool().backend_name``) is what the read's
provenance records. A pool the installed pyarrow was built without is refused by the reader's
name, never replaced by another.
"""

from __future__ import annotations

from hepfmt.errors import ConfigError

#: The pools a reader name may ask for, besides Arrow's default (no suffix). ``mimalloc`` is
#: pyarrow's default on most builds, so ``pyarrow`` reads with it already.
POOLS = ("system", "jemalloc")
#: The pool a reader name without a pool suffix reads with: whatever the build defaults to.
DEFAULT = "default"


def _initial_pool():
    """The pool pyarrow chose at import (or ``ARROW_DEFAULT_MEMORY_POOL``): what ``pyarrow``
    reads with, restored when a process prepared another pool first (a proof of several
    readers in one process)."""
    global _INITIAL
    if _INITIAL is None:
        import pyarrow as pa

        _INITIAL = pa.default_memory_pool()
    return _INITIAL


_INITIAL = None


def pool(reader: str, name: str):
    """The pyarrow memory pool ``name`` (``default``, ``system``, ``jemalloc``, ``mimalloc``),
    or a ConfigError naming ``reader`` when this pyarrow has no such pool."""
    import pyarrow as pa

    if name == DEFAULT:
        return _initial_pool()
    make = getattr(pa, f"{name}_memory_pool", None)
    try:
        if make is None:
            raise NotImplementedError(name)
        return make()
    except NotImplementedError:
        raise ConfigError("measure.readers",
                          f"{reader}: this pyarrow has no {name} pool") from None


def use(reader: str, name: str) -> None:
    """Make ``name`` the pool every later allocation of this process comes from."""
    import pyarrow as pa

    chosen = pool(reader, name)
    _initial_pool()  # remember the build's default before replacing it
    pa.set_memory_pool(chosen)


def facts() -> dict[str, object]:
    """The pool this process allocates from, as pyarrow names it: the read's provenance."""
    import pyarrow as pa

    return {"memory_pool": pa.default_memory_pool().backend_name}


def reader_name(base: str, name: str) -> str:
    """``pyarrow`` for the default pool, ``pyarrow-system`` for the system one."""
    return base if name == DEFAULT else f"{base}-{name}"
