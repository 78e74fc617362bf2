// TTree and RNTuple writers for wide Arrow tables (analysis/hepfmt/formats/root/wide_writer.py): one
// fill loop over raw Arrow buffers, shared by both formats.
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
  TreeWriter(const std::string &path, const std::string &treeName, int compression,
             Long64_t cluster,
             const std::vector<std::string> &names, const std::vector<int> &kinds,
             const std::vector<std::string> &leaves, const std::vector<int> &sizes)
      : fBufs(names.size())
  {
    fKinds = kinds;
    fSizes = sizes;
    fStrings.resize(names.size());
    fFile.reset(TFile::Open(path.c_str(), "RECREATE", "", compression));
    if (!fFile || fFile->IsZombie()) throw std::runtime_error("cannot create " + path);
    fTree = new TTree(treeName.c_str(), "wide table written by hepfmt");
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
  NTupleWriter(const std::string &path, const std::string &ntupleName, int compression,
               const std::vector<std::string> &names,
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
    fWriter = ROOT::RNTupleWriter::Recreate(std::move(model), ntupleName, path, opts);
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
