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

Offset arrays: a basket of a jagged branch normally stores, besides the values, the byte offset
of each entry (4 bytes per event per branch). ``store_offsets: false`` sets ROOT's
``kGenerateOffsetMap`` I/O feature: the offsets are not written and ROOT rebuilds them from the
counter branch when reading, as the 2018 study's "ROOT without offsets" files did.

``writer: uproot`` writes the same tree with uproot instead (:mod:`analysis.uprootwriter`).

Readers: RDataFrame (one compiled event loop), a ``TTreeReader`` loop (what a ROOT expert writes
by hand), the classic ``SetBranchAddress`` + ``GetEntry`` loop (all three compiled with ACLiC into
one cached library) and uproot. Trees without offset arrays are not read reliably by any of them
in ROOT 6.40 / uproot 5.7 (README "Formats and knobs"); the checksums catch it.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import subprocess
import sys
from itertools import pairwise
from pathlib import Path

import numpy as np

from analysis.atomic import atomic_path
from analysis.checksum import CPP as CHECKSUM_CPP
from analysis.checksum import Checksum
from analysis.codecs import Variant
from analysis.errors import ConfigError, InputError, VerificationError
from analysis.formats import Format, Reader, require_branches
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

// The hand-written TTreeReader loop. Types are only known at run time, so each branch gets a
// small typed reader behind a virtual call; the loop itself is what a ROOT user would write.
struct Col { Ck ck; virtual ~Col() = default; virtual void add() = 0; };
template <typename T> struct Value : Col {
  TTreeReaderValue<T> v;
  Value(TTreeReader &r, const char *name) : v(r, name) {}
  void add() override { hepfmt::add(ck, *v); }
};
template <typename T> struct Array : Col {
  TTreeReaderArray<T> a;
  Array(TTreeReader &r, const char *name) : a(r, name) {}
  void add() override { ck.n += a.GetSize(); for (const auto &x : a) ck.s += bits<T>(x); }
};
template <typename T> std::unique_ptr<Col> make(TTreeReader &r, const char *name, bool array) {
  if (array) return std::make_unique<Array<T>>(r, name);
  return std::make_unique<Value<T>>(r, name);
}

std::vector<ULong64_t> ttreereader_checksums(const std::string &path, const std::string &tree,
                                             const std::vector<std::string> &cols) {
  std::unique_ptr<TFile> f(TFile::Open(path.c_str(), "READ"));
  if (!f || f->IsZombie()) throw std::runtime_error("cannot open " + path);
  auto *t = f->Get<TTree>(tree.c_str());
  if (!t) throw std::runtime_error("no TTree " + tree);
  TTreeReader reader(t);
  std::vector<std::unique_ptr<Col>> readers;
  for (const auto &c : cols) {
    auto *leaf = t->GetLeaf(c.c_str());
    if (!leaf) throw std::runtime_error("no branch " + c);
    const std::string ty = leaf->GetTypeName();
    const bool array = leaf->GetLeafCount() != nullptr;
#define HEPFMT_T(NAME, T) \
    if (ty == NAME) { readers.push_back(make<T>(reader, c.c_str(), array)); continue; }
    HEPFMT_T("Bool_t", bool) HEPFMT_T("Char_t", Char_t) HEPFMT_T("UChar_t", UChar_t)
    HEPFMT_T("Short_t", Short_t) HEPFMT_T("UShort_t", UShort_t) HEPFMT_T("Int_t", Int_t)
    HEPFMT_T("UInt_t", UInt_t) HEPFMT_T("Long64_t", Long64_t) HEPFMT_T("ULong64_t", ULong64_t)
    HEPFMT_T("Float_t", Float_t) HEPFMT_T("Double_t", Double_t)
#undef HEPFMT_T
    throw std::runtime_error("hepfmt: unsupported leaf type " + ty + " of " + c);
  }
  while (reader.Next())
    for (auto &r : readers) r->add();
  if (reader.GetEntryStatus() != TTreeReader::kEntryBeyondEnd)
    throw std::runtime_error("TTreeReader stopped early (status " +
                             std::to_string(int(reader.GetEntryStatus())) + ")");
  std::vector<ULong64_t> out;
  for (auto &r : readers) { out.push_back(r->ck.n); out.push_back(r->ck.s); }
  return out;
}

