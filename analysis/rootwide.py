"""ROOT TTree and RNTuple writers for wide Arrow tables, with one cluster per row group.

The metadata study needs ROOT files of any width (up to 100000 columns) and of column kinds the
main study's TTree adapter does not write (strings), plus RNTuples, which it does not write at
all. Both writers share one JIT-compiled C++ fill loop over raw Arrow buffers: a Python loop over
10^5 columns per row would be far too slow, and RDataFrame cannot declare that many columns.

Column kinds, as Arrow lays them out:

* ``scalar``: fixed-width values (bool as one byte, ints, floats): TTree leaf ``x/F``, RNTuple
  field ``float``;
* ``jagged``: a list of fixed-width values with int64 offsets, sized by a counter column
  (``Muon_pt[nMuon]/F``; RNTuple field ``ROOT::RVec<float>`` beside the ``nMuon`` field, as
  RDataFrame's Snapshot writes NanoAOD);
* ``string``: UTF-8 bytes with int64 offsets: ``std::string`` branch and field.

Clusters: TTree ``SetAutoFlush(rows_per_group)``; RNTuple ``CommitCluster()`` after each row group
with the byte-size cluster limits raised so that only those calls end clusters. Everything else
(basket and page sizes, cluster grouping) is left at the library's defaults: the study measures
the metadata that ROOT writes by default.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from analysis.formats.ttree import ALGORITHMS, DEFAULT_LEVEL, LEAF_CODES, TREE
from analysis.source import to_column

KINDS = {"scalar": 0, "jagged": 1, "string": 2}
#: numpy dtype name -> C++ type of an RNTuple field (and of an RVec's items).
CPP_TYPES = {"bool": "bool", "int8": "std::int8_t", "uint8": "std::uint8_t",
             "int16": "std::int16_t", "uint16": "std::uint16_t", "int32": "std::int32_t",
             "uint32": "std::uint32_t", "int64": "std::int64_t", "uint64": "std::uint64_t",
             "float32": "float", "float64": "double"}

_CPP = r"""
#include <TFile.h>
#include <TTree.h>
#include <TBranch.h>
#include <ROOT/RField.hxx>
#include <ROOT/RNTupleModel.hxx>
#include <ROOT/RNTupleWriteOptions.hxx>
#include <ROOT/RNTupleWriter.hxx>
#include <ROOT/RRawPtrWriteEntry.hxx>
#include <ROOT/RVec.hxx>
#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace hepfmt_wide {

const char *const TREE_NAME = "%s";

// One row group's columns as raw Arrow buffers: data[c] (values or UTF-8 bytes) and, for jagged
// and string columns, offsets[c] (int64, one more than the rows). Row r of the group is source
// row r % period, so a short block of distinct rows can fill a long row group. The loop is
// shared; each format says what to do with a value, at the end of a row and of a group.
class Writer {
public:
  virtual ~Writer() = default;
  virtual void Close() = 0;

  void Group(Long64_t rows, Long64_t period, const unsigned long *data,
             const unsigned long *offsets)
  {
    const size_t n = fKinds.size();
    for (Long64_t r = 0; r < rows; ++r) {
      const Long64_t s = r % period;
      for (size_t c = 0; c < n; ++c) {
        const char *d = reinterpret_cast<const char *>(data[c]);
        if (fKinds[c] == 0) {
          Scalar(c, d + s * fSizes[c]);
          continue;
        }
        const Long64_t *o = reinterpret_cast<const Long64_t *>(offsets[c]);
        if (fKinds[c] == 2)
          String(c, d + o[s], o[s + 1] - o[s]);
        else
          Jagged(c, d + o[s] * fSizes[c], o[s + 1] - o[s]);
      }
      EndRow();
    }
    EndGroup();
  }

protected:
  std::vector<int> fKinds, fSizes;
  std::vector<std::string> fStrings;  // sized once: branches and fields hold their addresses
  virtual void Scalar(size_t c, const char *value) = 0;
  virtual void Jagged(size_t c, const char *values, Long64_t n) = 0;
  void String(size_t c, const char *chars, Long64_t n) { fStrings[c].assign(chars, n); }
  virtual void EndRow() = 0;
  virtual void EndGroup() {}
};

class TreeWriter : public Writer {
  std::unique_ptr<TFile> fFile;
  TTree *fTree = nullptr;  // owned by fFile
  std::vector<TBranch *> fBranches;
  std::vector<std::vector<char>> fBufs;

public:
  TreeWriter(const std::string &path, int compression, Long64_t cluster,
             const std::vector<std::string> &names, const std::vector<int> &kinds,
             const std::vector<std::string> &leaves, const std::vector<int> &sizes)
      : fBufs(names.size())
  {
    fKinds = kinds;
    fSizes = sizes;
    fStrings.resize(names.size());
    fFile.reset(TFile::Open(path.c_str(), "RECREATE", "", compression));
    if (!fFile || fFile->IsZombie()) throw std::runtime_error("cannot create " + path);
    fTree = new TTree(TREE_NAME, "wide table written by hepfmt");
    fTree->SetAutoFlush(cluster);
    fTree->SetAutoSave(0);  // one tree header, written once at Close
    for (size_t c = 0; c < names.size(); ++c) {
      if (kinds[c] == 2) {
        fBranches.push_back(fTree->Branch(names[c].c_str(), &fStrings[c]));
      } else {
        fBufs[c].resize(sizes[c]);
        fBranches.push_back(fTree->Branch(names[c].c_str(), fBufs[c].data(), leaves[c].c_str()));
      }
    }
  }

