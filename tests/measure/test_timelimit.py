"""The time limit of processes that read untrusted files: its size, that a child over it is
killed with everything it started, and that the user sees one line naming the file and the
limit, from the library call and from the command line."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from hepfmt import formats
from hepfmt.cli import main
from hepfmt.errors import ConfigError, InputError, exit_with
from hepfmt.measure import isolated, memcap, timelimit
from hepfmt.plan import cost

#: Per child or command: generous for a machine several times slower than an idle one.
TIMEOUT_S = 600
HERE = str(Path(__file__).resolve().parent)
LIMIT_LINE = (r"{path}: {what} stopped after [\d.]+ s \(time limit 2 s; HEPFMT_TIME_LIMIT or "
              r"--time-limit sets it\)")


# --- what the children of these tests run (imported there as test_timelimit) -----------------

@dataclass
class Nap:
    seconds: float
    pidfile: str


def nap(spec: Nap) -> dict:
    """Start a grandchild that sleeps, note its pid, then sleep: a library stuck in a loop,
    with a helper of its own."""
    helper = subprocess.Popen(["sleep", str(spec.seconds)])
    Path(spec.pidfile).write_text(str(helper.pid))
    time.sleep(spec.seconds)
    return {"pid": os.getpid(), "sid": os.getsid(0), "pgid": os.getpgid(0)}


def nap_call(seconds: float, pidfile: str) -> dict:
    return nap(Nap(seconds, pidfile))


#: For a command's children (``python -m hepfmt.measure.isolated``), before hepfmt runs:
#: a child that sleeps past its limit with a grandchild. The parent command is not a child
#: (no HEPFMT_SUBJECT) and runs as usual.
SITECUSTOMIZE = """
import os
if os.environ.get("HEPFMT_SUBJECT") and os.environ.get("NAP_PIDFILE"):
    import subprocess, time
    helper = subprocess.Popen(["sleep", "60"])
    open(os.environ["NAP_PIDFILE"], "w").write(str(helper.pid))
    time.sleep(60)
"""


# --- helpers -------------------------------------------------------------------------------

@pytest.fixture
def tests_importable(monkeypatch):
    """This module importable in a child (``isolated.call("test_timelimit:...")``)."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [
        HERE, os.environ.get("PYTHONPATH")])))


