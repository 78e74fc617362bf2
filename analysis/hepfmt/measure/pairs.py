"""A ROOT / Parquet ratio measured as a pair: both files read in one measurement, their
repetitions interleaved.

Two sides timed in different jobs, minutes apart, see different machines: another job's load, a
host's turbo state, a page cache that changed in between. Their ratio then moves by more than
either side's interval says (issue 24). So a pairing is measured here, in one job:

* each side's reader runs in its own fresh interpreter (a *worker*: the reader's library alone
  in it, as in :mod:`hepfmt.measure.reads`), kept alive across repetitions and driven by this
  process over a pipe, one scan per command;
* a *round* starts a fresh worker for each side; its first scan on each side is that side's
  *first read* (page cache warm, from the digest check; allocator and library caches cold: what
  a batch job that reads a file once pays), and the rest are *repeats*. Each selection has its
  own rounds, so every first read is the first in its process;
* within a round the two sides alternate, A B B A A B ..., so that a drift in the machine's
  speed hits both sides alike; the ratio's interval comes from the per-pair ratios (the median
  of a_i / b_i with its order-statistic interval), which cancels what a pair shares;
* every scan records the share of the machine's CPU that other processes used meanwhile
  (:mod:`hepfmt.measure.load`); a pair with a scan above ``max_load`` is discarded and counted
  (a first-read pair so discarded takes its round again, in new processes), and a machine too
  busy to time at all is an error naming the share it saw. Every round, and the pair after a
  discarded one, first waits (up to a minute) for the machine to be quiet: a job's first
  seconds are its scheduler's busiest;
* every scan records its wall time split into user, system and waiting time, its page faults
  and its own peak memory (:func:`hepfmt.measure.reads.timed_scan`), so that a ratio can be
  told apart into decoding work and the kernel's (:func:`hepfmt.paired.cpu_columns`);
* every scan's marks must satisfy :func:`hepfmt.measure.invariants.check` (the worker checks
  them, as every timed scan does) before the record is written.

Rounds are the unit of every interval (:mod:`hepfmt.paired`: two fresh processes differ by
more than one process's repeats do). Each round takes ``ceil(min_repetitions / rounds)`` repeat
pairs; after the first ``rounds``, further rounds are taken while the rounds' ratio is not sharp
(:func:`hepfmt.stats.sharp` over the round medians), the budget lasts, and the repeats stay
within ``max_repetitions``: the rounds are the repetitions of the one timing loop,
:func:`hepfmt.measure.timing.interleaved` (:func:`rounds_stopping`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import select
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from hepfmt import formats
from hepfmt.atomic import scratch_dir
from hepfmt.defaults import default
from hepfmt.errors import (
    HepfmtError,
    InputError,
    UsageError,
    VerificationError,
    exit_with,
)
from hepfmt.measure import digest as content_digest
from hepfmt.measure import isolated, load, memcap, timelimit
from hepfmt.measure.fastest import Candidate, resolve
from hepfmt.measure.reads import (
    ReadSpec,
    codec_bounds,
    recorded_bounds,
    start_read_peak,
    timed_scan,
    verify_read,
)
from hepfmt.measure.timing import RoundStopping, Stopping, interleaved
from hepfmt.paired import SIDES, interval_values, summarize_pair
from hepfmt.provenance import collect
from hepfmt.records import PairRecord, SizeRecord, data_file, own_peak_bytes
from hepfmt.samples.source import read_source_meta, schema_of
from hepfmt.stats import sharp

#: The most rounds (fresh worker pairs) a first-read pair discarded for load may take again.
RETRIES = 3
#: How long a round, or the pair after a discarded one, waits for the machine to be quiet.
QUIET_PATIENCE_S = 60.0


@dataclass(frozen=True)
class PairSide:
    """One side of a pairing: a written file, the reader that stands for its format, and the
    file's size record (its bytes per branch, its proofs and digest, from ``convert``)."""

    path: str
    format: str  # the config's name
    adapter: str
    variant: str
    reader: str
    size_record: str = ""
    #: where the side's reader was chosen as the run's fastest (hepfmt.measure.fastest):
    #: what it was chosen from and by
    chosen: dict = field(default_factory=dict)
    #: the measured files a "fastest" side is chosen from (its reader: fastest.FASTEST)
    candidates: tuple[Candidate, ...] = ()
    #: the file's own measure record, where the run measured it: its codec bounds are taken
    #: from there (reads.recorded_bounds) rather than measured a second time
    measured: str = ""


