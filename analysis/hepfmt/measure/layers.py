"""Where a read spends its time, layer by layer (``hepfmt bench layers``).

Each reader's scans run in a fresh process that sets itself up and scans once untimed, then
tells the parent it is ready; the parent attaches ``perf record`` to it for the profiled scans
only (so imports, JIT and the first read are not in the profile), and sorts the samples'
symbols into the layers of the reader's library (:data:`TABLES`: ROOT's, and Arrow C++'s
Parquet reader for pyarrow and the registry's other pyarrow readers). The child counts its own
CPU time and page faults over the same scans, so each layer gets seconds per read beside its
share. Next to the profile, from the same file and selection:

* the codec bound (:mod:`.bound`): what decompression alone costs, and how much of a read a new
  zstd context per block costs (the bound with a new context minus the bound with one reused);
  beside each reader's decompression layer it says how much of that layer is the codec itself;
* (TTree) ROOT's own bulk call for jagged branches (``TBranch::GetEntriesSerialized``) on every
  basket of every jagged branch: how many it refuses and what it says, the reason the columnar
  reader takes jagged baskets with ``TBranch::GetBasket`` instead.
"""

from __future__ import annotations

import json
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from hepfmt import formats
from hepfmt.errors import InputError, VerificationError
from hepfmt.formats.base import Marks
from hepfmt.measure import bound, memcap

Layers = tuple[tuple[str, str], ...]

#: Layers of a read through ROOT, each a pattern over the demangled symbol (and the library) of
#: a sample; the first that matches takes it. Decompression is the codecs ROOT bundles (zstd,
#: LZ4, zlib, lzma) and their framing; branch reading the TTree I/O classes a GetEntry goes
#: through; proxies TTreeReader's; actions RDataFrame's event loop, its column readers and the
#: actions it calls; the reader's own loop the hepfmt code around the values (the checksum-free
#: ``Keep`` operation, the columnar reader's byte swap); set-up what a reader does once per
#: file and branch (formatting and comparing names, looking up classes), which short files
#: feel; memory the allocator, copies and the kernel's page faults.
LAYERS: Layers = (
    ("decompression", r"ZSTD_|HUF_|FSE_|R__unzip|LZ4_|inflate|adler32|crc32|lzma_|XXH|"
                      r"libz\.so|liblzma|libzstd|liblz4"),
    ("RDataFrame actions and column readers", r"ROOT::Detail::RDF|ROOT::Internal::RDF|"
                                              r"ROOT::RDF|RLoopManager|RDataFrame|hepfmt::book|"
                                              r"VecOps::RVec"),
    ("reader proxies (TTreeReader)", r"TTreeReader|TBranchProxy|ROOT::Internal::TTreeReader|"
                                     r"ROOT::Detail::TBranchProxy|TNotifyLink|"
                                     r"TObjectArrayReader|TDynamicArrayReader|"
                                     r"TArrayProxy|TCollectionProxy"),
    ("per-entry branch reading (TTree I/O)", r"TBranch|TLeaf|TBuffer|TBasket|TTree::|TTreeCache|"
                                             r"TFile|frombuf|TStreamerInfo|TKey|TObjArray"),
    ("RNTuple pages and fields (unpacking, RVecs)", r"ROOT::Internal::RPage|"
                                                    r"ROOT::Internal::RCluster|ROOT::R\w*Field|"
                                                    r"RColumnElement|ROOT::Internal::RColumn|"
                                                    r"RNTuple|DestroyRVec|ROOT::Experimental|"
                                                    r"libROOTNTuple"),
    ("the reader's own loop (hepfmt)", r"hepfmt::"),
    ("per-file set-up (names, strings, lookups)", r"printf|__parse_one_spec|_IO_|strcmp|strlen|"
                                                   r"strchr|TString|TClass|TROOT|THashList|"
                                                   r"TList|TCling|cling|basic_string|hash"),
    ("memory (allocation, copies, page faults)", r"malloc|free|memcpy|memmove|memset|"
                                                 r"operator new|operator delete|_int_|"
                                                 r"page_fault|clear_page|cfree|\[k\]"),
)

