"""The memory cap of processes that read untrusted files: its size, that a child runs under it
and the parent does not, and that reaching it is one line however the library dies."""

from __future__ import annotations

import ctypes
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from hepfmt.errors import ConfigError, InputError, VerificationError
from hepfmt.measure import isolated, memcap
from hepfmt.measure.memcap import GB

#: Per child: generous for a machine several times slower than an idle one.
TIMEOUT_S = 600
HERE = str(Path(__file__).resolve().parent)
ROOT_BAD_ALLOC = "terminate called after throwing an instance of 'std::bad_alloc'\n"


# --- what the children of these tests run (imported there as test_memcap) -------------------

def limit_here() -> list[int]:
    return list(resource.getrlimit(resource.RLIMIT_DATA))


def grow(step_mb: int) -> int:
    """Allocate (and touch) ``step_mb`` at a time until the allocator refuses."""
    held = []
    while True:
        held.append(b"x" * (step_mb * 10**6))


def die(text: str, how: str) -> None:
    """Print ``text`` as a library would, then end as it would: abort, segfault, exit 1."""
    sys.stderr.write(text)
    sys.stderr.flush()
    if how == "abort":
        os.abort()
    if how == "segfault":
        ctypes.string_at(0)
    os._exit(1)


def wrapped(path: str) -> None:
    """An adapter's error around a bare MemoryError, whose message is empty."""
    try:
        raise MemoryError
    except MemoryError as exc:
        raise InputError(path, f"cannot read it: {exc}") from exc


def panic() -> None:
    """What a Rust library's panic is in Python (pyo3): no Exception."""

    class PanicException(BaseException):
        pass

    raise PanicException("called `Option::unwrap()` on a `None` value")


# --- the tests ---------------------------------------------------------------------------------

@pytest.fixture
def tests_importable(monkeypatch):
    """This module importable in a child (``isolated.call("test_memcap:...")``)."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [
        HERE, os.environ.get("PYTHONPATH")])))


@pytest.mark.parametrize(("text", "expected"), [
    ("8G", 8 * GB), ("8GB", 8 * GB), ("512M", 512 * 10**6), ("7.5GiB", int(7.5 * 2**30)),
    ("4000000000", 4 * GB), ("off", None), ("0", None)])
def test_parse(text, expected):
    assert memcap.parse(text) == expected


def test_parse_refuses_nonsense():
    with pytest.raises(ConfigError, match="HEPFMT_MEMORY_CAP"):
        memcap.parse("lots")


def test_default_cap_grows_with_the_data_from_a_floor(monkeypatch, tmp_path):
    monkeypatch.delenv(memcap.ENV, raising=False)
    monkeypatch.setattr(memcap, "machine_bytes", lambda: 10**15)
    small = tmp_path / "small.root"
    small.write_bytes(bytes(1000))
    assert memcap.cap_for(small) == memcap.FLOOR
    assert memcap.cap_for(small, data_bytes=10 * GB) == memcap.BASE + memcap.PER_BYTE * 10 * GB
    assert memcap.cap_for(small, 0, threads=5) == memcap.FLOOR + 4 * memcap.PER_THREAD
    # without declared bytes, the file's size stands for them, times EXPANSION
    assert memcap.default_cap(small) == memcap.FLOOR
    monkeypatch.setattr(memcap, "file_bytes", lambda path: GB)
    assert memcap.default_cap(small) == memcap.BASE + memcap.PER_BYTE * memcap.EXPANSION * GB


def test_a_sparse_tail_adds_nothing_to_the_cap(monkeypatch, tmp_path):
    """A file's length is not its data: a 3 GB hole (``truncate -s 3G``) raised the cap to the
    machine's memory. The bytes it holds are its allocated blocks where fewer."""
    monkeypatch.delenv(memcap.ENV, raising=False)
    monkeypatch.setattr(memcap, "machine_bytes", lambda: 10**15)
    plain, sparse = tmp_path / "plain.root", tmp_path / "sparse.root"
    data = os.urandom(100 * 4096)  # whole blocks: the last is not part hole
    plain.write_bytes(data)
    sparse.write_bytes(data)
    os.truncate(sparse, 3 * GB)
    assert sparse.stat().st_size == 3 * GB
    assert memcap.file_bytes(sparse) == memcap.file_bytes(plain) == len(data)
    assert memcap.cap_for(sparse) == memcap.cap_for(plain)
    # and a directory's files alike
    (tmp_path / "d").mkdir()
    sparse.rename(tmp_path / "d" / "sparse.root")
    assert memcap.file_bytes(tmp_path / "d") == len(data)