@dataclass(frozen=True)
class PairSpec:
    label: str
    source: str  # the sample's Arrow source (its sidecar holds the reference checksums)
    cluster_size: int
    ttree: PairSide
    parquet: PairSide
    selections: dict[str, list[str]] = field(default_factory=dict)
    threads: int = 1
    # the defaults are the config schema's ``compare`` section's (hepfmt.defaults)
    rounds: int = default("compare.rounds")  # the fewest
    precision: float = default("compare.precision")
    budget_s: float = default("compare.budget_s")
    min_repetitions: int = default("compare.min_repetitions")  # over the first ``rounds``
    max_repetitions: int = default("compare.repetitions")
    #: a pair whose scans saw other processes use more than this share of the CPUs is discarded
    max_load: float = default("compare.max_load")
    timeout: float = default("measure.timeout_s")
    file_events: int = default("compare.file_events")  # whole-file ratios: a file this long

    def stopping(self) -> Stopping:
        return Stopping(self.precision, self.budget_s, self.min_repetitions,
                        self.max_repetitions)


@dataclass(frozen=True)
class WorkerSpec:
    """What one worker reads: one reader, one file, one selection."""

    path: str
    source: str
    module: str
    reader: str
    branches: list[str]
    threads: int
    n_events: int
    digest: str = ""  # the size record's: proven at convert, the file checked to be those bytes


# ---- the worker: one reader in its own interpreter ------------------------------------------


def _send(out, doc: dict) -> None:
    out.write(json.dumps(doc) + "\n")
    out.flush()


def serve(spec: WorkerSpec, commands, out) -> None:
    """The worker's body: set the reader up (untimed), then one timed scan per ``scan`` line of
    ``commands``, each answered on ``out`` with the scan's record, until ``stop`` or EOF."""
    reader = formats.load(spec.module).readers[spec.reader]
    meta = read_source_meta(spec.source)
    reader.prepare(spec.threads)
    read = ReadSpec(spec.path, spec.source, "", spec.reader, "", spec.branches, ["warm"], 1,
                    spec.threads, spec.module, n_events=spec.n_events)
    if spec.digest:  # proven at convert on these bytes: reading them loads the page cache
        now, identity = content_digest.hashed(spec.path)
        if now != spec.digest:
            raise VerificationError(spec.path, f"changed since convert: digest {now} != "
                                               f"{spec.digest} (its size record's)")
        proven_by = "convert"
    else:  # the proof is this process's first read: its first timed read is then not first
        identity = content_digest.identity(spec.path)
        verify_read(reader, read, {b: tuple(meta["checksums"][b]) for b in spec.branches})
        content_digest.unchanged(spec.path, identity)
        proven_by = "pair"
    baseline, method = start_read_peak()
    _send(out, {"ready": True, "proven_by": proven_by, "baseline_rss_bytes": baseline,
                "rss_method": method,
                # what the reader really runs with (the memory pool in use), kept per round
                "reader_facts": reader.run_facts()})
    for line in commands:
        if line.strip() != "scan":
            return
        rep = timed_scan(reader, read)  # its CPU split, page faults and own peak too
        content_digest.unchanged(spec.path, identity)  # the proven bytes were what was read
        # the scan's own peak (above the worker's resident set before its first read, or at
        # the scan's start where that is lower); None where the high-water mark cannot be
        # reset (a process peak would not be this scan's)
        rep.update(read_peak_rss_bytes=own_peak_bytes([rep], baseline))
        _send(out, rep)


def worker_main(argv: list[str]) -> int:
    """``python -m hepfmt.measure.pairs CMD_FD RESULT_FD SPEC_JSON``: exit status 2 with one
    ``hepfmt:`` line on stderr on an error (the parent turns it into its own line)."""
    isolated.start()
    cmd_fd, res_fd, text = int(argv[0]), int(argv[1]), argv[2]
    spec = WorkerSpec(**json.loads(text))
    with os.fdopen(cmd_fd) as commands, os.fdopen(res_fd, "w") as out:
        return isolated.reporting(lambda: serve(spec, commands, out))


# ---- the parent: two workers, interleaved -----------------------------------------------------