  void Close() override
  {
    fTree->Write("", TObject::kOverwrite);
    fFile->Close();
    fFile.reset();
  }

protected:
  void Scalar(size_t c, const char *value) override
  {
    std::memcpy(fBufs[c].data(), value, fSizes[c]);
  }
  void Jagged(size_t c, const char *values, Long64_t n) override
  {
    const size_t bytes = n * fSizes[c];
    if (bytes > fBufs[c].size()) {  // the longest list so far: grow and re-point the branch
      fBufs[c].resize(bytes);
      fBranches[c]->SetAddress(fBufs[c].data());
    }
    std::memcpy(fBufs[c].data(), values, bytes);
  }
  void EndRow() override { fTree->Fill(); }
};

// RVec<T> holders for jagged RNTuple fields, chosen by the item's C++ type name.
struct RVecHolder {
  virtual ~RVecHolder() = default;
  virtual const void *Set(const char *src, Long64_t n) = 0;
};
template <typename T>
struct RVecOf : RVecHolder {
  ROOT::RVec<T> fV;
  const void *Set(const char *src, Long64_t n) override
  {
    fV.resize(n);
    if (n) std::memcpy(fV.data(), src, n * sizeof(T));
    return &fV;
  }
};
std::unique_ptr<RVecHolder> MakeRVec(const std::string &t)
{
#define HEPFMT_RVEC(NAME, T) if (t == NAME) return std::make_unique<RVecOf<T>>();
  HEPFMT_RVEC("bool", bool) HEPFMT_RVEC("std::int8_t", std::int8_t)
  HEPFMT_RVEC("std::uint8_t", std::uint8_t) HEPFMT_RVEC("std::int16_t", std::int16_t)
  HEPFMT_RVEC("std::uint16_t", std::uint16_t) HEPFMT_RVEC("std::int32_t", std::int32_t)
  HEPFMT_RVEC("std::uint32_t", std::uint32_t) HEPFMT_RVEC("std::int64_t", std::int64_t)
  HEPFMT_RVEC("std::uint64_t", std::uint64_t) HEPFMT_RVEC("float", float)
  HEPFMT_RVEC("double", double)
#undef HEPFMT_RVEC
  throw std::runtime_error("hepfmt: no RVec for item type " + t);
}

class NTupleWriter : public Writer {
  std::unique_ptr<ROOT::RNTupleWriter> fWriter;
  std::unique_ptr<ROOT::Detail::RRawPtrWriteEntry> fEntry;
  std::vector<ROOT::RFieldToken> fTokens;
  std::vector<std::unique_ptr<RVecHolder>> fRVecs;

public:
  NTupleWriter(const std::string &path, int compression, const std::vector<std::string> &names,
               const std::vector<int> &kinds, const std::vector<std::string> &types,
               const std::vector<int> &sizes, std::size_t maxPageSize = 0)
      : fRVecs(names.size())
  {
    fKinds = kinds;
    fSizes = sizes;
    fStrings.resize(names.size());
    auto model = ROOT::RNTupleModel::CreateBare();
    for (size_t c = 0; c < names.size(); ++c) {
      std::string type = kinds[c] == 0 ? types[c]
                         : kinds[c] == 1 ? "ROOT::RVec<" + types[c] + ">" : "std::string";
      model->AddField(ROOT::RFieldBase::Create(names[c], type).Unwrap());
      if (kinds[c] == 1) fRVecs[c] = MakeRVec(types[c]);
    }
    ROOT::RNTupleWriteOptions opts;
    opts.SetCompression(compression);
    opts.SetMaxUnzippedClusterSize(std::size_t(1) << 40);  // before the zipped size: see notes
    opts.SetApproxZippedClusterSize(std::size_t(1) << 39);
    if (maxPageSize) {  // 0 = ROOT's default; the initial page may not exceed the maximum
      opts.SetInitialUnzippedPageSize(std::min(opts.GetInitialUnzippedPageSize(), maxPageSize));
      opts.SetMaxUnzippedPageSize(maxPageSize);
    }
    fWriter = ROOT::RNTupleWriter::Recreate(std::move(model), TREE_NAME, path, opts);
    fEntry = fWriter->GetModel().CreateRawPtrWriteEntry();
    for (size_t c = 0; c < names.size(); ++c) {
      fTokens.push_back(fEntry->GetToken(names[c]));
      if (kinds[c] == 2) fEntry->BindRawPtr(fTokens[c], &fStrings[c]);
    }
  }

