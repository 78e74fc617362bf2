"""ROOT RNTuple, written by ROOT's RNTupleWriter and read by RDataFrame or uproot.

TTree's successor in ROOT: the study compares it with the TTree and Parquet on the same samples.
Writing reuses the metadata study's RNTuple writer (:mod:`analysis.rootwide`, one JIT-compiled
C++ fill loop over raw Arrow buffers): one top-level field per source branch, scalars as their
own type, jagged branches as ``ROOT::RVec<T>`` beside their counter field (``nMuon``), so that
every branch of the schema exists, as in RDataFrame's NanoAOD snapshots.

Clusters: RNTuple's cluster limits are in bytes only, so the writer raises them out of reach and
calls ``CommitCluster()`` after every ``cluster_size`` entries: clusters are exact entry counts,
like TTree's ``SetAutoFlush`` and Parquet's row groups. Pages: ``page_size`` (default 32000
bytes, as the TTree's baskets and the Parquet pages) caps the unzipped page size
(``RNTupleWriteOptions::SetMaxUnzippedPageSize``); pages start small and grow up to it.

``writer: uproot`` writes the same fields with uproot instead (jagged branches as
``std::vector<T>``, one cluster per ``extend`` call, uproot's own page sizes): the file a user
without ROOT would make.
"""

from __future__ import annotations

from pathlib import Path

from analysis import rootwide, uprootwriter
from analysis.atomic import atomic_path
from analysis.codecs import Variant
from analysis.errors import InputError, VerificationError
from analysis.formats import Format
from analysis.formats import ttree as _ttree
from analysis.formats.ttree import ALGORITHMS, TREE, check_writer
from analysis.source import iter_clusters, read_source_meta, schema_of

DEFAULT_PAGE_SIZE = 32000

_LAYOUT_CPP = r"""
#include <ROOT/RNTupleDescriptor.hxx>
#include <ROOT/RNTupleReader.hxx>
#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>
namespace hepfmt_rntuple {
// What describe() needs from the descriptor, gathered in C++: a Python loop over every page of
// every column of every cluster takes seconds for a NanoAOD-wide file.
struct Layout {
  Long64_t entries = 0;
  std::vector<Long64_t> clusters;     // entries per cluster, in entry order
  std::vector<std::string> fields;    // top-level fields
  std::vector<Long64_t> zip;          // bytes on storage of each field's pages (subfields too)
  Long64_t pages = 0;                 // distinct pages on storage
  Long64_t compression = -1;          // of the first column range that records it
};

void columns_of(const ROOT::RNTupleDescriptor &d, ROOT::DescriptorId_t field,
                std::vector<ROOT::DescriptorId_t> &out) {
  for (const auto &c : d.GetColumnIterable(field)) out.push_back(c.GetPhysicalId());
  for (const auto &f : d.GetFieldIterable(field)) columns_of(d, f.GetId(), out);
}

Layout layout(const std::string &path, const std::string &name) {
  auto reader = ROOT::RNTupleReader::Open(name, path);
  const auto &d = reader->GetDescriptor();
  Layout l;
  l.entries = d.GetNEntries();
  std::vector<std::pair<Long64_t, Long64_t>> starts;
  for (const auto &c : d.GetClusterIterable())
    starts.emplace_back(c.GetFirstEntryIndex(), c.GetNEntries());
  std::sort(starts.begin(), starts.end());
  // Same-page merging stores identical pages once and points several page infos at them:
  // count each stored page once, for the first field that uses it.
  std::set<std::uint64_t> seen;
  for (const auto &s : starts) l.clusters.push_back(s.second);
  for (const auto &f : d.GetTopLevelFields()) {
    std::vector<ROOT::DescriptorId_t> cols;
    columns_of(d, f.GetId(), cols);
    Long64_t bytes = 0;
    for (const auto &c : d.GetClusterIterable()) {
      for (auto col : cols) {
        if (!c.ContainsColumn(col)) continue;
        if (l.compression < 0 && c.GetColumnRange(col).GetCompressionSettings())
          l.compression = *c.GetColumnRange(col).GetCompressionSettings();
        for (const auto &p : c.GetPageRange(col).GetPageInfos()) {
          const auto &loc = p.GetLocator();
          if (!seen.insert(loc.GetPosition<std::uint64_t>()).second) continue;
          bytes += loc.GetNBytesOnStorage();
          ++l.pages;
        }
      }
    }
    l.fields.push_back(f.GetFieldName());
    l.zip.push_back(bytes);
  }
  return l;
}
}
"""