#: Layers of a read through Arrow C++'s Parquet reader (libparquet, libarrow and the codecs it
#: links), as pyarrow 26 names them. Levels are the RLE/bit-packed definition and repetition
#: levels and what turns them into list offsets and validity bitmaps (``DefRepLevelsToListInfo``,
#: ``GreaterThanBitmap``, the record reader's ``DelimitRecords``; unpacking at 16 bits, the
#: levels' width); boolean unpacking the bit-packed BOOLEAN values (unpacking to ``bool`` and at
#: width 1, parquet physical type 0: a Parquet file of NanoAOD's 1003 boolean branches alone
#: shows these and no others); page decoding the page headers (Thrift) and value decoders;
#: array building what hands the decoded values over as Arrow arrays (``TransferColumnData``
#: is where booleans are packed from a byte to a bit each); allocation the memory pool
#: (mimalloc ``mi_``, jemalloc ``je_``, the system's malloc) and user-space copies; the kernel's
#: share apart: reading the file through the page cache, page faults (``clear_page`` zeroing
#: memory the pool takes fresh from the kernel), the rest of the kernel.
PARQUET_LAYERS: Layers = (
    ("decompression (zstd, snappy, lz4, zlib)", r"ZSTD_|HUF_|FSE_|ZSTDCodec|XXH|libzstd|"
                                                r"snappy|Snappy|LZ4_|Lz4|liblz4|inflate|"
                                                r"adler32|crc32|GZipCodec|libz\.so|Brotli"),
    ("definition/repetition levels", r"LevelDecoder|RleDecoder|RleBitPacked|DefRepLevels|"
                                     r"DefLevels|RepLevels|LevelsTo|GreaterThanBitmap|"
                                     r"FindMinMax|DelimitRecords|ReadLevels|SkipLevels|"
                                     r"GetBatch<(unsigned )?short>|unpack\w*<unsigned short>|"
                                     r"LEB128"),
    ("boolean unpacking", r"<bool>|Boolean|unpack1_32|ForWidth<unsigned int, 1>|"
                          r"\(parquet::Type::type\)0>"),
    ("page decoding (headers, values)", r"parquet::\S*Decoder|PageReader|::Decode\b|"
                                        r"DecodeSpaced|ByteStreamSplit|[Tt]hrift|PageHeader|"
                                        r"DataPage|DecompressIfNeeded|ReadNewPage|"
                                        r"ColumnReaderImpl|bpacking|[Uu]npack"),
    ("Arrow array building", r"arrow::\S*Builder|ArrayData|RecordReader|Transfer\w*|"
                             r"ValidateArray|ListArray|ChunkedArray|arrow::Table|RecordBatch|"
                             r"LeafReader|ListReader|StructReader|FileReaderImpl|ReadColumn|"
                             r"DecodeRowGroups|arrow::\w*Array\b"),
    ("allocation and copies (pool, malloc, memcpy)", r"\bmi_|_mi_|mimalloc|je_|jemalloc|"
                                                     r"arrow::\S*Pool|PoolBuffer|"
                                                     r"ResizableBuffer|arrow::Buffer\b|malloc|"
                                                     r"free\b|cfree|_int_|unlink_chunk|memcpy|"
                                                     r"memmove|memset|operator new|"
                                                     r"operator delete|\bmmap|munmap|madvise"),
    ("kernel: file reads (page cache)", r"\[k\].*(copy_to_iter|copy_user|filemap|vfs_read|"
                                        r"pread|ext4_|xfs_|iomap|read_iter|fsnotify)"),
    ("kernel: page faults (fresh memory)", r"\[k\].*(page|fault|folio|pte|pmd|pud|mm_|memcg|"
                                           r"mem_cgroup|lru|tlb|vma|mas_|zap|rmap|anon|"
                                           r"huge|swap|rmqueue|alloc_|charge)"),
    ("kernel: other", r"\[k\]"),
    ("Python and the reader's own loop (hepfmt)", r"libpython|\.cpython-|hepfmt::|_Py|"
                                                  r"\bPy[A-Z]|gc_collect|visit_decref|"
                                                  r"visit_reachable|unicodekeys|insertdict"),
    ("per-file set-up (metadata, schema, names)", r"MetaData|Metadata|SchemaDescriptor|"
                                                  r"ColumnDescriptor|schema::|Statistics|"
                                                  r"ApplicationVersion|basic_string|ld-linux|"
                                                  r"_dl_|strcmp|strlen|opentelemetry|"
                                                  r"_Hashtable|_Prime_rehash|dyncast"),
)


@dataclass(frozen=True)
class LayerTable:
    """The layers of one library's reads, and the ``Reader.library`` names it covers."""

    name: str
    libraries: frozenset[str]
    layers: Layers
    #: its reads allocate from an Arrow memory pool, which the report names
    arrow_pool: bool = False