def gone(pid: int, within_s: float = 30.0) -> bool:
    """Whether process ``pid`` has ended (gone, or a zombie its new parent has yet to reap)."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


def sparse_pair(tmp_path: Path) -> tuple[Path, Path]:
    """A file, and the same bytes with a 3 GB sparse tail (``truncate -s 3G``)."""
    plain, sparse = tmp_path / "plain.root", tmp_path / "sparse.root"
    data = os.urandom(75 * 4096)  # whole blocks: the last is not part hole
    plain.write_bytes(data)
    sparse.write_bytes(data)
    os.truncate(sparse, 3 * 10**9)
    return plain, sparse


# --- the limit's size ----------------------------------------------------------------------

@pytest.mark.parametrize("text", ["abc", "0", "-5", "nan", "inf", ""])
def test_a_limit_that_is_no_positive_number_is_refused(text):
    with pytest.raises(ConfigError, match="HEPFMT_TIME_LIMIT"):
        timelimit.parse(text)


def test_the_limit_grows_from_a_floor_with_the_data_a_file_holds(monkeypatch, tmp_path):
    monkeypatch.delenv(timelimit.ENV, raising=False)
    tiny = tmp_path / "tiny.root"
    tiny.write_bytes(b"x")
    assert timelimit.limit_for(tiny) == pytest.approx(timelimit.FLOOR_S, abs=1)
    plain, sparse = sparse_pair(tmp_path)
    assert timelimit.limit_for(plain) > timelimit.limit_for(tiny)
    # a sparse tail holds no data: it adds no time
    assert os.stat(sparse).st_size > 10**9
    assert timelimit.limit_for(sparse) == timelimit.limit_for(plain)
    # a URL cannot be sized: the caller's time-out alone
    assert timelimit.effective("root://host//f.root", 77.0) == (77.0, False)


def test_the_user_sets_the_limit_and_the_shorter_one_applies(monkeypatch, tmp_path):
    monkeypatch.setenv(timelimit.ENV, "2")
    assert timelimit.effective(tmp_path, 3600) == (2.0, True)
    assert timelimit.effective(tmp_path, 1.5) == (1.5, False)
    monkeypatch.setenv(timelimit.ENV, "abc")
    with pytest.raises(ConfigError, match="HEPFMT_TIME_LIMIT"):
        timelimit.limit_for(tmp_path)


def test_a_timing_child_gets_its_budget_on_top(monkeypatch, tmp_path):
    """A measurement child spends its timing budget on purpose (120 s per read and mode in
    config/paper.yaml): the limit adds it, found in the child's real spec."""
    from dataclasses import asdict

    from hepfmt.measure.reads import ReadBatch, ReadSpec

    def spec(selection: str, modes: list[str]) -> dict:
        return asdict(ReadSpec(path="f", source="s", adapter="ttree", reader="rdf",
                               selection=selection, branches=["x"], modes=modes,
                               repetitions=20, threads=1, budget_s=120.0))

    batch = asdict(ReadBatch([spec("ten", ["cold", "warm"]), spec("all", ["warm"])]))
    assert timelimit.timing_budget(batch) == 360
    assert timelimit.timing_budget({"budget_s": float("nan")}) == 0
    monkeypatch.delenv(timelimit.ENV, raising=False)
    f = tmp_path / "f.root"
    f.write_bytes(b"x")
    assert timelimit.effective(f, 3600, 360)[0] == pytest.approx(timelimit.FLOOR_S + 360,
                                                                  abs=1)
    monkeypatch.setenv(timelimit.ENV, "2")  # the user's limit is the limit
    assert timelimit.effective(f, 3600, 360) == (2.0, True)


def test_the_slow_speed_is_below_every_measured_reader():
    """READ_BYTES_PER_S must not exceed what the slowest reader over every branch reads of a
    file (the planner's per-event bytes, the memory cap's expansion): else a healthy read of
    a large file would be stopped."""
    event_bytes = cost.NANOAOD_BRANCHES * cost.NAIVE_BYTES
    rates = [r.cost.all.events_per_s * event_bytes / memcap.EXPANSION
             for name in formats.names() for r in formats.get(name).readers.values() if r.cost]
    assert rates and min(rates) >= timelimit.READ_BYTES_PER_S


# --- a child over its limit ----------------------------------------------------------------

def test_a_child_over_the_limit_is_killed_with_its_process_group(tests_importable,
                                                                 monkeypatch, tmp_path):
    monkeypatch.setenv(timelimit.ENV, "2")
    path, pidfile = tmp_path / "hangs.root", tmp_path / "helper.pid"
    began = time.monotonic()
    with pytest.raises(InputError) as exc:
        isolated.call("test_timelimit:nap_call", {"seconds": 60, "pidfile": str(pidfile)},
                      path, "reading", TIMEOUT_S)
    assert re.fullmatch(LIMIT_LINE.format(path=re.escape(str(path)), what="reading"),
                        str(exc.value)), str(exc.value)
    assert time.monotonic() - began < 60
    assert gone(int(pidfile.read_text()))


def test_a_wrapped_child_runs_in_its_session_and_its_cgroup_entry(tests_importable,
                                                                   monkeypatch, tmp_path):
    """A storage ``wrap`` (a shell that writes its pid to cgroup.procs, then executes the
    command) still works with the child's new session; the limit kills it there too."""
    procs = tmp_path / "cgroup.procs"

    def wrap(cmd: list[str]) -> list[str]:  # as blockdev.Device.command
        return ["sh", "-c", 'echo $$ > "$0" && exec "$@"', str(procs), *cmd]

    monkeypatch.delenv(timelimit.ENV, raising=False)
    ran = isolated.spawn("test_timelimit", Nap(0, str(tmp_path / "a.pid")), tmp_path / "f",
                         "reading", TIMEOUT_S, wrap)
    assert int(procs.read_text()) == ran["pid"] == ran["sid"] == ran["pgid"]
    monkeypatch.setenv(timelimit.ENV, "2")
    pidfile = tmp_path / "b.pid"
    with pytest.raises(InputError, match="time limit 2 s"):
        isolated.spawn("test_timelimit", Nap(60, str(pidfile)), tmp_path / "f", "reading",
                       TIMEOUT_S, wrap)
    assert gone(int(pidfile.read_text()))