// The classic loop: SetBranchAddress into plain buffers, TTree::GetEntry, the counter leaf's
// value for the length of each jagged entry.
template <typename T> void add_n(Ck &c, const char *p, Long64_t n) {
  for (Long64_t i = 0; i < n; ++i) {
    T x;
    std::memcpy(&x, p + i * sizeof(T), sizeof(T));
    c.s += bits<T>(x);
  }
  c.n += n;
}
struct Slot {
  std::vector<char> buf;
  TLeaf *count = nullptr;
  void (*add)(Ck &, const char *, Long64_t) = nullptr;
  Ck ck;
};

std::vector<ULong64_t> getentry_checksums(const std::string &path, const std::string &tree,
                                          const std::vector<std::string> &cols) {
  std::unique_ptr<TFile> f(TFile::Open(path.c_str(), "READ"));
  if (!f || f->IsZombie()) throw std::runtime_error("cannot open " + path);
  auto *t = f->Get<TTree>(tree.c_str());
  if (!t) throw std::runtime_error("no TTree " + tree);
  t->SetBranchStatus("*", false);
  std::vector<Slot> slots(cols.size());
  for (std::size_t i = 0; i < cols.size(); ++i) {
    auto *leaf = t->GetLeaf(cols[i].c_str());
    if (!leaf) throw std::runtime_error("no branch " + cols[i]);
    auto &s = slots[i];
    s.count = leaf->GetLeafCount();
    const std::string ty = leaf->GetTypeName();
#define HEPFMT_T(NAME, T) if (ty == NAME) s.add = add_n<T>;
    HEPFMT_T("Bool_t", bool) HEPFMT_T("Char_t", Char_t) HEPFMT_T("UChar_t", UChar_t)
    HEPFMT_T("Short_t", Short_t) HEPFMT_T("UShort_t", UShort_t) HEPFMT_T("Int_t", Int_t)
    HEPFMT_T("UInt_t", UInt_t) HEPFMT_T("Long64_t", Long64_t) HEPFMT_T("ULong64_t", ULong64_t)
    HEPFMT_T("Float_t", Float_t) HEPFMT_T("Double_t", Double_t)
#undef HEPFMT_T
    if (!s.add) throw std::runtime_error("hepfmt: unsupported leaf type " + ty + " of " + cols[i]);
    const Long64_t n = s.count ? std::max<Long64_t>(1, s.count->GetMaximum()) : 1;
    s.buf.resize(n * leaf->GetLenType());
    if (s.count) t->SetBranchStatus(s.count->GetBranch()->GetName(), true);
    t->SetBranchStatus(cols[i].c_str(), true);
    t->SetBranchAddress(cols[i].c_str(), s.buf.data());
  }
  const Long64_t entries = t->GetEntries();
  for (Long64_t e = 0; e < entries; ++e) {
    if (t->GetEntry(e) < 0) throw std::runtime_error("read error at entry " + std::to_string(e));
    for (auto &s : slots) s.add(s.ck, s.buf.data(), s.count ? Long64_t(s.count->GetValue()) : 1);
  }
  t->ResetBranchAddresses();
  std::vector<ULong64_t> out;
  for (auto &s : slots) { out.push_back(s.ck.n); out.push_back(s.ck.s); }
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
    return "#include <ROOT/RDataFrame.hxx>\n#include <TFile.h>\n#include <TTreeReader.h>\n" \
        "#include <TTreeReaderArray.h>\n#include <TTreeReaderValue.h>\n#include <TLeaf.h>\n" \
        "#include <algorithm>\n#include <memory>\n" \
        "#include <string>\n#include <vector>\n" + \
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


WRITERS = ("root", "uproot")


def check_writer(out: Path, options: dict, root_only: tuple[str, ...]) -> str:
    """The ``writer`` option, refusing options that only ROOT's writer has: uproot chooses its
    own basket and page sizes, and a knob that silently does nothing would mislabel a result."""
    writer = options.get("writer", "root")
    if writer not in WRITERS:
        raise ConfigError("options.writer", f"{writer!r} is not one of {WRITERS} ({out})")
    ignored = sorted(k for k in root_only if k in options)
    if writer == "uproot" and ignored:
        raise ConfigError("options", f"{ignored} apply to ROOT's writer, not uproot's ({out})")
    return writer


def write(source: Path, out: Path, variant: Variant, cluster_size: int, options: dict) -> None:
    meta = read_source_meta(source)
    schema = schema_of(meta)
    if check_writer(out, options, ("basket_size", "basket_policy", "store_offsets")) == "uproot":
        from analysis import uprootwriter  # imports this module: import it late

        with atomic_path(out) as tmp:
            try:
                uprootwriter.write("ttree", source, tmp, schema, variant, cluster_size)
            except (ValueError, TypeError, OSError) as exc:
                raise VerificationError(out, f"uproot could not write it ({exc})") from exc
            _verify(tmp, out, meta["n_events"], cluster_size, len(schema.branches))
        return
    _write_root(source, out, meta, schema, variant, cluster_size, options)


def _write_root(source: Path, out: Path, meta: dict, schema, variant: Variant, cluster_size: int,
                options: dict) -> None:
    ROOT = _root("fill")
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
        if not options.get("store_offsets", True):
            features = ROOT.TIOFeatures()
            features.Set(_offset_map_feature())
            t.SetIOFeatures(features)  # before any branch exists: branches copy the features
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
    """Entries per cluster. A tree written with entry-count clusters (``SetAutoFlush(n)``)
    records them; one without (uproot's) gets clusters estimated from bytes by ROOT's
    iterator, so there the real boundaries are those where every branch starts a basket."""
    if t.GetAutoFlush() <= 0:
        return _aligned_baskets(t)
    it = t.GetClusterIterator(0)
    sizes, start, n = [], it(), t.GetEntries()
    while start < n:
        nxt = it.GetNextEntry()
        sizes.append(int(nxt - start))
        start = it()
    return sizes


def _offset_map_feature():
    return _root().Experimental.EIOFeatures.kGenerateOffsetMap


def _aligned_baskets(t) -> list[int]:
    n = int(t.GetEntries())
    common: set[int] | None = None
    for br in t.GetListOfBranches():
        k = int(br.GetWriteBasket())
        starts = {int(x) for x in np.frombuffer(br.GetBasketEntry(), dtype=np.int64, count=k)}
        common = starts if common is None else common & starts
    edges = sorted((common or {0}) | {n})
    return [b - a for a, b in pairwise(edges) if b > a]


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
            # kGenerateOffsetMap: offset arrays of jagged branches not stored
            "store_offsets": not t.GetIOFeatures().Test(_offset_map_feature()),
            "auto_flush": int(t.GetAutoFlush()),
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


def _read_compiled(function: str, library: str, path: str,
                   branches: list[str]) -> dict[str, Checksum]:
    ROOT = _root("read")
    if not Path(path).is_file():
        raise InputError(path, "no such file")
    try:
        flat = getattr(ROOT.hepfmt, function)(str(path), TREE, branches)
    except Exception as exc:  # cppyy turns C++ exceptions into Python ones
        raise InputError(path, f"{library} could not read it: {exc}") from exc
    return {b: (int(flat[2 * i]), int(flat[2 * i + 1])) for i, b in enumerate(branches)}


def _read_rdf(path: str, branches: list[str]) -> dict[str, Checksum]:
    return _read_compiled("rdf_checksums", "RDataFrame", path, branches)


def _read_ttreereader(path: str, branches: list[str]) -> dict[str, Checksum]:
    return _read_compiled("ttreereader_checksums", "TTreeReader", path, branches)


def _read_getentry(path: str, branches: list[str]) -> dict[str, Checksum]:
    return _read_compiled("getentry_checksums", "TTree::GetEntry", path, branches)


def _refuse_offset_map(path: str, tree, version: str) -> None:
    """uproot reads baskets by their stored entry offsets; a tree written without them
    (kGenerateOffsetMap) would fail deep inside a basket, so say why up front."""
    features = tree.all_members.get("fIOFeatures")
    if features is not None and features.member("fIOBits") & 1:
        raise InputError(path, f"written without offset arrays (ROOT kGenerateOffsetMap), "
                               f"which uproot {version} cannot read")


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
            _refuse_offset_map(path, tree, uproot.__version__)
            require_branches(path, tree.keys(), branches)
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
    options=frozenset({"basket_size", "basket_policy", "store_offsets", "writer"}),
    readers={
        "rdf": Reader("rdf", "root", _prepare_rdf, _read_rdf),
        "ttreereader": Reader("ttreereader", "root", _prepare_rdf, _read_ttreereader),
        "getentry": Reader("getentry", "root", _prepare_rdf, _read_getentry),
        "uproot": Reader("uproot", "uproot", _prepare_uproot, _read_uproot),
    },
)
