"""Where a read through ROOT spends its time, layer by layer (``hepfmt bench layers``).

Each reader's scans run in a fresh process that sets itself up and scans once untimed, then
tells the parent it is ready; the parent attaches ``perf record`` to it for the profiled scans
only (so imports, JIT and the first read are not in the profile), and sorts the samples' symbols
into :data:`LAYERS`. Next to the profile, from the same file and selection:

* the codec bound (:mod:`.bound`): what decompression alone costs, and how much of a read a new
  zstd context per block costs (the bound with a new context minus the bound with one reused);
* ROOT's own bulk call for jagged branches (``TBranch::GetEntriesSerialized``) on every basket of
  every jagged branch: how many it refuses and what it says, the reason the columnar reader
  takes jagged baskets with ``TBranch::GetBasket`` instead.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from analysis import formats
from analysis.errors import InputError, VerificationError
from analysis.formats.base import Marks
from analysis.measure import bound, memcap

#: Layers of a read, each a pattern over the demangled symbol (and the library) of a sample;
#: the first that matches takes it. Decompression is the codecs ROOT bundles (zstd, LZ4, zlib,
#: lzma) and their framing; branch reading the TTree I/O classes a GetEntry goes through;
#: proxies TTreeReader's; actions RDataFrame's event loop, its column readers and the
#: actions it calls; the reader's own loop the hepfmt code around the values (the checksum-free
#: ``Keep`` operation, the columnar reader's byte swap); set-up what a reader does once per file
#: and branch (formatting and comparing names, looking up classes), which short files feel;
#: memory the allocator, copies and the kernel's page faults.
LAYERS: tuple[tuple[str, str], ...] = (
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
OTHER = "other"
#: Seconds of profiled scans per reader (at least one scan).
PROFILE_S = 3.0
#: perf's sampling frequency (Hz).
FREQUENCY = 999


@dataclass(frozen=True)
class LayerSpec:
    path: str
    module: str
    reader: str
    branches: list[str]
    seconds: float = PROFILE_S


def classify(report: str) -> tuple[dict[str, float], list[tuple[float, str]]]:
    """Shares of each layer in ``perf report --stdio --sort dso,sym`` output (percent lines),
    and the largest samples no layer took (share, library and symbol)."""
    shares: dict[str, float] = {name: 0.0 for name, _ in LAYERS} | {OTHER: 0.0}
    others: list[tuple[float, str]] = []
    for line in report.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+(.*)$", line)
        if not m:
            continue
        share, rest = float(m.group(1)) / 100, m.group(2)
        layer = next((name for name, pat in LAYERS if re.search(pat, rest)), OTHER)
        shares[layer] += share
        if layer == OTHER:
            others.append((share, " ".join(rest.split())))
    total = sum(shares.values())
    if total:
        shares = {k: v / total for k, v in shares.items()}
        others = [(v / total, n) for v, n in others]
    return shares, sorted(others, reverse=True)[:5]


def _child(spec: LayerSpec) -> None:
    """The profiled process: set up, scan once untimed, then scan for ``seconds`` once the
    parent says go (a line on stdin); report scans, seconds and events on stdout."""
    memcap.apply()
    reader = formats.load(spec.module).readers[spec.reader]
    reader.prepare(1)
    reader.scan(spec.path, spec.branches, 1, Marks())
    print("ready", flush=True)
    sys.stdin.readline()
    scans, events, start = 0, 0, time.perf_counter()
    while scans == 0 or time.perf_counter() - start < spec.seconds:
        events += reader.scan(spec.path, spec.branches, 1, Marks())
        scans += 1
    print(json.dumps({"scans": scans, "seconds": time.perf_counter() - start,
                      "events": events}), flush=True)


def profile(spec: LayerSpec, timeout: float = 1800.0) -> dict:
    """One reader's profiled scans: their events/s and each layer's share of the samples."""
    perf = shutil.which("perf")
    if perf is None:
        raise VerificationError(spec.path, "perf is not installed (Debian: linux-perf)")
    env = {**os.environ, **memcap.child_env(memcap.cap_for(spec.path))}
    with tempfile.TemporaryDirectory(prefix="hepfmt-layers-") as tmp:
        data = Path(tmp) / "perf.data"
        child = subprocess.Popen([sys.executable, "-m", __name__, json.dumps(asdict(spec))],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                 env=env)
        try:
            if child.stdout.readline().strip() != "ready":
                raise InputError(spec.path, f"{spec.reader} could not be set up to scan it")
            rec = subprocess.Popen([perf, "record", "-F", str(FREQUENCY), "-p",
                                    str(child.pid), "-o", str(data), "-q"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            time.sleep(0.3)  # perf attaches before the first profiled scan
            child.stdin.write("go\n")
            child.stdin.flush()
            done = json.loads(child.stdout.readline())
            rec.send_signal(signal.SIGINT)
            _, err = rec.communicate(timeout=60)
            child.wait(timeout=timeout)
        finally:
            if child.poll() is None:
                child.kill()
        if not data.exists():
            raise VerificationError(spec.path, f"perf recorded nothing ({err.strip()[-200:]})")
        report = subprocess.run([perf, "report", "-i", str(data), "--stdio", "--no-children",
                                 "--sort", "dso,sym", "--percent-limit", "0.01"],
                                capture_output=True, text=True, check=True).stdout
    layers, others = classify(report)
    return {"reader": spec.reader, "scans": done["scans"],
            "events_per_s": done["events"] / done["seconds"], "layers": layers,
            "largest_other": others}


def serialized_refusals(path: str) -> dict:
    """ROOT's GetEntriesSerialized on every jagged basket of a TTree: tried, refused, messages."""
    from analysis.formats.root.backend import READERS, TREE, root

    out = [str(x) for x in root(READERS).hepfmt.serialized_refusals(str(path), TREE)]
    return {"tried": int(out[0]), "refused": int(out[1]), "messages": out[2:]}


