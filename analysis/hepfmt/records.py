"""The JSON records one stage leaves for the next, as typed records.

Each kind of record is a dataclass here, shared by the stage that writes it (``measure``: a
size record at convert, a read, pair, storage or query measurement) and the stage that reads it
(``report``): its keys are written down once, the writer cannot leave one out (the dataclass
will not build) and the reader names the file and the keys it lacks when one does
(:class:`~hepfmt.errors.InputError`, never a ``KeyError`` deep inside a table). Keys a
record from an older hepfmt may lack have defaults; keys this one does not know are ignored.

A read record's rows are typed too (:class:`ReadRow`: one per reader × selection × threads ×
cache mode, the largest rows and the most read back). The other rows stay mappings, described
where they are made: a storage row (hepfmt.measure.onstorage) is a read's figures plus the
counts of whichever storage views its profile has (a device's, an XRootD server's), so its keys
differ from profile to profile; a query row (hepfmt.measure.workload, read by
hepfmt.report.query_tables) and a pair's selections and sides (hepfmt.paired) are each made
in one module and read in one, and are not typed yet. A row's repetitions stay mappings too:
their keys depend on the reader and the cache mode.

Every side file hepfmt reads (these records, a source's sidecar, a model, the plan record, a
ledger entry) comes through :func:`read_json`: opened only if it is a regular file (a FIFO
would hang the read, ``/dev/zero`` would fill the process: no memory cap covers hepfmt's own
reads), at most :data:`MAX_BYTES` of it, nested at most :data:`MAX_DEPTH` deep; a record's
keys are then checked for their declared types and ranges (:meth:`Record.load`), so that a
wrong one is refused in one line naming the file and the key.
"""

from __future__ import annotations

import json
import math
import os
import stat
from collections.abc import Callable, Iterable
from dataclasses import MISSING, asdict, dataclass, field, fields
from pathlib import Path
from typing import ClassVar, Self

from hepfmt.atomic import write_json
from hepfmt.checksum import EMPTY
from hepfmt.errors import InputError
from hepfmt.stats import median_interval, parts_of

#: The page-cache modes a read is timed in (a record's ``mode``): evicted first, or not.
CACHE_MODES = ("cold", "warm")

#: The most bytes a side file (a record, a sidecar, a model, a plan) may hold: hepfmt reads it
#: whole into its own process, which no memory cap covers. The largest hepfmt writes are a few
#: hundred kB (a read record of every reader; a sidecar of 20,000 branches: about 4 MB).
MAX_BYTES = 16 << 20
#: The deepest nesting of a side file: hepfmt's own are 6 levels deep (a read record's
#: repetitions); json's parser recurses once per level, until Python gives up.
MAX_DEPTH = 32



def _a(noun: str) -> str:
    """``noun`` with its indefinite article ("an input file", "a size record")."""
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"