class Worker:
    """A running worker, seen from the parent: send it ``scan``, get its record back."""

    def __init__(self, spec: WorkerSpec, what: str, timeout: float, data_bytes: float,
                 tmp: Path) -> None:
        self.path, self.what, self.timeout = spec.path, what, timeout
        cmd_r, self._cmd = os.pipe()
        self._res, res_w = os.pipe()
        self.cap = memcap.cap_for(spec.path, data_bytes, spec.threads)
        # open until close(): the worker's output, read back only if it fails
        self._err = open(tmp / f"{spec.reader}-{os.getpid()}-{id(self)}.stderr",  # noqa: SIM115
                         "w+", errors="replace")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", __name__, str(cmd_r), str(res_w), json.dumps(
                dataclasses.asdict(spec))],
            stdin=subprocess.DEVNULL, stdout=self._err, stderr=self._err,
            pass_fds=(cmd_r, res_w), env=isolated.child_env(spec.path, what, self.cap),
            start_new_session=True)  # its own process group: killed whole on time-out
        os.close(cmd_r)
        os.close(res_w)
        self._buf = b""

    def _fail(self) -> HepfmtError:
        ended = isolated.wait(self.proc, 10.0)
        self._err.seek(0)
        stderr = self._err.read()
        if ended is None:
            return VerificationError(self.path, f"{self.what} stopped answering")
        return isolated.failure(self.path, self.what, ended[0], stderr, ended[1], self.cap)

    def receive(self) -> dict:
        """The worker's next record; a worker past its time limit (or the time-out, the
        shorter) is killed with its process group."""
        seconds, by_limit = timelimit.effective(self.path, self.timeout)
        began = time.monotonic()
        while b"\n" not in self._buf:
            left = began + seconds - time.monotonic()
            if left <= 0:
                isolated.kill_group(self.proc)
                raise timelimit.stopped(self.path, self.what, time.monotonic() - began,
                                        seconds, by_limit)
            ready, _, _ = select.select([self._res], [], [], left)
            if ready:
                chunk = os.read(self._res, 1 << 16)
                if not chunk:
                    raise self._fail()
                self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return json.loads(line)

    def scan(self) -> dict:
        try:
            os.write(self._cmd, b"scan\n")
        except BrokenPipeError:
            raise self._fail() from None
        return self.receive()

    def hang_up(self) -> None:
        """Tell the worker to end (end of its commands): both workers of a round wind down
        (ROOT's teardown is a tenth of a second) at once, not one after the other."""
        for fd in (self._cmd, self._res):
            with contextlib.suppress(OSError):
                os.close(fd)

    def close(self) -> None:
        self.hang_up()
        if self.proc.poll() is None:
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                isolated.kill_group(self.proc)
        self._err.close()


@dataclass
class _Selection:
    """The running state of one selection's pairs: every CPU sample at a scan's edge (for the
    load windows) and every pair kept or discarded."""

    spec: PairSpec
    name: str
    n_events: int
    samples: list[load.CpuSample] = field(default_factory=list)
    rounds: list[dict] = field(default_factory=list)
    discarded: int = 0
    worst_share: float = 0.0
    waited_s: float = 0.0  # spent waiting for the machine to be quiet (load.wait_quiet)

    def quiet(self, own: list[int]) -> load.CpuSample:
        """Wait for the machine to be quiet (:func:`load.wait_quiet`); the start of the quiet
        window watched last, which the next scans' load windows may reach back to."""
        _, waited, start = load.wait_quiet(own, self.spec.max_load, QUIET_PATIENCE_S)
        self.waited_s += waited
        return start

    def timed(self, worker: Worker, own: list[int]) -> dict:
        rep = worker.scan()
        self.samples.append(load.sample(own))
        share, window = load.windowed(self.samples)
        rep.update(other_cpu_share=share, load_window_s=window)
        return rep

    def pair(self, workers: dict[str, Worker], order: tuple[str, str], own: list[int]) -> dict:
        # the scans' edges: a fresh base sample per pair, so that the window never spans the
        # untimed work between pairs alone
        self.samples.append(load.sample(own))
        reps = {s: self.timed(workers[s], own) for s in order}
        worst = max(r["other_cpu_share"] for r in reps.values())
        self.worst_share = max(self.worst_share, worst)
        return {**reps, "order": list(order), "kept": worst <= self.spec.max_load}


def _close(workers: dict[str, Worker]) -> None:
    for w in workers.values():
        w.hang_up()
    for w in workers.values():
        w.close()