_declared = {"layout": False}


def _layout(path: str | Path):
    """The descriptor's facts about ``path``, or an InputError naming it."""
    if not Path(path).is_file():
        raise InputError(path, "no such file")
    ROOT = _ttree._root()
    if not _declared["layout"]:
        if not ROOT.gInterpreter.Declare(_LAYOUT_CPP):
            raise RuntimeError("cling could not compile hepfmt's RNTuple layout helper")
        _declared["layout"] = True
    try:  # cppyy turns ROOT's exceptions (RException, runtime_error) into Python ones
        return ROOT.hepfmt_rntuple.layout(str(path), TREE)
    except Exception as exc:
        raise InputError(path, f"not a readable RNTuple {TREE!r} ({exc})") from exc


def write(source: Path, out: Path, variant: Variant, cluster_size: int, options: dict) -> None:
    meta = read_source_meta(source)
    schema = schema_of(meta)
    writer = check_writer(out, options, ("page_size",))
    with atomic_path(out) as tmp:
        try:
            if writer == "uproot":
                uprootwriter.write("rntuple", source, tmp, schema, variant, cluster_size)
            else:
                _write_root(source, tmp, schema, variant, cluster_size,
                            int(options.get("page_size", DEFAULT_PAGE_SIZE)))
        except Exception as exc:  # cppyy: RException (e.g. a page_size too small) from the writer
            raise VerificationError(out, f"the {writer} RNTuple writer refused it ({exc})") \
                from exc
        _verify(tmp, out, meta["n_events"], cluster_size, len(schema.branches))


def _write_root(source: Path, tmp: Path, schema, variant: Variant, cluster_size: int,
                page_size: int) -> None:
    columns = [rootwide.Column(b.name, "jagged" if b.jagged else "scalar", b.dtype, b.counter)
               for b in schema.branches]
    rootwide.write("rntuple", tmp, columns, iter_clusters(source, schema.names, cluster_size),
                   cluster_size, rootwide.compression_setting(variant.algorithm, variant.level),
                   page_size)


def _verify(path: Path, name: Path, n_events: int, cluster_size: int, n_branches: int) -> None:
    """Entries, fields and cluster entry counts as the written file's descriptor states them."""
    layout = _layout(path)
    if layout.entries != n_events:
        raise VerificationError(name, f"{layout.entries} entries written, {n_events} expected")
    if len(layout.fields) != n_branches:
        raise VerificationError(name, "field count differs from the source")
    sizes = [int(n) for n in layout.clusters]
    if not sizes or any(s != cluster_size for s in sizes[:-1]) \
            or not 0 < sizes[-1] <= cluster_size:
        raise VerificationError(name, f"clusters {sizes[:5]}... are not {cluster_size} "
                                      "entries each")


def describe(path: Path) -> dict:
    """The keys of the TTree's ``describe``, from the descriptor. ROOT stores identical pages
    once (same-page merging, e.g. all-false trigger pages): each stored page counts once, for
    the first field using it, so ``zip_bytes`` is what the file holds, not more."""
    layout = _layout(path)
    zip_by_field = {str(f): int(z) for f, z in zip(layout.fields, layout.zip, strict=True)}
    return {
        "entries": int(layout.entries),
        "clusters": [int(n) for n in layout.clusters],
        "branches": len(zip_by_field),
        "pages": int(layout.pages),
        "compression_settings": int(layout.compression) if layout.compression >= 0 else 0,
        "zip_bytes": sum(zip_by_field.values()),
        "zip_bytes_by_branch": zip_by_field,
        "file_bytes": Path(path).stat().st_size,
    }


FORMAT = Format(
    name="rntuple", extension="root", algorithms=frozenset(ALGORITHMS), dictionary=False,
    write=write, describe=describe, options=frozenset({"page_size", "writer"}),
    # The TTree's RDataFrame and uproot readers, unchanged: both open an RNTuple by its name.
    readers={k: _ttree.FORMAT.readers[k] for k in ("rdf", "uproot")},
)