def _kind_of(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def regular(path: str | Path, what: str = "file") -> os.stat_result:
    """``path``'s status, when it is a regular file (after symlinks); else an
    :class:`InputError` naming it. A FIFO, a device or a directory given as a data file or a
    side file never ends a read (a FIFO without a writer waits forever; ``/dev/zero`` fills
    memory), and none of them is what ``what`` should be."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise InputError(path, f"cannot read {what} ({exc.strerror})") from None
    if not stat.S_ISREG(st.st_mode):
        raise InputError(path, f"{_kind_of(st.st_mode)}, not a regular file: not {_a(what)}")
    return st


def data_file(path: str | Path, what: str = "data file") -> None:
    """``path`` is a regular file or a directory (a dataset of files: Lance, a Parquet
    dataset), never a FIFO, a device or a socket, which a reader would wait on or read without
    end; else an :class:`InputError` naming it. A URL is no local file: not checked."""
    if "://" in str(path):
        return
    try:
        st = os.stat(path)
    except OSError as exc:
        raise InputError(path, f"cannot read {what} ({exc.strerror})") from None
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
        raise InputError(path, f"{_kind_of(st.st_mode)}, not a regular file: not {_a(what)}")


def read_bounded(path: str | Path, limit: int = MAX_BYTES, what: str = "file") -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them, else an
    :class:`InputError` naming it. The check is made on the open descriptor (opened without
    waiting: a FIFO opens at once, and is then refused), so the file read is the file checked."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        raise InputError(path, f"cannot read {what} ({exc.strerror})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InputError(path, f"{_kind_of(st.st_mode)}, not a regular file: not {_a(what)}")
        if st.st_size > limit:
            raise InputError(path, f"{st.st_size:,} bytes, more than the {limit:,} a {what} "
                                   "may hold")
        os.set_blocking(fd, True)
        chunks, size = [], 0
        while size <= limit:  # a file that grows while it is read is still bounded
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise InputError(path, f"cannot read {what} ({exc.strerror})") from None
    finally:
        os.close(fd)
    if size > limit:
        raise InputError(path, f"more than the {limit:,} bytes a {what} may hold")
    return b"".join(chunks)


def _too_deep(doc: object) -> bool:
    stack = [(doc, 0)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        if isinstance(value, dict):
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, list):
            stack.extend((v, depth + 1) for v in value)
    return False


def read_json(path: str | Path, kind: str = "hepfmt result") -> object:
    """The JSON document at ``path``, read bounded (:func:`read_bounded`) and nested at most
    :data:`MAX_DEPTH` levels; else an :class:`InputError` naming the file and saying what it
    should have been (``kind``). Every side file hepfmt reads comes through here."""
    data = read_bounded(path, MAX_BYTES, kind)
    try:
        doc = json.loads(data)
    except RecursionError:
        raise InputError(path, f"not {_a(kind)} (nested too deeply)") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputError(path, f"not {_a(kind)} (no JSON: {exc})") from None
    if _too_deep(doc):
        raise InputError(path, f"not {_a(kind)} (nested deeper than {MAX_DEPTH} levels)")
    return doc


def load(path: str | Path, keys: Iterable[str], kind: str = "hepfmt result") -> dict:
    """The JSON object at ``path``, which must hold every one of ``keys``; ``kind`` says in the
    error what the file should have been."""
    doc = read_json(path, kind)
    if not isinstance(doc, dict):
        raise InputError(path, f"not {_a(kind)} (not a JSON object)")
    missing = [k for k in keys if k not in doc]
    if missing:
        raise InputError(path, f"not a complete {kind} (no {', '.join(missing)})")
    return doc


#: JSON's types for the names a record's fields are declared with (``float`` takes an int too:
#: JSON writes 1000.0 as 1000 in some writers)
_DECLARED = {"int": (int,), "float": (int, float), "str": (str,), "bool": (bool,),
             "dict": (dict,), "list": (list,), "None": (type(None),)}


def _fits(value: object, declared: str) -> bool:
    """Whether a JSON value is of a field's declared type (``float | None``, ``list[dict]``:
    the outer type only); a type this check does not know passes."""
    for part in declared.split("|"):
        base = part.split("[", 1)[0].strip()
        types = _DECLARED.get(base)
        if types is None:
            return True
        if isinstance(value, bool) and base in ("int", "float"):
            continue  # JSON's true is no number
        if isinstance(value, types):
            return True
    return False


def _json_type(value: object) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
             int: "an integer", float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def _number(path: str | Path, kind: str, key: str, value: object, least: float,
            most: float = math.inf, strictly: bool = False) -> None:
    """``value`` is a finite number of at least (above, ``strictly``) ``least`` and at most
    ``most``; else an :class:`InputError` naming ``path`` and ``key``."""
    try:  # an integer of 400 digits is too large for a float: no size either
        number = float(value) if isinstance(value, int | float) else math.nan
    except OverflowError:
        number = math.inf
    ok = (not isinstance(value, bool) and math.isfinite(number)
          and (number > least if strictly else number >= least) and number <= most)
    if not ok:
        bound = f"above {least:g}" if strictly else f"at least {least:g}"
        if most < math.inf:
            bound += f" and at most {most:,.0f}"
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
        raise InputError(path, f"not {_a(kind)}: key {key!r} is {shown}, not a finite number "
                               f"{bound}")


#: What a source's sidecar holds (hepfmt.samples.source.write_sidecar), each key read by a
#: later stage: the naive bytes a size is normalised by, the counts and checksums a read is
#: proven against, the schema the readers are given.
SIDECAR_KEYS = ("sample", "n_events", "naive_bytes", "naive_bytes_by_group",
                "naive_bytes_by_branch", "checksums", "schema")
SIDECAR_KIND = "source sidecar (from 'hepfmt generate' or 'hepfmt import')"


def sidecar(path: str | Path) -> dict:
    """A source's sidecar, read bounded and checked: its values of the types and ranges its
    readers take them in (a count a non-negative integer; a branch's naive bytes at most 8
    per value it holds, so a sidecar cannot claim 10^300 bytes), every branch of the schema
    with its checksum and naive bytes; else an :class:`InputError` naming the file and key."""
    kind = SIDECAR_KIND
    doc = load(path, SIDECAR_KEYS, kind)
    types = {"sample": str, "naive_bytes_by_group": dict, "naive_bytes_by_branch": dict,
             "checksums": dict, "schema": list}
    for key, want in types.items():
        if not isinstance(doc[key], want):
            raise InputError(path, f"not {_a(kind)}: key {key!r} is {_json_type(doc[key])}")
    if not isinstance(doc["n_events"], int) or isinstance(doc["n_events"], bool):
        raise InputError(path, f"not {_a(kind)}: key 'n_events' is {_json_type(doc['n_events'])}")
    _number(path, kind, "n_events", doc["n_events"], 0)
    for i, b in enumerate(doc["schema"]):
        if not (isinstance(b, dict) and isinstance(b.get("name"), str)
                and isinstance(b.get("dtype"), str)):
            raise InputError(path, f"not {_a(kind)}: key 'schema[{i}]' is no branch (an object "
                                   "with a name and a dtype)")
        name = b["name"]
        check = doc["checksums"].get(name)
        ints = isinstance(check, list) and bool(check) and all(
            isinstance(x, int) and not isinstance(x, bool) for x in check)
        if not (ints and check[0] >= 0):
            raise InputError(path, f"not {_a(kind)}: key 'checksums.{name}' is no checksum "
                                   "(an array of integers, the count of values first)")
        if len(check) != len(EMPTY):
            raise InputError(path, f"key 'checksums.{name}' has {len(check)} fields, not "
                                   f"{len(EMPTY)}: written by an older hepfmt, whose proof saw "
                                   "neither order nor type; make the sample again")
        _number(path, kind, f"naive_bytes_by_branch.{name}",
                doc["naive_bytes_by_branch"].get(name), 0, 8 * check[0])
    for name, n in doc["naive_bytes_by_group"].items():
        _number(path, kind, f"naive_bytes_by_group.{name}", n, 0)
    total = sum(doc["naive_bytes_by_branch"][b["name"]] for b in doc["schema"])
    _number(path, kind, "naive_bytes", doc["naive_bytes"], 0)
    if not math.isclose(doc["naive_bytes"], total, rel_tol=1e-9, abs_tol=1e-6):
        raise InputError(path, f"not {_a(kind)}: key 'naive_bytes' is {doc['naive_bytes']:g}, "
                               f"its branches' (naive_bytes_by_branch) sum {total:g}")
    return doc


def required(cls: type) -> tuple[str, ...]:
    """The fields of a dataclass without a default: the keys every record of it holds."""
    return tuple(f.name for f in fields(cls)
                 if f.default is MISSING and f.default_factory is MISSING)


@dataclass(frozen=True, kw_only=True)
class Record:
    """A record's common part: the provenance of the process that made it."""

    KIND: ClassVar[str] = "hepfmt result"
    provenance: dict

    @classmethod
    def required(cls) -> tuple[str, ...]:
        return required(cls)

    @classmethod
    def load(cls, path: str | Path, checked: bool = True) -> Self:
        """The record at ``path``, read bounded (:func:`read_json`), each key of the type its
        field declares, then checked (:meth:`check`; unless not ``checked``, for a caller that
        checks first what it knows better); else an :class:`InputError` naming the file and the
        key (a string where a mapping belongs would fail far from here, as a
        ``TypeError: string indices must be integers``)."""
        doc = load(path, cls.required(), cls.KIND)
        known = {f.name: str(f.type) for f in fields(cls)}
        for name, declared in known.items():
            if name in doc and not _fits(doc[name], declared):
                raise InputError(path, f"not a {cls.KIND}: key {name!r} is "
                                       f"{_json_type(doc[name])}, not {declared}")
        try:
            record = cls(**{k: v for k, v in doc.items() if k in known})
        except (TypeError, ValueError) as exc:
            raise InputError(path, f"not a {cls.KIND} ({exc})") from exc
        if checked:
            record.check(path)
        return record

    def check(self, path: str | Path) -> None:
        """The ranges of a record's values and the relations between its keys, beyond their
        types (none for a record in general); an :class:`InputError` naming ``path`` and the
        key."""

    def as_dict(self) -> dict:
        return asdict(self)

    def write(self, path: str | Path) -> dict:
        """Write atomically (nothing half-written is ever a record); the dict written."""
        doc = self.as_dict()
        write_json(path, doc)
        return doc