def test_default_cap_never_exceeds_the_machine(monkeypatch, tmp_path):
    monkeypatch.delenv(memcap.ENV, raising=False)
    assert memcap.cap_for(tmp_path, data_bytes=10**15) == memcap.machine_bytes()


def test_the_user_sets_the_cap(monkeypatch, tmp_path):
    monkeypatch.setenv(memcap.ENV, "3G")
    assert memcap.cap_for(tmp_path, data_bytes=10**12) == 3 * GB
    monkeypatch.setenv(memcap.ENV, "off")
    assert memcap.cap_for(tmp_path) is None


def test_a_child_runs_under_the_cap_and_the_parent_does_not(tests_importable, monkeypatch,
                                                           tmp_path):
    monkeypatch.setenv(memcap.ENV, "3G")
    before = resource.getrlimit(resource.RLIMIT_DATA)
    soft, _ = isolated.call("test_memcap:limit_here", {}, tmp_path / "f", "limit", TIMEOUT_S)
    assert soft == 3 * GB
    assert resource.getrlimit(resource.RLIMIT_DATA) == before


def test_a_child_that_grows_without_bound_is_stopped_at_the_cap(tests_importable, monkeypatch,
                                                                tmp_path):
    monkeypatch.setenv(memcap.ENV, "1G")
    path = tmp_path / "damaged.root"
    with pytest.raises(InputError) as exc:
        isolated.call("test_memcap:grow", {"step_mb": 20}, path, "growing", TIMEOUT_S)
    assert str(exc.value) == f"{path}: damaged or larger than the memory cap (1.0 GB)"
    assert "MemoryError" in exc.value.detail and "peak resident memory" in exc.value.detail


@pytest.mark.parametrize(("text", "how"), [
    (ROOT_BAD_ALLOC, "abort"),  # ROOT: std::bad_alloc where nothing catches it
    ("memory allocation of 4294967296 bytes failed\n", "abort"),  # Rust
    ("MemoryError: Unable to allocate 9.0 GiB for an array\n", "exit"),  # numpy
], ids=["root-bad-alloc", "rust-abort", "numpy"])
def test_reaching_the_cap_is_one_line_however_the_library_dies(tests_importable, monkeypatch,
                                                              tmp_path, text, how):
    monkeypatch.setenv(memcap.ENV, "2G")
    path = tmp_path / "f.root"
    with pytest.raises(InputError) as exc:
        isolated.call("test_memcap:die", {"text": text, "how": how}, path, "dying", TIMEOUT_S)
    assert str(exc.value) == f"{path}: damaged or larger than the memory cap (2.0 GB)"


def test_another_crash_is_not_taken_for_the_cap(tests_importable, monkeypatch, tmp_path):
    """A segfault far below the cap, without a word of memory, is a crash."""
    monkeypatch.setenv(memcap.ENV, "8G")
    path = tmp_path / "f.root"
    with pytest.raises(InputError) as exc:
        isolated.call("test_memcap:die", {"text": "", "how": "segfault"}, path, "dying",
                      TIMEOUT_S)
    assert str(exc.value) == (f"{path}: dying crashed (SIGSEGV): the library could not "
                              "handle this file")


def test_a_child_crash_dump_is_one_meaningful_line(tests_importable, tmp_path):
    """ROOT's handler prints the stacks of every thread between '=====' rules and exits."""
    dump = ("Error in <TBasket::ReadBasketBuffers>: fNbytes = 28, fKeylen = 79\n"
            " *** Break *** segmentation violation\n\n" + "=" * 59 + "\nThere was a crash.\n"
            "#0  0x00007f in waitpid () from /lib/libc.so.6\n" + "=" * 59 + "\n")
    path = tmp_path / "f.root"
    with pytest.raises(InputError) as exc:
        isolated.call("test_memcap:die", {"text": dump, "how": "exit"}, path, "reading",
                      TIMEOUT_S)
    assert str(exc.value) == (
        f"{path}: reading crashed: the library could not handle this file (Error in "
        "<TBasket::ReadBasketBuffers>: fNbytes = 28, fKeylen = 79 *** Break *** segmentation "
        "violation)")
    assert "There was a crash." in exc.value.detail