  void Close() override
  {
    fEntry.reset();
    fWriter.reset();  // writes the footer
  }

protected:
  void Scalar(size_t c, const char *value) override
  {
    fEntry->BindRawPtr(fTokens[c], static_cast<const void *>(value));
  }
  void Jagged(size_t c, const char *values, Long64_t n) override
  {
    fEntry->BindRawPtr(fTokens[c], fRVecs[c]->Set(values, n));
  }
  void EndRow() override { fWriter->Fill(*fEntry); }
  void EndGroup() override { fWriter->CommitCluster(); }
};

} // namespace hepfmt_wide
"""

_declared = {"done": False}


def _root():
    import ROOT

    ROOT.gROOT.SetBatch(True)
    if not _declared["done"]:
        if not ROOT.gInterpreter.Declare(_CPP.replace("%s", TREE)):
            raise RuntimeError("cling could not compile hepfmt's wide-table writers")
        _declared["done"] = True
    return ROOT


@dataclass(frozen=True)
class Column:
    """One column of a wide table: its kind, its value dtype and, if jagged, its counter."""

    name: str
    kind: str  # scalar | jagged | string
    dtype: str  # numpy dtype name of the values; "string" for strings
    counter: str | None = None

    @property
    def itemsize(self) -> int:
        return 1 if self.kind == "string" else np.dtype(self.dtype).itemsize

    @property
    def leaf(self) -> str:
        """The TTree leaf list (unused for strings, which are object branches)."""
        if self.kind == "string":
            return ""
        size = f"[{self.counter}]" if self.kind == "jagged" else ""
        return f"{self.name}{size}/{LEAF_CODES[self.dtype]}"


def compression_setting(algorithm: str, level: int | None) -> int:
    """ROOT's integer compression setting (algorithm * 100 + level) for a hepfmt codec."""
    if algorithm == "none":
        return 0
    return ALGORITHMS[algorithm] * 100 + (DEFAULT_LEVEL[algorithm] if level is None else level)


def _buffers(table: pa.Table | pa.RecordBatch, columns: list[Column]):
    """Addresses of each column's values (and int64 offsets) for the C++ loop, plus the arrays
    that own them (keep them alive while C++ reads)."""
    keep, data, offsets = [], [], []
    for col in columns:
        arr = table.column(col.name)
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks()
        if col.kind == "string":
            off = np.frombuffer(arr.buffers()[1], dtype=np.int32)[arr.offset:arr.offset
                                                                 + len(arr) + 1]
            chars = arr.buffers()[2]
            values = np.frombuffer(chars, dtype=np.uint8) if chars is not None and chars.size \
                else np.zeros(1, np.uint8)
            off64 = off.astype(np.int64)
        else:
            c = to_column(arr)
            values = c.values if c.values.size else np.zeros(1, c.values.dtype)
            off64 = c.offsets
        keep += [values, off64]
        data.append(values.ctypes.data)
        offsets.append(0 if off64 is None else off64.ctypes.data)
    return np.array(data, dtype=np.uint64), np.array(offsets, dtype=np.uint64), keep


def write(fmt: str, out: str | Path, columns: list[Column],
          groups: Iterable[tuple[pa.Table | pa.RecordBatch, int]], rows_per_group: int,
          compression: int, max_page_size: int = 0) -> None:
    """Write ``groups`` (each: a block of distinct rows and how many rows the group has) as a
    TTree (``fmt="ttree"``) or an RNTuple (``fmt="rntuple"``) named ``Events``.

    ``max_page_size`` (bytes, RNTuple only; 0 = ROOT's default) caps the unzipped page size:
    the main study's RNTuple adapter matches its pages to the TTree's baskets with it.

    Not atomic by itself: the caller writes to a temporary path and verifies it.
    """
    ROOT = _root()
    names = [c.name for c in columns]
    kinds = [KINDS[c.kind] for c in columns]
    sizes = [c.itemsize for c in columns]
    vec = ROOT.std.vector
    if fmt == "ttree":
        w = ROOT.hepfmt_wide.TreeWriter(str(out), compression, rows_per_group, vec["std::string"](
            names), vec["int"](kinds), vec["std::string"]([c.leaf for c in columns]),
            vec["int"](sizes))
    elif fmt == "rntuple":
        types = [CPP_TYPES.get(c.dtype, "") for c in columns]
        w = ROOT.hepfmt_wide.NTupleWriter(str(out), compression, vec["std::string"](names),
                                          vec["int"](kinds), vec["std::string"](types),
                                          vec["int"](sizes), max_page_size)
    else:
        raise ValueError(f"no ROOT writer for format {fmt!r}")
    for block, rows in groups:
        data, offsets, keep = _buffers(block, columns)
        w.Group(rows, block.num_rows, data, offsets)
        del keep
    w.Close()