@dataclass(frozen=True, kw_only=True)
class FileRecord(Record):
    """What every record of one written file says about it: which file of the grid it is."""

    file: str = ""
    sample: str
    process: str
    format: str  # the config's name of the format
    adapter: str = ""  # the adapter (hepfmt.formats); older records: the format's name
    variant: str
    cluster_size: int
    n_events: int

    def __post_init__(self) -> None:
        if not self.adapter:
            object.__setattr__(self, "adapter", self.format)

    def identity(self) -> dict:
        """The columns every table row of this file starts with."""
        return {"sample": self.sample, "process": self.process, "format": self.format,
                "adapter": self.adapter, "variant": self.variant,
                "cluster_size": self.cluster_size, "n_events": self.n_events}


@dataclass(frozen=True, kw_only=True)
class SizeRecord(FileRecord):
    """``hepfmt convert --size-output``: a written file's size, bytes per branch and group,
    its layout, and the readers proven on it (hepfmt.measure.sizes)."""

    KIND: ClassVar[str] = "size record (from 'hepfmt convert')"
    file_bytes: int
    naive_bytes: float
    normalized_size: float
    normalized_size_no_triggers: float | None = None
    options: dict = field(default_factory=dict)
    verified: bool = True
    unverifiable: str | None = None
    proofs: dict = field(default_factory=dict)
    digest: str = ""
    zip_bytes_by_group: dict = field(default_factory=dict)
    naive_bytes_by_group: dict = field(default_factory=dict)
    zip_bytes_by_branch: dict = field(default_factory=dict)
    layout: dict = field(default_factory=dict)

    def check(self, path: str | Path) -> None:
        """Sizes positive and finite, the compressed bytes of the branches within the file's,
        the naive bytes those of its groups summed, each proof a passed or a failed one."""
        kind = self.KIND
        _number(path, kind, "file_bytes", self.file_bytes, 1)
        _number(path, kind, "n_events", self.n_events, 1)
        _number(path, kind, "cluster_size", self.cluster_size, 1)
        _number(path, kind, "naive_bytes", self.naive_bytes, 0, strictly=True)
        for name, n in self.zip_bytes_by_branch.items():
            _number(path, kind, f"zip_bytes_by_branch.{name}", n, 0, self.file_bytes)
        for key, by in (("zip_bytes_by_group", self.zip_bytes_by_group),
                        ("naive_bytes_by_group", self.naive_bytes_by_group)):
            for name, n in by.items():
                _number(path, kind, f"{key}.{name}", n, 0)
        groups = sum(self.naive_bytes_by_group.values())
        if self.naive_bytes_by_group and not math.isclose(groups, self.naive_bytes,
                                                          rel_tol=1e-9):
            raise InputError(path, f"not {_a(kind)}: key 'naive_bytes' is {self.naive_bytes:g}, "
                                   f"its groups' (naive_bytes_by_group) sum {groups:g}")
        for reader, proof in self.proofs.items():
            if not (isinstance(proof, dict) and isinstance(proof.get("ok"), bool)
                    and (proof["ok"] or "error" in proof)):
                raise InputError(path, f"not {_a(kind)}: key 'proofs.{reader}' is not a proof "
                                       "(an object with ok, and error where not ok)")

    @classmethod
    def load_for(cls, path: str | Path, measured: str | Path, naive_bytes: float,
                 digest_of: Callable[[Path], str] | None = None) -> Self:
        """The size record at ``path`` of the file ``measured``, whose source holds
        ``naive_bytes``: a record that names another file (unless ``measured`` is a copy of
        it, the bytes of the record's digest: ``digest_of``), describes a file of another size,
        or claims other naive bytes than the source's (which a table would divide by) is
        refused naming the record and the key."""
        record = cls.load(path, checked=False)  # which file first, then the record's sense
        _number(path, cls.KIND, "naive_bytes", record.naive_bytes, 0, strictly=True)
        measured = Path(measured)
        try:  # a record from before it named its file (no key 'file') is taken by its size
            same = not record.file or os.path.samefile(record.file, measured)
        except OSError:  # the file it names is gone (or is named from another directory)
            same = False
        if not same and record.digest and digest_of is not None:  # a copied results tree
            same = record.file_bytes == measured.stat().st_size \
                and digest_of(measured) == record.digest
        if not same:
            raise InputError(path, f"key 'file' names {record.file!r}, not {str(measured)!r}, "
                                   "the file being measured")
        size = measured.stat().st_size
        if record.file_bytes != size:
            raise InputError(path, f"key 'file_bytes': describes a file of {record.file_bytes} "
                                   f"bytes, {measured} has {size}")
        if not math.isclose(record.naive_bytes, naive_bytes, rel_tol=1e-9):
            raise InputError(path, f"key 'naive_bytes' is {record.naive_bytes:g}, the source "
                                   f"of {measured} holds {naive_bytes:g}")
        record.check(path)
        return record