def test_the_caller_time_out_applies_when_shorter(tests_importable, monkeypatch, tmp_path):
    monkeypatch.delenv(timelimit.ENV, raising=False)
    with pytest.raises(InputError, match=r"stopped after [\d.]+ s \(time-out 1 s; --timeout"):
        isolated.call("test_timelimit:nap_call", {"seconds": 60,
                                                  "pidfile": str(tmp_path / "p")},
                      tmp_path / "f", "reading", 1)


def test_a_child_dies_with_its_parent(tests_importable, tmp_path):
    """A child in a session of its own is out of reach of a kill of its parent's group (a job
    the workflow ended): it asks the kernel to kill it when its parent dies."""
    pidfile = tmp_path / "helper.pid"
    parent = subprocess.Popen([sys.executable, "-c", (
        "from hepfmt.measure import isolated; isolated.call('test_timelimit:nap_call', "
        f"{{'seconds': 60, 'pidfile': {str(pidfile)!r}}}, 'f.root', 'reading', 600)")])
    try:
        deadline = time.monotonic() + TIMEOUT_S
        while not pidfile.exists() or not pidfile.read_text():
            assert time.monotonic() < deadline and parent.poll() is None
            time.sleep(0.05)
        helper = int(pidfile.read_text())
        child = int(Path(f"/proc/{helper}/stat").read_text().rsplit(")", 1)[1].split()[1])
        parent.kill()
        parent.wait()
        assert gone(child)
    finally:
        parent.kill()
        with contextlib.suppress(ProcessLookupError, NameError):
            os.kill(helper, signal.SIGKILL)  # a grandchild outlives them both


@pytest.mark.parametrize("how", ["env", "option"])
def test_a_command_over_the_limit_is_one_line_and_exit_2(tmp_path, how):
    (tmp_path / "sitecustomize.py").write_text(SITECUSTOMIZE)
    path, pidfile = tmp_path / "nano.root", tmp_path / "helper.pid"
    path.write_bytes(b"x" * 1000)
    env = {**os.environ, "NAP_PIDFILE": str(pidfile),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path),
                                                       os.environ.get("PYTHONPATH")]))}
    env.pop(timelimit.ENV, None)
    args = [sys.executable, "-m", "hepfmt.cli", "import", str(path), "-o",
            str(tmp_path / "s.arrow")]
    if how == "env":
        env[timelimit.ENV] = "2"
    else:
        args += ["--time-limit", "2"]
    proc = subprocess.run(args, capture_output=True, text=True, env=env, timeout=TIMEOUT_S)
    assert proc.returncode == 2, proc.stderr
    line = proc.stderr.strip()
    assert "\n" not in line
    assert re.fullmatch("hepfmt import: error: " + LIMIT_LINE.format(
        path=re.escape(str(path)), what="import"), line), line
    assert gone(int(pidfile.read_text()))
    assert not (tmp_path / "s.arrow").exists()


@pytest.mark.parametrize("argv", [["import", "f.root", "-o", "s.arrow"],
                                  ["schema", "extract", "f.root", "-o", "m.json"]])
def test_a_bad_limit_is_refused_in_one_line(monkeypatch, capsys, tmp_path, argv):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(timelimit.ENV, "abc")
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "HEPFMT_TIME_LIMIT" in err and "'abc'" in err, err
    monkeypatch.delenv(timelimit.ENV)
    with pytest.raises(SystemExit):
        main([*argv, "--time-limit", "-3"])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "--time-limit" in err and "'-3' is not a number of seconds above 0" in err, err


if __name__ == "__main__":  # python -m test_timelimit SPEC OUT: a child of isolated.spawn
    exit_with(isolated.child(sys.argv[1:], Nap, nap))