#: Every library whose reads are profiled by layer; a reader of another library is refused.
TABLES: tuple[LayerTable, ...] = (
    LayerTable("ROOT's I/O", frozenset({"root"}), LAYERS),
    LayerTable("Arrow C++'s Parquet reader", frozenset({"pyarrow"}), PARQUET_LAYERS, True),
)
OTHER = "other"
#: A zstd decompression context made or freed: once per page (Arrow's one-shot
#: ``ZSTD_decompress``) or per frame (ROOT's ``R__unzip``); its share is what reusing one
#: context would save, taken from the read itself rather than from the bound.
ZSTD_CONTEXT = r"ZSTD_(create|free|init)DCtx|ZSTD_initDCtx_internal"
#: Seconds of profiled scans per reader (at least one scan).
PROFILE_S = 3.0
#: perf's sampling frequency (Hz).
FREQUENCY = 999
#: Symbols listed per reader, largest first: what a library's developer would look at first.
TOP_SYMBOLS = 12


@dataclass(frozen=True)
class LayerSpec:
    path: str
    module: str
    reader: str
    branches: list[str]
    seconds: float = PROFILE_S
    arrow_pool: bool = False


def table_for(library: str) -> LayerTable | None:
    """The layer table of a reader's library (None: its reads are not sorted into layers)."""
    return next((t for t in TABLES if library in t.libraries), None)


def profiled_readers(adapter: str) -> list[str]:
    """The format's readers whose library has a layer table, in the registry's order."""
    return [n for n, r in formats.get(adapter).readers.items() if table_for(r.library)]


def _samples(report: str) -> Iterator[tuple[float, str]]:
    """(share, ``library [.] symbol``) of each percent line of a ``perf report``."""
    for line in report.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+(.*)$", line)
        if m:
            yield float(m.group(1)) / 100, " ".join(m.group(2).split())


def layer_of(sample: str, layers: Layers = LAYERS) -> str:
    """The first layer whose pattern the sample's library and symbol match."""
    return next((name for name, pat in layers if re.search(pat, sample)), OTHER)


def classify(report: str, layers: Layers = LAYERS,
             ) -> tuple[dict[str, float], list[tuple[float, str]]]:
    """Shares of each layer in ``perf report --stdio --sort dso,sym`` output (percent lines),
    and the largest samples no layer took (share, library and symbol)."""
    shares: dict[str, float] = {name: 0.0 for name, _ in layers} | {OTHER: 0.0}
    others: list[tuple[float, str]] = []
    for share, rest in _samples(report):
        layer = layer_of(rest, layers)
        shares[layer] += share
        if layer == OTHER:
            others.append((share, rest))
    total = sum(shares.values())
    if total:
        shares = {k: v / total for k, v in shares.items()}
        others = [(v / total, n) for v, n in others]
    return shares, sorted(others, reverse=True)[:5]


def largest(report: str, layers: Layers, n: int = TOP_SYMBOLS) -> list[tuple[float, str, str]]:
    """The ``n`` largest symbols of the profile: (share, ``library [.] symbol``, layer)."""
    samples = list(_samples(report))
    total = sum(s for s, _ in samples) or 1.0
    return [(s / total, name, layer_of(name, layers))
            for s, name in sorted(samples, reverse=True)[:n]]


def _usage() -> tuple[float, float, int, int]:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime, r.ru_stime, r.ru_minflt, r.ru_majflt


def _pool() -> str | None:
    """The Arrow memory pool the reader allocates from (None: Arrow is not loaded)."""
    if "pyarrow" not in sys.modules:
        return None
    return sys.modules["pyarrow"].default_memory_pool().backend_name


def _child(spec: LayerSpec) -> None:
    """The profiled process: set up, scan once untimed, then scan for ``seconds`` once the
    parent says go (a line on stdin); report scans, seconds, events, its CPU time and page
    faults over those scans, and the Arrow pool in use on stdout."""
    memcap.apply()
    reader = formats.load(spec.module).readers[spec.reader]
    reader.prepare(1)
    reader.scan(spec.path, spec.branches, 1, Marks())
    print("ready", flush=True)
    sys.stdin.readline()
    before = _usage()
    scans, events, start = 0, 0, time.perf_counter()
    while scans == 0 or time.perf_counter() - start < spec.seconds:
        events += reader.scan(spec.path, spec.branches, 1, Marks())
        scans += 1
    seconds = time.perf_counter() - start
    user, sys_s, minflt, majflt = (b - a for a, b in zip(before, _usage(), strict=True))
    print(json.dumps({"scans": scans, "seconds": seconds, "events": events, "user_s": user,
                      "sys_s": sys_s, "minflt": minflt, "majflt": majflt,
                      "pool": _pool() if spec.arrow_pool else None}),
          flush=True)