def test_a_big_parent_does_not_make_a_crash_look_out_of_memory(tests_importable, tmp_path,
                                                               monkeypatch):
    """A child's ru_maxrss includes its parent's memory from before it executed: a crash of a
    small child under a parent that has grown past half the cap is still a crash."""
    monkeypatch.setenv(memcap.ENV, "400M")
    ballast = bytearray(b"\x01") * (300 * 10**6)  # touched: resident in this process
    path = tmp_path / "f.root"
    with pytest.raises(InputError) as exc:
        isolated.call("test_memcap:die", {"text": " *** Break *** segmentation violation\n",
                                          "how": "exit"}, path, "reading", TIMEOUT_S)
    assert "reading crashed" in str(exc.value), str(exc.value)
    assert isolated.hwm() >= len(ballast)


def test_a_child_that_names_the_problem_is_taken_at_its_word(tests_importable, tmp_path):
    path = tmp_path / "f.root"
    with pytest.raises(VerificationError) as exc:
        isolated.call("test_memcap:die", {"text": f"noise\nhepfmt: {path}: 3 branches differ\n"
                                                  "more noise\n", "how": "exit"},
                      path, "reading", TIMEOUT_S)
    assert str(exc.value) == f"{path}: 3 branches differ"


IN_PROCESS = r"""
import resource, sys
from hepfmt.errors import InputError
from hepfmt.measure import memcap
from hepfmt.measure.memcap import GB

path = sys.argv[1]
held = bytearray(int(sys.argv[2]) * GB // 2) if len(sys.argv) > 2 else None  # data held before
before = resource.getrlimit(resource.RLIMIT_DATA)
try:
    with memcap.capped(path) as cap:
        soft = resource.getrlimit(resource.RLIMIT_DATA)[0]
        assert cap == GB and GB + memcap.data_now() - 64 * 2**20 <= soft <= GB + memcap.data_now()
        bytearray(GB // 4)  # what a read may add, whatever the process held before
        bytearray(2 * GB)
    print("not raised")
except InputError as exc:
    print(exc)
assert resource.getrlimit(resource.RLIMIT_DATA) == before
print("restored")
"""


@pytest.mark.parametrize("held_half_gb", [0, 3])
def test_in_process_reads_run_under_the_cap_and_restore_the_limit(tmp_path, held_half_gb):
    """The cap bounds what a read adds to the process, not what it held before: a long-lived
    process (a test run that has written ORC, whose C++ library leaves gigabytes of freed heap
    mapped) may already hold more than the cap, and must still read. In a fresh process, so
    that the 2 GB asked for never inflates the test run's own memory."""
    path = tmp_path / "real.root"
    proc = subprocess.run([sys.executable, "-c", IN_PROCESS, str(path), str(held_half_gb)],
                          capture_output=True, text=True, timeout=TIMEOUT_S,
                          env={**os.environ, memcap.ENV: "1G"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines() == [
        f"{path}: damaged or larger than the memory cap (1.0 GB)", "restored"]


def test_a_rust_panic_in_a_child_is_one_line(tests_importable, tmp_path):
    path = tmp_path / "f.lance"
    with pytest.raises(VerificationError) as exc:
        isolated.call("test_memcap:panic", {}, path, "reading", TIMEOUT_S)
    assert str(exc.value) == (f"{path}: reading failed: the library could not read it (called "
                              "`Option::unwrap()` on a `None` value)")
    assert "PanicException" in exc.value.detail


def test_a_compiled_helper_runs_under_the_cap():
    """A program without hepfmt's entry point (the arrow-rs helper) is capped before it runs."""
    argv = memcap.command([sys.executable, "-c", "import resource; "
                           "print(resource.getrlimit(resource.RLIMIT_DATA)[0])"], 3 * GB)
    assert subprocess.run(argv, capture_output=True, text=True, check=True,
                          timeout=TIMEOUT_S).stdout.strip() == str(3 * GB)
    assert memcap.command(["helper", "x"], None) == ["helper", "x"]


def test_a_memory_error_an_adapter_wrapped_is_the_cap(tests_importable, monkeypatch, tmp_path):
    monkeypatch.setenv(memcap.ENV, "2G")
    path = tmp_path / "f.root"
    with pytest.raises(InputError) as exc:
        isolated.call("test_memcap:wrapped", {"path": str(path)}, path, "reading", TIMEOUT_S)
    assert str(exc.value) == f"{path}: damaged or larger than the memory cap (2.0 GB)"
