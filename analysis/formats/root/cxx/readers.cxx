// hepfmt's ROOT readers (analysis/formats/root/ttree.py), compiled once with ACLiC: RDataFrame,
// a TTreeReader loop and the classic GetEntry loop, each returning per-branch checksums.
#include "checksum.hxx"

#include <ROOT/RDataFrame.hxx>
#include <TFile.h>
#include <TLeaf.h>
#include <TTreeReader.h>
#include <TTreeReaderArray.h>
#include <TTreeReaderValue.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>
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