def own_peak_bytes(scans: list[dict], baseline: int) -> int | None:
    """The reads' own peak memory: the most any scan's resident set rose above where the reads
    started from, each scan's high-water mark (reset at its start) less the lower of the
    process's resident set before its first read and at the scan's start. The lower one: memory
    resident before the first read that the process gave back later (garbage a system
    allocator returns once a read frees its arrays) is nobody's read, and would otherwise make
    a read's own peak negative. None where the scans do not carry both (an older record)."""
    own = [int(r["scan_peak_rss_bytes"]) - min(baseline, int(r["scan_start_rss_bytes"]))
           for r in scans if r.get("scan_peak_rss_bytes") is not None
           and r.get("scan_start_rss_bytes") is not None]
    return max(own) if own else None


@dataclass(frozen=True, kw_only=True)
class ReadRow:
    """One read of a :class:`ReadRecord`: one reader × selection × threads × cache mode, its
    figures and its timed repetitions (made by hepfmt.measure.reads ``_read_record``).

    The keys without a default are those every read record has held; the others a record from
    an older hepfmt may lack (None then, or what its repetitions give: :meth:`from_dict`).
    """

    KIND: ClassVar[str] = "read row (of a 'hepfmt measure' record)"
    #: keys a new row holds only sometimes, left out of :meth:`as_dict` when None
    #: (``setup_raw_s``: only a read whose set-up the marks separate, hepfmt.stats.parts)
    SOMETIMES: ClassVar[tuple[str, ...]] = ("setup_raw_s",)
    #: what a record from before the read's own peak memory measured it with
    OLD_RSS_METHOD: ClassVar[str] = "ru_maxrss (lower bound)"

    # what was read, and how
    reader: str
    library: str | None = None
    selection: str
    n_branches: int | None = None
    mode: str
    threads: int
    cold_verified: bool | None  # None: a warm read
    proven_by: str | None = None  # "convert" or "measure": where the reader was proven
    selection_zip_bytes: int | None = None
    selection_naive_bytes: float | None = None
    selection_values: int | None = None
    # the time: hepfmt.stats.summarize of the repetitions, and the median's interval
    median_s: float
    q25_s: float | None = None
    q75_s: float | None = None
    iqr_s: float
    std_s: float | None = None
    min_s: float | None = None
    n: int
    median_lo_s: float | None = None
    median_hi_s: float | None = None
    median_coverage: float | None = None
    # how the repetitions stopped (hepfmt.measure.timing.interleaved)
    n_repetitions: int | None = None
    precision_target: float | None = None
    budget_s: float | None = None
    precision_reached: bool | None = None
    # rates over the whole read
    mb_per_s_compressed: float
    mb_per_s_naive: float
    events_per_s: float
    # the read's parts (hepfmt.stats.parts_of) and its steady rate in bytes
    open_s: float | None = None
    setup_s: float | None = None
    setup_raw_s: float | None = None
    events_per_s_steady: float | None = None
    chunks: int | None = None
    throughput_method: str | None = None
    mb_per_s_steady_compressed: float | None = None
    mb_per_s_steady_naive: float | None = None
    # the process's first read (the smallest selection's, warm rows only)
    first_read_s: float | None = None
    first_read_minflt: int | None = None
    # medians over the repetitions
    cpu_median_s: float
    minflt_median: float | None = None
    # the CPU split (hepfmt.measure.timing.usage_split): None in a record from before it
    user_median_s: float | None = None
    sys_median_s: float | None = None
    wait_median_s: float | None = None
    majflt_median: float | None = None
    disk_read_bytes_median: float
    # memory (hepfmt.measure.reads.start_read_peak)
    peak_rss_bytes: int
    baseline_rss_bytes: int
    rss_over_baseline_bytes: int | None = None
    rss_method: str = OLD_RSS_METHOD
    # the selection's codec bound and the steady rate's fraction of it (hepfmt.stats)
    bound_events_per_s_new: float | None = None
    bound_events_per_s_reused: float | None = None
    fraction_of_bound_new: float | None = None
    fraction_of_bound_reused: float | None = None
    repetitions: list[dict]

    def __post_init__(self) -> None:
        own = own_peak_bytes(self.repetitions, self.baseline_rss_bytes)
        if own is not None:  # the one definition, also for a record made before it
            object.__setattr__(self, "rss_over_baseline_bytes", own)
        elif self.rss_over_baseline_bytes is None:  # a record from before the read's own peak
            object.__setattr__(self, "rss_over_baseline_bytes",
                               self.peak_rss_bytes - self.baseline_rss_bytes)

    @classmethod
    def required(cls) -> tuple[str, ...]:
        return required(cls)

    @classmethod
    def numbers(cls) -> tuple[str, ...]:
        """The fields that are numbers (None where a row has none: NaN in a table)."""
        return tuple(f.name for f in fields(cls)
                     if str(f.type).split(" | ")[0] in ("int", "float"))

    @classmethod
    def new(cls, **values: object) -> Self:
        """A row as a measurement makes it: every key given (but :attr:`SOMETIMES`), so that
        the writer cannot leave one out; a key not a field is an error too (``TypeError``)."""
        missing = [f.name for f in fields(cls)
                   if f.name not in values and f.name not in cls.SOMETIMES]
        if missing:
            raise TypeError(f"a read row needs {', '.join(missing)}")
        return cls(**values)

    @classmethod
    def from_dict(cls, d: dict, where: str | Path = "read record") -> Self:
        """A row as a record holds it (``where``: the record, for the error). Keys it does not
        know are ignored; a key without a default it lacks is an :class:`InputError` naming
        it; the parts, the median's interval and the repetitions' count a record from before
        them lacks are taken from its repetitions."""
        if not isinstance(d, dict):
            raise InputError(where, f"not a {cls.KIND} (not a JSON object)")
        missing = [k for k in cls.required() if k not in d]
        if missing:
            raise InputError(where, f"not a complete {cls.KIND} (no {', '.join(missing)})")
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in d.items() if k in known}
        reps = values["repetitions"]
        try:
            derived = {"n_repetitions": len(reps), **parts_of(reps)}
            if reps:
                ci = median_interval([r["wall_s"] for r in reps])
                derived.update(median_lo_s=ci["lo_s"], median_hi_s=ci["hi_s"],
                               median_coverage=ci["coverage"])
            return cls(**{**derived, **values})
        except (TypeError, ValueError, KeyError, AttributeError) as exc:
            raise InputError(where, f"not a {cls.KIND} ({exc!r})") from exc

    def as_dict(self) -> dict:
        """The row as a record holds it (the keys of :attr:`SOMETIMES` only where set)."""
        out = asdict(self)
        for k in self.SOMETIMES:
            if out[k] is None:
                del out[k]
        return out