def _start(spec: PairSpec, name: str, n_events: int, naive: float, tmp: Path
           ) -> dict[str, Worker]:
    workers: dict[str, Worker] = {}
    try:
        for s in SIDES:
            side: PairSide = getattr(spec, s)
            record = SizeRecord.load(side.size_record) if side.size_record else None
            proof = record.proofs.get(side.reader) if record else None
            if proof is not None and not proof["ok"]:
                raise VerificationError(side.path, f"{side.reader} failed its proof at "
                                                   f"convert: {proof['error']}")
            digest = record.digest if record and proof is not None else ""
            ws = WorkerSpec(side.path, spec.source, formats.entry(side.adapter).module,
                            side.reader, spec.selections[name], spec.threads, n_events, digest)
            workers[s] = Worker(ws, f"{side.reader}/{name} read (pair {spec.label!r})",
                                spec.timeout, naive, tmp)
        ready = {s: w.receive() for s, w in workers.items()}
    except BaseException:
        _close(workers)
        raise
    for s, w in workers.items():
        w.ready = ready[s]  # type: ignore[attr-defined]
    return workers


def _round(state: _Selection, workers: dict[str, Worker], index: int, repeats: int) -> dict:
    """One round: the first-read pair, then ``repeats`` kept repeat pairs; its first pair not
    kept (load) leaves the round without repeats, to be taken again."""
    own = [os.getpid(), *(w.proc.pid for w in workers.values())]
    # A window never reaches into another round (other processes were ours then), and a load
    # window needs MIN_WINDOW_S of history: the machine is watched, idle, until one window of
    # it is quiet before the first read (the first pair's short scans would otherwise be
    # judged on a few clock ticks, or on the scheduler's burst at a job's start).
    state.samples = [state.quiet(own)]
    flip = index % 2  # who reads first alternates between rounds too

    def order(i: int) -> tuple[str, str]:
        return SIDES if (i + flip) % 2 == 0 else SIDES[::-1]

    first = state.pair(workers, order(0), own)
    rnd = {"ready": {s: w.ready for s, w in workers.items()},  # type: ignore[attr-defined]
           "first": first, "repeats": []}
    if not first["kept"]:
        return rnd
    i = 1
    while sum(p["kept"] for p in rnd["repeats"]) < repeats:
        p = state.pair(workers, order(i), own)
        rnd["repeats"].append(p)
        if not p["kept"]:  # the next pair starts once the machine is quiet again
            state.discarded += 1
            state.samples = [state.quiet(own)]
        if state.discarded > 3 * state.spec.max_repetitions + 3:
            raise VerificationError(
                state.spec.ttree.path, f"the machine is too busy to time pair "
                f"{state.spec.label!r}: other processes used up to "
                f"{state.worst_share:.0%} of the CPUs (limit {state.spec.max_load:.0%}), "
                f"{state.discarded} pairs discarded")
        i += 1
    return rnd


def _round_ratios(rounds: list[dict]) -> list[float]:
    """What the repeats' interval is taken over (:func:`hepfmt.paired.interval_values`), for
    the Parquet / ROOT wall-time ratio: whether it is sharp decides on another round."""
    return interval_values({"rounds": rounds}, "repeats",
                           lambda p: p["parquet"]["wall_s"] / p["ttree"]["wall_s"])[0]


