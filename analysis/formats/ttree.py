"""ROOT TTree, written by ROOT itself (PyROOT) and read by RDataFrame or uproot.

The readers also read an RNTuple of the same name (:mod:`analysis.formats.rntuple` uses them).

Writing: each branch is bound to a numpy buffer with a NanoAOD-style leaf list
(``Muon_pt[nMuon]/F``) and one JIT-compiled C++ loop copies the source columns into the buffers
and calls ``TTree::Fill``; a Python loop over 1500 branches per event would be ~100x slower.
``SetAutoFlush(cluster_size)`` makes clusters of exactly that many entries.

Baskets: ROOT resizes all basket buffers at the first cluster (``OptimizeBaskets``), so "basket
size 32000 bytes" needs a policy, chosen by the ``basket_policy`` option and recorded:

* ``fixed``: every basket buffer is ``basket_size`` bytes for the whole file (sizes are reset
  after ROOT's optimisation); a branch writes several baskets per cluster if it needs them;
* ``optimize``: ROOT's default, ``basket_size`` only until the first cluster;
* ``cluster``: ``kOnlyFlushAtCluster``, exactly one basket per branch per cluster.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from analysis.atomic import atomic_path
from analysis.checksum import CPP as CHECKSUM_CPP
from analysis.checksum import Checksum
from analysis.codecs import Variant
from analysis.errors import InputError, VerificationError
from analysis.formats import Format, Reader
from analysis.source import iter_batches, read_source_meta, schema_of, to_column

TREE = "Events"
ALGORITHMS = {"none": 0, "zlib": 1, "lzma": 2, "lz4": 4, "zstd": 5}
DEFAULT_LEVEL = {"none": 0, "zlib": 1, "lzma": 9, "lz4": 4, "zstd": 5}
LEAF_CODES = {"bool": "O", "int8": "B", "uint8": "b", "int16": "S", "uint16": "s", "int32": "I",
              "uint32": "i", "int64": "L", "uint64": "l", "float32": "F", "float64": "D"}
BASKET_POLICIES = ("fixed", "optimize", "cluster")

_FILL_CPP = r"""
#include <TTree.h>
#include <cstring>
namespace hepfmt {
// Copy row i of every column into its branch buffer, Fill, repeat. Columns are raw pointers
// (numpy arrays); offsets[c] == 0 marks a scalar column.
void fill_tree(TTree *t, Long64_t n, int ncol, const unsigned long *data,
               const unsigned long *offsets, const unsigned long *bufs, const int *sizes,
               Long64_t reset_at, int basket_size) {
  for (Long64_t i = 0; i < n; ++i) {
    for (int c = 0; c < ncol; ++c) {
      const char *d = reinterpret_cast<const char *>(data[c]);
      char *b = reinterpret_cast<char *>(bufs[c]);
      const int sz = sizes[c];
      if (offsets[c]) {
        const long *o = reinterpret_cast<const long *>(offsets[c]);
        std::memcpy(b, d + o[i] * sz, (o[i + 1] - o[i]) * sz);
      } else {
        std::memcpy(b, d + i * sz, sz);
      }
    }
    t->Fill();
    if (t->GetEntries() == reset_at) t->SetBasketSize("*", basket_size);
  }
}
}
"""

_READ_CPP = r"""
#include <ROOT/RDataFrame.hxx>
namespace hepfmt {
template <typename T>
ROOT::RDF::RResultPtr<Ck> book(ROOT::RDF::RNode df, const std::string &col) {
  return df.Aggregate([](Ck &c, const T &x) { add(c, x); }, merge, col, Ck{});
}
// One event loop over all requested columns; checksums out as (n, sum) pairs. The tree may be
// a TTree or an RNTuple (RDataFrame opens either by name); they spell column types differently
// (Float_t / float, Int_t / std::int32_t), so both spellings are matched.
std::vector<ULong64_t> rdf_checksums(const std::string &path, const std::string &tree,
                                     const std::vector<std::string> &cols) {
  ROOT::RDataFrame df(tree, path);
  ROOT::RDF::RNode node = df;
  std::vector<ROOT::RDF::RResultPtr<Ck>> res;
  for (const auto &c : cols) {
    const auto t = df.GetColumnType(c);
#define HEPFMT_T(NAME, T)                                                     \
    if (t == NAME) { res.push_back(book<T>(node, c)); continue; }            \
    if (t == "ROOT::VecOps::RVec<" NAME ">" || t == "ROOT::RVec<" NAME ">") {  \
      res.push_back(book<ROOT::RVec<T>>(node, c)); continue; }
    // TTree leaf types
    HEPFMT_T("Bool_t", bool) HEPFMT_T("Char_t", Char_t) HEPFMT_T("UChar_t", UChar_t)
    HEPFMT_T("Short_t", Short_t) HEPFMT_T("UShort_t", UShort_t) HEPFMT_T("Int_t", Int_t)
    HEPFMT_T("UInt_t", UInt_t) HEPFMT_T("Long64_t", Long64_t) HEPFMT_T("ULong64_t", ULong64_t)
    HEPFMT_T("Float_t", Float_t) HEPFMT_T("Double_t", Double_t)
    // RNTuple field types
    HEPFMT_T("bool", bool) HEPFMT_T("std::int8_t", std::int8_t)
    HEPFMT_T("std::uint8_t", std::uint8_t) HEPFMT_T("std::int16_t", std::int16_t)
    HEPFMT_T("std::uint16_t", std::uint16_t) HEPFMT_T("std::int32_t", std::int32_t)
    HEPFMT_T("std::uint32_t", std::uint32_t) HEPFMT_T("std::int64_t", std::int64_t)
    HEPFMT_T("std::uint64_t", std::uint64_t) HEPFMT_T("float", float) HEPFMT_T("double", double)
#undef HEPFMT_T
    throw std::runtime_error("hepfmt: unsupported column type " + t + " of " + c);
  }
  std::vector<ULong64_t> out;
  for (auto &r : res) { out.push_back(r->n); out.push_back(r->s); }
  return out;
}
}
"""

_declared: set[str] = set()
_HELPERS = {"checksum": CHECKSUM_CPP, "fill": _FILL_CPP}


def _root(*helpers: str):
    """Import ROOT in batch mode and declare the named C++ helpers once per process."""
    import ROOT

    ROOT.gROOT.SetBatch(True)
    for name in helpers:
        if name in _declared:
            continue
        if name == "read":
            _compile_reader(ROOT)
        elif not ROOT.gInterpreter.Declare(_HELPERS[name]):
            raise RuntimeError(f"cling could not compile hepfmt's {name} helper")
        _declared.add(name)
    return ROOT


_BUILD = """
import sys, ROOT
ROOT.gROOT.SetBatch(True)
sys.exit(0 if ROOT.gSystem.CompileMacro(sys.argv[1], "kO-", "", sys.argv[2]) else 1)
"""


def reader_cache_dir(ROOT) -> Path:
    """Where the compiled reader lives: inside this Python environment by default
    (``$HEPFMT_CACHE`` overrides), under a key of the source text, ROOT's version and ROOT's
    installation directory. A library built against another ROOT installation (another
    venv) must never be loaded: it would pull a second copy of ROOT into the process."""
    code = _reader_source()
    root_dir = str(Path(ROOT.__file__).resolve().parent)
    key = hashlib.sha256((code + ROOT.gROOT.GetVersion() + root_dir).encode()).hexdigest()[:16]
    base = Path(os.environ.get("HEPFMT_CACHE") or Path(sys.prefix) / "var" / "cache" / "hepfmt")
    return base / key


def _reader_source() -> str:
    return "#include <ROOT/RDataFrame.hxx>\n#include <string>\n#include <vector>\n" + \
        CHECKSUM_CPP + _READ_CPP


def _compile_reader(ROOT) -> None:
    """Build the RDataFrame reader with ACLiC once per environment, then load it.

    Declaring it to cling costs ~10 s of JIT in every process; ACLiC compiles it once (~45 s)
    into a cached shared library that later processes load in ~2 s. The build runs in a
    separate process that has loaded nothing but ROOT, because ACLiC links the new library
    against every library loaded at build time (numpy's, pyarrow's, ...).
    """
    cache = reader_cache_dir(ROOT)
    cache.mkdir(parents=True, exist_ok=True)
    src = cache / "hepfmt_rdf.cxx"
    code = _reader_source()
    with open(cache / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # concurrent first builds would clobber each other
        if not src.exists() or src.read_text() != code:
            src.write_text(code)
        if not list(cache.glob("hepfmt_rdf_cxx.so")):
            build = subprocess.run([sys.executable, "-c", _BUILD, str(src), str(cache)],
                                   capture_output=True, text=True)
            if build.returncode != 0:
                tail = "\n".join(build.stderr.strip().splitlines()[-5:])
                raise RuntimeError(f"ACLiC could not build {src}:\n{tail}")
        if not ROOT.gSystem.CompileMacro(str(src), "kO-", "", str(cache)):
            raise RuntimeError(f"ACLiC could not load {src}")


def open_file(path: str | Path):
    """A ROOT file opened for reading, or an InputError naming it."""
    ROOT = _root()
    try:  # PyROOT raises OSError for unopenable files; older versions return a zombie
        f = ROOT.TFile.Open(str(path), "READ")
    except OSError as exc:
        raise InputError(path, f"not a readable ROOT file ({exc})") from exc
    if not f or f.IsZombie():
        raise InputError(path, "not a readable ROOT file")
    return f


def _open(path: str | Path):
    f = open_file(path)
    t = f.Get(TREE)
    if not t or not t.InheritsFrom("TTree"):
        raise InputError(path, f"no TTree named {TREE!r}")
    return f, t


def write(source: Path, out: Path, variant: Variant, cluster_size: int, options: dict) -> None:
    ROOT = _root("fill")
    meta = read_source_meta(source)
    schema = schema_of(meta)
    basket_size = int(options.get("basket_size", 32000))
    policy = options.get("basket_policy", "fixed")
    if policy not in BASKET_POLICIES:
        raise VerificationError(out, f"basket_policy {policy!r} not one of {BASKET_POLICIES}")
    level = variant.level if variant.level is not None else DEFAULT_LEVEL[variant.algorithm]
    settings = ROOT.CompressionSettings(ALGORITHMS[variant.algorithm], level) \
        if variant.algorithm != "none" else 0

    # Branch buffers must hold the longest entry of each collection.
    max_len = {c: 1 for c in schema.counters()}
    for batch in iter_batches(source, list(max_len)):
        for c in max_len:
            max_len[c] = max(max_len[c], int(to_column(batch.column(c)).values.max(initial=0)))

    with atomic_path(out) as tmp:
        try:
            f = ROOT.TFile(str(tmp), "RECREATE", "", settings)
        except OSError as exc:
            raise InputError(out, f"ROOT could not create the file ({exc})") from exc
        if f.IsZombie():
            raise InputError(out, "ROOT could not create the file")
        t = ROOT.TTree(TREE, "NanoAOD-like events written by hepfmt")
        t.SetAutoFlush(cluster_size)
        if policy == "cluster":
            t.SetBit(ROOT.TTree.kOnlyFlushAtCluster)
        buffers = []
        for b in schema.branches:
            buf = np.zeros(max_len[b.counter] if b.jagged else 1, dtype=b.np_dtype)
            leaf = f"{b.name}[{b.counter}]/{LEAF_CODES[b.dtype]}" if b.jagged \
                else f"{b.name}/{LEAF_CODES[b.dtype]}"
            t.Branch(b.name, buf, leaf, basket_size)
            buffers.append(buf)
        sizes = np.array([b.np_dtype.itemsize for b in schema.branches], dtype=np.int32)
        bufs = np.array([x.ctypes.data for x in buffers], dtype=np.uint64)
        reset_at = cluster_size if policy == "fixed" else -1
        for batch in iter_batches(source, schema.names):
            cols = [to_column(batch.column(i)) for i in range(batch.num_columns)]
            keep = [(c.values if c.values.size else np.zeros(1, c.values.dtype), c.offsets)
                    for c in cols]  # keep arrays alive while C++ holds their pointers
            data = np.array([v.ctypes.data for v, _ in keep], dtype=np.uint64)
            offs = np.array([0 if o is None else o.ctypes.data for _, o in keep], dtype=np.uint64)
            ROOT.hepfmt.fill_tree(t, batch.num_rows, len(keep), data, offs, bufs, sizes,
                                  reset_at, basket_size)
        t.Write()
        f.Close()
        _verify(tmp, out, meta["n_events"], cluster_size, len(schema.branches))


def _cluster_sizes(t) -> list[int]:
    it = t.GetClusterIterator(0)
    sizes, start, n = [], it(), t.GetEntries()
    while start < n:
        nxt = it.GetNextEntry()
        sizes.append(int(nxt - start))
        start = it()
    return sizes


def _verify(path: Path, name: Path, n_events: int, cluster_size: int, n_branches: int) -> None:
    f, t = _open(path)
    try:
        if t.GetEntries() != n_events:
            raise VerificationError(name, f"{t.GetEntries()} entries written, {n_events} expected")
        if t.GetListOfBranches().GetEntries() != n_branches:
            raise VerificationError(name, "branch count differs from the source")
        sizes = _cluster_sizes(t)
        if any(s != cluster_size for s in sizes[:-1]) or not 0 < sizes[-1] <= cluster_size:
            raise VerificationError(name, f"clusters {sizes[:5]}... are not {cluster_size} "
                                          "entries each")
    finally:
        f.Close()


def describe(path: Path) -> dict:
    f, t = _open(path)
    try:
        branches = list(t.GetListOfBranches())
        return {
            "entries": int(t.GetEntries()),
            "clusters": _cluster_sizes(t),
            "branches": len(branches),
            "baskets": sum(int(br.GetWriteBasket()) for br in branches),
            "compression_settings": int(f.GetCompressionSettings()),
            "zip_bytes": int(t.GetZipBytes()),
            "tot_bytes": int(t.GetTotBytes()),
            "zip_bytes_by_branch": {br.GetName(): int(br.GetZipBytes()) for br in branches},
            "file_bytes": int(f.GetSize()),
        }
    finally:
        f.Close()


def _prepare_rdf(threads: int) -> None:
    ROOT = _root("read")
    if threads > 1:
        ROOT.EnableImplicitMT(threads)


def _read_rdf(path: str, branches: list[str]) -> dict[str, Checksum]:
    ROOT = _root("read")
    try:
        flat = ROOT.hepfmt.rdf_checksums(str(path), TREE, branches)
    except Exception as exc:  # cppyy turns C++ exceptions into Python ones
        raise InputError(path, f"RDataFrame could not read it: {exc}") from exc
    return {b: (int(flat[2 * i]), int(flat[2 * i + 1])) for i, b in enumerate(branches)}


def _prepare_uproot(threads: int) -> None:
    import awkward  # noqa: F401
    import uproot  # noqa: F401


def _read_uproot(path: str, branches: list[str]) -> dict[str, Checksum]:
    import awkward as ak
    import uproot

    from analysis.checksum import checksum, merge

    out: dict[str, Checksum] = dict.fromkeys(branches, (0, 0))
    try:
        with uproot.open(path) as f:
            tree = f[TREE]
            missing = [b for b in branches if b not in tree]
            if missing:
                raise InputError(path, f"missing branches {missing[:5]}")
            for chunk in tree.iterate(branches, step_size="200 MB", library="ak", how=dict):
                for b, arr in chunk.items():
                    flat = ak.to_numpy(ak.flatten(arr, axis=None))
                    out[b] = merge(out[b], checksum(flat))
    except InputError:
        raise
    except Exception as exc:
        raise InputError(path, f"uproot could not read it: {exc}") from exc
    return out


FORMAT = Format(
    name="ttree", extension="root", algorithms=frozenset(ALGORITHMS), dictionary=False,
    write=write, describe=describe,
    readers={
        "rdf": Reader("rdf", "root", _prepare_rdf, _read_rdf),
        "uproot": Reader("uproot", "uproot", _prepare_uproot, _read_uproot),
    },
)