def bench(path: str, source: str, adapter: str, readers: list[str], branches: list[str],
          seconds: float = PROFILE_S) -> dict:
    """Every reader's layers on one file and selection, with the codec bound and (TTree) what
    ROOT's own jagged bulk call does on it."""
    from analysis.samples.source import read_source_meta

    fmt = formats.get(adapter)
    unknown = [r for r in readers if r not in fmt.readers]
    if unknown:
        raise VerificationError(path, f"format {adapter} has no reader {unknown[0]!r}")
    n_events = int(read_source_meta(source)["n_events"])
    module = formats.entry(adapter).module
    rows = [profile(LayerSpec(str(path), module, r, branches, seconds)) for r in readers]
    return {"file": str(path), "adapter": adapter, "branches": len(branches),
            "n_events": n_events, "rows": rows,
            "bound": bound.measure(path, module, branches, n_events),
            "serialized": serialized_refusals(path) if adapter == "ttree" else None}


def report(result: dict) -> str:
    """The bench as text: one line per reader and layer share, then the bound and the new
    zstd context's share of each read."""
    layers = [name for name, _ in LAYERS] + [OTHER]
    lines = [f"{result['file']}: {result['branches']} branches, {result['n_events']} events",
             "", "| reader | events/s (profiled scans) | " + " | ".join(layers) + " |",
             "|---" * (len(layers) + 2) + "|"]
    for r in result["rows"]:
        lines.append(f"| {r['reader']} | {r['events_per_s']:,.0f} | " + " | ".join(
            f"{r['layers'][k]:.0%}" for k in layers) + " |")
    lines.append("")
    for r in result["rows"]:
        lines.append(f"{r['reader']}: largest samples in no layer: " + "; ".join(
            f"{n} {v:.1%}" for v, n in r["largest_other"]))
    b = result["bound"]
    lines.append("")
    if b.get("why_not"):
        lines.append(f"codec bound: none ({b['why_not']})")
    else:
        reused = b.get("events_per_s_reused")
        lines.append(f"codec bound ({b['codec']}, {b['blocks']} blocks): "
                     f"{b['events_per_s_new']:,.0f} events/s with a new context per block"
                     + (f", {reused:,.0f} with one reused" if reused else ""))
        if reused and b.get("new_s") and b.get("reused_s"):
            extra = (b["new_s"] - b["reused_s"]) / result["n_events"]  # seconds per event
            for r in result["rows"]:
                lines.append(f"  a new context per block costs {r['reader']} "
                             f"{extra * r['events_per_s']:.0%} of its read")
    s = result.get("serialized")
    if s:
        lines.append(f"TBranch::GetEntriesSerialized on the jagged branches: {s['refused']} of "
                     f"{s['tried']} baskets refused" + "".join(f"\n  ROOT: {m.strip()}"
                                                             for m in s["messages"]))
    return "\n".join(lines)


if __name__ == "__main__":  # the profiled process: python -m analysis.measure.layers SPEC
    _child(LayerSpec(**json.loads(sys.argv[1])))