def rounds_stopping(spec: PairSpec) -> tuple[RoundStopping, int]:
    """When a selection's rounds stop, in rounds (:func:`hepfmt.measure.timing.interleaved`
    repeats them), and each round's repeat pairs: at least ``rounds`` rounds; past them while
    another round stays within the most repeats (each round keeps exactly its repeats), the
    budget lasts and the rounds' ratio is not sharp."""
    stop = spec.stopping()
    per_round = max(1, math.ceil(stop.min_repetitions / spec.rounds))
    return RoundStopping(stop.precision, stop.budget_s, spec.rounds,
                         max(spec.rounds, stop.max_repetitions // per_round)), per_round


def measure_selection(spec: PairSpec, name: str, n_events: int, naive: float,
                      tmp: Path) -> dict:
    """Every round of one selection (see the module docstring), repeated by the one loop."""
    stop, per_round = rounds_stopping(spec)
    state = _Selection(spec, name, n_events)
    tries = 0

    def one_round() -> dict:
        """A round kept, in fresh workers: one whose first read was discarded (load) is taken
        again, up to ``RETRIES`` per round asked for over the selection."""
        nonlocal tries
        while True:
            workers = _start(spec, name, n_events, naive, tmp)
            try:
                rnd = _round(state, workers, len(state.rounds), per_round)
            finally:
                _close(workers)
            if rnd["first"]["kept"]:
                state.rounds.append(rnd)
                return rnd
            state.discarded += 1
            tries += 1
            if tries > RETRIES * spec.rounds:
                raise VerificationError(
                    spec.ttree.path, f"the machine is too busy to time pair {spec.label!r}: "
                    f"other processes used {state.worst_share:.0%} of the CPUs during first "
                    f"reads (limit {spec.max_load:.0%})")

    interleaved({"round": one_round}, stop,
                precise=lambda _: sharp(_round_ratios(state.rounds), stop.precision))
    return {"selection": name, "n_branches": len(spec.selections[name]),
            "rounds": state.rounds, "discarded": state.discarded,
            "worst_other_cpu_share": state.worst_share, "waited_for_quiet_s": state.waited_s}


def _chosen(spec: PairSpec) -> PairSpec:
    """``spec`` with each "fastest" side's reader and file chosen (hepfmt.measure.fastest):
    per selection, so a pair job asking for one has one."""
    if not any(getattr(spec, s).reader == formats.FASTEST for s in SIDES):
        return spec
    if len(spec.selections) != 1:
        raise UsageError("--selection", "a 'fastest' side is chosen per selection: a pair "
                                        "with one needs exactly one selection")
    (name,) = spec.selections
    return dataclasses.replace(spec, **{s: resolve(getattr(spec, s), name, spec.threads)
                                        for s in SIDES})


def measure_pair(spec: PairSpec, out: str | Path) -> dict:
    """Measure one pairing on one sample at one cluster size; write one JSON, atomically, or
    nothing. A side that cannot be read fails the whole pair: never a one-sided ratio."""
    meta = read_source_meta(spec.source)
    n_events = int(meta["n_events"])
    names = set(schema_of(meta).names)
    sides: dict[str, dict] = {}
    spec = _chosen(spec)
    for s in SIDES:
        side: PairSide = getattr(spec, s)
        if not Path(side.path).exists():
            raise InputError(side.path, f"the {s} side of pair {spec.label!r} does not exist")
        data_file(side.path, f"{s} side of pair {spec.label!r}")
        if side.reader not in formats.get(side.adapter).readers:
            raise VerificationError(side.path, f"format {side.adapter} has no reader "
                                               f"{side.reader!r}")
        zip_by_branch = SizeRecord.load_for(
            side.size_record, side.path, meta["naive_bytes"], content_digest.of
        ).zip_bytes_by_branch if side.size_record else {}
        sides[s] = {**dataclasses.asdict(side), "file_bytes": Path(side.path).stat().st_size,
                    "library": formats.get(side.adapter).readers[side.reader].library,
                    "zip_bytes": {n: sum(zip_by_branch.get(b, 0) for b in br)
                                  for n, br in spec.selections.items()}}
    for name, branches in spec.selections.items():
        missing = [b for b in branches if b not in names]
        if missing:
            raise InputError(spec.source, f"selection {name!r}: no branches {missing}")
    naive_all = float(meta["naive_bytes"])
    selections = []
    with scratch_dir(prefix=f"hepfmt-fresh-{os.getpid()}-") as tmp:
        for name in spec.selections:
            selections.append(measure_selection(spec, name, n_events, naive_all, Path(tmp)))
            selections[-1]["naive_bytes"] = float(sum(
                meta["naive_bytes_by_branch"][b] for b in spec.selections[name]))
            selections[-1]["values"] = sum(int(meta["checksums"][b][0])
                                           for b in spec.selections[name])
    for s in SIDES:  # after every timed read: each side's codec bound per selection
        side = getattr(spec, s)
        reused = side.measured and recorded_bounds(side.measured, side.path, spec.selections,
                                                   meta)
        sides[s]["bounds"] = reused or codec_bounds(side.path, side.adapter, spec.selections,
                                                    meta, spec.timeout)
        sides[s]["bounds_from"] = side.measured if reused else "measured here"
    record = PairRecord(
        pair=spec.label, sample=meta["sample"], process=meta["process"],
        cluster_size=spec.cluster_size, n_events=n_events, threads=spec.threads,
        file_events=spec.file_events, sides=sides, max_load=spec.max_load,
        stopping=dataclasses.asdict(spec.stopping()), rounds=spec.rounds,
        selections=selections, provenance=collect(data_path=Path(spec.ttree.path).parent))
    return dataclasses.replace(record, summary=summarize_pair(record.as_dict())).write(out)


if __name__ == "__main__":  # a worker: python -m hepfmt.measure.pairs CMD_FD RESULT_FD SPEC
    exit_with(worker_main(sys.argv[1:]))