@dataclass(frozen=True, kw_only=True)
class ReadRecord(FileRecord):
    """``hepfmt measure``: one row per reader × selection × threads × cache mode
    (:class:`ReadRow`, hepfmt.measure.reads; held as written, made typed by :meth:`rows`),
    and each selection's codec bound."""

    KIND: ClassVar[str] = "read measurement (from 'hepfmt measure')"
    reads: list[dict]
    bounds: dict = field(default_factory=dict)

    def rows(self, where: str | Path) -> list[ReadRow]:
        """The reads as :class:`ReadRow` (``where``: the record's path, for an error)."""
        return [ReadRow.from_dict(r, where) for r in self.reads]


@dataclass(frozen=True, kw_only=True)
class StorageRecord(FileRecord):
    """``hepfmt storage``: reads of one file on each storage profile
    (hepfmt.measure.onstorage), and the profiles and reads that could not run, with why."""

    KIND: ClassVar[str] = "storage measurement (from 'hepfmt storage')"
    file_bytes: int
    profiles: dict
    skipped_reads: list
    reads: list[dict]


@dataclass(frozen=True, kw_only=True)
class QueryRecord(FileRecord):
    """``hepfmt query``: one row per task × engine × cache mode (hepfmt.measure.workload);
    per engine, its process's first run timed (``first_histogram``: task, wall_s, cpu_s, the
    file's resident and total pages; empty in a record from before it)."""

    KIND: ClassVar[str] = "query measurement (from 'hepfmt query')"
    threads: int = 1
    scheduler: str = ""
    queries: list[dict]
    first_histogram: dict = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class PairRecord(Record):
    """``hepfmt pair``: both sides of one ROOT / Parquet pairing read in one measurement
    (hepfmt.measure.pairs), per selection its rounds and repeat pairs; ``summary`` is
    :func:`hepfmt.paired.summarize_pair` of the rest."""

    KIND: ClassVar[str] = "paired measurement (from 'hepfmt pair')"
    pair: str
    sample: str
    process: str
    cluster_size: int
    n_events: int
    threads: int
    sides: dict
    selections: list[dict]
    file_events: int = 1_000_000
    max_load: float | None = None
    stopping: dict = field(default_factory=dict)
    rounds: int | None = None
    summary: dict = field(default_factory=dict)