def _record(spec: LayerSpec, perf: str, data: Path, timeout: float) -> dict:
    """Run the child, attach ``perf record`` once it is ready; what the child reports."""
    env = memcap.child_env(memcap.cap_for(spec.path))
    child = subprocess.Popen([sys.executable, "-m", __name__, json.dumps(asdict(spec))],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    try:
        if child.stdout.readline().strip() != "ready":
            raise InputError(spec.path, f"{spec.reader} could not be set up to scan it")
        rec = subprocess.Popen([perf, "record", "-F", str(FREQUENCY), "-p", str(child.pid),
                                "-o", str(data), "-q"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(0.3)  # perf attaches before the first profiled scan
        child.stdin.write("go\n")
        child.stdin.flush()
        line = child.stdout.readline()
        rec.send_signal(signal.SIGINT)
        _, err = rec.communicate(timeout=60)
        child.wait(timeout=timeout)
    finally:
        if child.poll() is None:
            child.kill()
    if not line:
        raise InputError(spec.path, f"{spec.reader} stopped during its profiled scans")
    if not data.exists():
        raise VerificationError(spec.path, f"perf recorded nothing ({err.strip()[-200:]})")
    return json.loads(line)


def profile(spec: LayerSpec, layers: Layers = LAYERS, timeout: float = 1800.0) -> dict:
    """One reader's profiled scans: their events/s, CPU time and faults per read, each layer's
    share of the samples and the largest symbols."""
    perf = shutil.which("perf")
    if perf is None:
        raise VerificationError(spec.path, "perf is not installed (Debian: linux-perf)")
    with tempfile.TemporaryDirectory(prefix="hepfmt-layers-") as tmp:
        data = Path(tmp) / "perf.data"
        done = _record(spec, perf, data, timeout)
        text = subprocess.run([perf, "report", "-i", str(data), "--stdio", "--no-children",
                               "--sort", "dso,sym", "--percent-limit", "0.01"],
                              capture_output=True, text=True, check=True).stdout
    shares, others = classify(text, layers)
    scans = done["scans"]
    return {"reader": spec.reader, "scans": scans, "pool": done.get("pool"),
            "events_per_s": done["events"] / done["seconds"],
            "wall_s": done["seconds"] / scans, "user_s": done["user_s"] / scans,
            "sys_s": done["sys_s"] / scans, "minflt": done["minflt"] / scans,
            "majflt": done["majflt"] / scans, "layers": shares, "largest_other": others,
            "largest": largest(text, layers),
            "zstd_context": sum(v for v, n in _samples(text) if re.search(ZSTD_CONTEXT, n))
            / (sum(v for v, _ in _samples(text)) or 1.0)}


def serialized_refusals(path: str) -> dict:
    """ROOT's GetEntriesSerialized on every jagged basket of a TTree: tried, refused, messages."""
    from hepfmt.formats.root.backend import READERS, TREE, root

    out = [str(x) for x in root(READERS).hepfmt.serialized_refusals(str(path), TREE)]
    return {"tried": int(out[0]), "refused": int(out[1]), "messages": out[2:]}


def _table(path: str, adapter: str, readers: list[str]) -> LayerTable:
    """The one layer table every reader asked for shares (refused: no table, or two)."""
    fmt = formats.get(adapter)
    unknown = [r for r in readers if r not in fmt.readers]
    if unknown:
        raise VerificationError(path, f"format {adapter} has no reader {unknown[0]!r}")
    tables = {}
    for r in readers:
        t = table_for(fmt.readers[r].library)
        if t is None:
            raise VerificationError(path, f"reader {r!r} ({fmt.readers[r].library}) has no "
                                          f"layer table; profiled: {profiled_readers(adapter)}")
        tables[t.name] = t
    if len(tables) > 1:
        raise VerificationError(path, f"readers {readers} need different layer tables "
                                      f"({', '.join(tables)}): profile them apart")
    return next(iter(tables.values()))


def bench(path: str, source: str, adapter: str, readers: list[str], branches: list[str],
          seconds: float = PROFILE_S) -> dict:
    """Every reader's layers on one file and selection, with the codec bound and (TTree) what
    ROOT's own jagged bulk call does on it."""
    from hepfmt.samples.source import read_source_meta

    table = _table(path, adapter, readers)
    n_events = int(read_source_meta(source)["n_events"])
    module = formats.entry(adapter).module
    rows = [profile(LayerSpec(str(path), module, r, branches, seconds, table.arrow_pool),
                    table.layers) for r in readers]
    return {"file": str(path), "adapter": adapter, "branches": len(branches),
            "n_events": n_events, "table": table.name,
            "layers": [name for name, _ in table.layers] + [OTHER], "rows": rows,
            "bound": bound.measure(path, module, branches, n_events),
            "serialized": serialized_refusals(path) if adapter == "ttree" else None}


def _bound_lines(result: dict) -> list[str]:
    """The codec bound, and beside it each reader's decompression layer and what a new zstd
    context per block costs its read."""
    b = result["bound"]
    if b.get("why_not"):
        return [f"codec bound: none ({b['why_not']})"]
    reused = b.get("events_per_s_reused")
    lines = [f"codec bound ({b['codec']}, {b['blocks']} blocks, {b['zipped_bytes']:,} bytes "
             f"to {b['unzipped_bytes']:,}): {b['events_per_s_new']:,.0f} events/s with a new "
             f"context per block" + (f", {reused:,.0f} with one reused" if reused else "")]
    zip_layer = result["layers"][0]  # every table's first layer is decompression
    for r in result["rows"]:
        cpu = (r["user_s"] + r["sys_s"]) * r["layers"][zip_layer]
        line = (f"  {r['reader']}: decompression {cpu:.3f} s per read in the profile; the "
                f"codec alone {b['new_s']:.3f} s (new context per block)")
        if b.get("reused_s"):
            line += f", {b['reused_s']:.3f} s (one reused)"
        lines.append(line)
        if r.get("zstd_context"):
            lines.append(f"  {r['reader']}: zstd contexts made and freed (ZSTD_createDCtx, "
                         f"ZSTD_freeDCtx) {r['zstd_context']:.1%} of the profile, "
                         f"{r['zstd_context'] * (r['user_s'] + r['sys_s']):.3f} s per read")
    if reused and b.get("new_s") and b.get("reused_s"):
        extra = (b["new_s"] - b["reused_s"]) / result["n_events"]  # seconds per event
        for r in result["rows"]:
            lines.append(f"  a new context per block costs {r['reader']} "
                         f"{extra * r['events_per_s']:.0%} of its read")
    return lines


def report(result: dict) -> str:
    """The bench as text: per reader its rate, CPU time and faults per read and pool; per
    layer each reader's share and seconds per read; the largest symbols; the bound."""
    layers, rows = result["layers"], result["rows"]
    lines = [f"{result['file']}: {result['branches']} branches, {result['n_events']} events; "
             f"layers of {result['table']}; profiled: the scans after one untimed scan in "
             f"the same process (repeat reads), perf at {FREQUENCY} Hz on every thread", "",
             "| reader | Arrow pool | profiled scans | events/s | wall s/read | user s/read | "
             "sys s/read | minor faults/read | major faults/read |", "|---" * 9 + "|"]
    for r in rows:
        lines.append(f"| {r['reader']} | {r['pool'] or '-'} | {r['scans']} | "
                     f"{r['events_per_s']:,.0f} | {r['wall_s']:.3f} | {r['user_s']:.3f} | "
                     f"{r['sys_s']:.3f} | {r['minflt']:,.0f} | {r['majflt']:,.0f} |")
    lines += ["", "| layer | " + " | ".join(f"{r['reader']} share | {r['reader']} CPU s/read"
                                            for r in rows) + " |",
              "|---" * (1 + 2 * len(rows)) + "|"]
    for k in layers:
        lines.append(f"| {k} | " + " | ".join(
            f"{r['layers'][k]:.1%} | {r['layers'][k] * (r['user_s'] + r['sys_s']):.3f}"
            for r in rows) + " |")
    lines.append("")
    for r in rows:
        lines.append(f"{r['reader']}: largest symbols (share of the profile, layer):")
        lines += [f"  {v:5.1%}  {n}  ({layer})" for v, n, layer in r["largest"]]
        lines.append(f"{r['reader']}: largest samples in no layer: " + "; ".join(
            f"{n} {v:.1%}" for v, n in r["largest_other"]))
    lines += ["", *_bound_lines(result)]
    s = result.get("serialized")
    if s:
        lines.append(f"TBranch::GetEntriesSerialized on the jagged branches: {s['refused']} of "
                     f"{s['tried']} baskets refused" + "".join(f"\n  ROOT: {m.strip()}"
                                                             for m in s["messages"]))
    return "\n".join(lines)


if __name__ == "__main__":  # the profiled process: python -m hepfmt.measure.layers SPEC
    _child(LayerSpec(**json.loads(sys.argv[1])))
