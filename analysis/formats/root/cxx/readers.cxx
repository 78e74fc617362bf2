// hepfmt's ROOT readers (analysis/formats/root/ttree.py), compiled once into a plain shared
// library (backend.compile_readers; Python sees only readers.hxx): RDataFrame,
// a TTreeReader loop and the classic GetEntry loop. Each loop is written once and applied to
// every value of every selected branch with one of two operations: Ck folds the value into a
// checksum (the untimed proof, *_checksums) and Keep only makes the value's load unskippable
// (the timed scan, *_scan, which also reports when the file was open and when each cluster
// ended, on steady_clock: CLOCK_MONOTONIC on Linux, the clock of Python's perf_counter).
#include "checksum.hxx"
#include "readers.hxx"

#include <ROOT/RDataFrame.hxx>
#include <ROOT/RNTupleDS.hxx>
#include <ROOT/RNTupleReader.hxx>
#include <TFile.h>
#include <TKey.h>
#include <TLeaf.h>
#include <TTreeReader.h>
#include <TTreeReaderArray.h>
#include <TTreeReaderValue.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>
namespace hepfmt {
template <typename T> struct Tag { using type = T; };

// f(Tag<T>{}) for the C++ type T that ROOT calls `name`: a TTree leaf type (Float_t) or an
// RNTuple field type (float); false for any other name.
template <typename F> bool with_type(const std::string &name, F &&f) {
#define HEPFMT_T(NAME, T) if (name == NAME) { f(Tag<T>{}); return true; }
  HEPFMT_T("Bool_t", bool) HEPFMT_T("Char_t", Char_t) HEPFMT_T("UChar_t", UChar_t)
  HEPFMT_T("Short_t", Short_t) HEPFMT_T("UShort_t", UShort_t) HEPFMT_T("Int_t", Int_t)
  HEPFMT_T("UInt_t", UInt_t) HEPFMT_T("Long64_t", Long64_t) HEPFMT_T("ULong64_t", ULong64_t)
  HEPFMT_T("Float_t", Float_t) HEPFMT_T("Double_t", Double_t)
  HEPFMT_T("bool", bool) HEPFMT_T("std::int8_t", std::int8_t)
  HEPFMT_T("std::uint8_t", std::uint8_t) HEPFMT_T("std::int16_t", std::int16_t)
  HEPFMT_T("std::uint16_t", std::uint16_t) HEPFMT_T("std::int32_t", std::int32_t)
  HEPFMT_T("std::uint32_t", std::uint32_t) HEPFMT_T("std::int64_t", std::int64_t)
  HEPFMT_T("std::uint64_t", std::uint64_t) HEPFMT_T("float", float) HEPFMT_T("double", double)
#undef HEPFMT_T
  return false;
}

// The timed scans' operation: the value must exist in a register or memory, so neither the
// compiler nor ROOT can skip loading it, and nothing is computed from it.
struct Keep {
  template <typename T> void operator()(const T &x) { asm volatile("" : : "r,m"(x)); }
  static void merge(std::vector<Keep> &) {}
};

inline double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// When a scan was open and when the entry ending each cluster was done.
struct Progress {
  std::vector<Long64_t> ends;  // the entry after each cluster's last, increasing
  std::vector<double> at;
  std::atomic<Long64_t> done{0};
  double opened = 0;
  explicit Progress(std::vector<Long64_t> e) : ends(std::move(e)), at(ends.size(), 0) {}
  void open() { opened = now(); }
  void step() {
    const Long64_t d = ++done;
    const auto it = std::lower_bound(ends.begin(), ends.end(), d);
    if (it != ends.end() && *it == d) at[it - ends.begin()] = now();
  }
  // [opened, entries done, time, entries done, time, ...] for Python's Marks.
  std::vector<double> marks() const {
    std::vector<double> out{opened};
    for (std::size_t i = 0; i < ends.size() && ends[i] <= done; ++i) {
      out.push_back(double(ends[i]));
      out.push_back(at[i]);
    }
    return out;
  }
};

// The entry after each cluster's last, from the file's metadata: the TTree's cluster
// iterator, or the RNTuple descriptor's clusters.
std::vector<Long64_t> cluster_ends(const std::string &path, const std::string &name) {
  std::vector<Long64_t> ends;
  std::unique_ptr<TFile> f(TFile::Open(path.c_str(), "READ"));
  if (!f || f->IsZombie()) throw std::runtime_error("cannot open " + path);
  auto *key = f->GetKey(name.c_str());
  if (key && std::string(key->GetClassName()) == "TTree") {
    auto *t = f->Get<TTree>(name.c_str());
    const Long64_t n = t->GetEntries();
    auto it = t->GetClusterIterator(0);
    for (Long64_t start = it(); start < n; start = it())
      ends.push_back(std::min(it.GetNextEntry(), n));
    return ends;
  }
  f.reset();
  auto reader = ROOT::RNTupleReader::Open(name, path);
  for (const auto &c : reader->GetDescriptor().GetClusterIterable())
    ends.push_back(Long64_t(c.GetFirstEntryIndex() + c.GetNEntries()));
  std::sort(ends.begin(), ends.end());
  return ends;
}

// What Python calls for each loop: <loop>_checksums (the proof) and <loop>_scan (the timed read,
// marking progress at `ends`, returning Progress::marks).
#define HEPFMT_READER(LOOP)                                                                  \
  std::vector<ULong64_t> LOOP##_checksums(const std::string &path, const std::string &tree,   \
                                          const std::vector<std::string> &cols) {            \
    Progress p({});                                                                          \
    return checksums(LOOP##_loop<Ck>(path, tree, cols, p));                                  \
  }                                                                                          \
  std::vector<double> LOOP##_scan(const std::string &path, const std::string &tree,           \
                                  const std::vector<std::string> &cols,                      \
                                  std::vector<Long64_t> ends) {                              \
    Progress p(std::move(ends));                                                             \
    LOOP##_loop<Keep>(path, tree, cols, p);                                                  \
    return p.marks();                                                                        \
  }

template <typename Op> std::vector<ULong64_t> checksums(const std::vector<Op> &ops) {
  std::vector<ULong64_t> out;
  for (const auto &o : ops) { out.push_back(o.n); out.push_back(o.s); }
  return out;
}

// --- RDataFrame: one event loop, one action per column ------------------------------------
template <typename T, typename Op>
ROOT::RDF::RResultPtr<Op> book(ROOT::RDF::RNode df, const std::string &col) {
  return df.Aggregate([](Op &o, const T &x) { o(x); }, Op::merge, col, Op{});
}
template <typename T, typename Op>
ROOT::RDF::RResultPtr<Op> book_vec(ROOT::RDF::RNode df, const std::string &col) {
  return df.Aggregate([](Op &o, const ROOT::RVec<T> &v) { for (const auto &x : v) o(x); },
                      Op::merge, col, Op{});
}

// The tree may be a TTree or an RNTuple (RDataFrame opens either by name); they spell column
// types differently (Float_t / float), hence with_type's two spellings.
template <typename Op>
std::vector<Op> rdf_loop(const std::string &path, const std::string &tree,
                         const std::vector<std::string> &cols, Progress &p) {
  // A TTree is opened here with TFile::Open, which hands root:// to the XRootD plug-in;
  // RDataFrame(name, path) would open it with READ_WITHOUT_GLOBALREGISTRATION, which ROOT 6.40
  // gives to a local TFile, so it finds no remote file. An RNTuple is read by its data source
  // (FromRNTuple, what RDataFrame(name, path) builds), which opens root:// through RRawFile.
  std::unique_ptr<TFile> f(TFile::Open(path.c_str(), "READ"));
  if (!f || f->IsZombie()) throw std::runtime_error("cannot open " + path);
  auto *key = f->GetKey(tree.c_str());
  const bool is_tree = key && std::string(key->GetClassName()) == "TTree";
  if (!is_tree) f.reset();
  ROOT::RDataFrame df = is_tree ? ROOT::RDataFrame(*f->Get<TTree>(tree.c_str()))
                                : ROOT::RDF::FromRNTuple(tree, path);
  ROOT::RDF::RNode node = df;
  std::vector<ROOT::RDF::RResultPtr<Op>> res;
  for (const auto &c : cols) {
    const auto t = df.GetColumnType(c);
    bool known = with_type(t, [&](auto tag) {
      res.push_back(book<typename decltype(tag)::type, Op>(node, c)); });
    for (const std::string pre : {"ROOT::VecOps::RVec<", "ROOT::RVec<"})
      if (!known && t.rfind(pre, 0) == 0 && t.back() == '>')
        known = with_type(t.substr(pre.size(), t.size() - pre.size() - 1), [&](auto tag) {
          res.push_back(book_vec<typename decltype(tag)::type, Op>(node, c)); });
    if (!known) throw std::runtime_error("hepfmt: unsupported column type " + t + " of " + c);
  }
  p.open();  // the file and its schema are open; the loop runs at the first GetValue
  // booked last: an entry counts as done after every column's action has run on it
  auto count = node.Aggregate([&p](char &, ULong64_t) { p.step(); }, [](std::vector<char> &) {},
                              "rdfentry_", char{});
  count.GetValue();
  std::vector<Op> out;
  for (auto &r : res) out.push_back(*r);
  return out;
}

HEPFMT_READER(rdf)

TTree *open_tree(std::unique_ptr<TFile> &f, const std::string &path, const std::string &tree) {
  f.reset(TFile::Open(path.c_str(), "READ"));
  if (!f || f->IsZombie()) throw std::runtime_error("cannot open " + path);
  auto *t = f->Get<TTree>(tree.c_str());
  if (!t) throw std::runtime_error("no TTree " + tree);
  return t;
}

TLeaf *leaf_of(TTree *t, const std::string &c) {
  auto *leaf = t->GetLeaf(c.c_str());
  if (!leaf) throw std::runtime_error("no branch " + c);
  return leaf;
}

// --- the hand-written TTreeReader loop ------------------------------------------------------
// Types are only known at run time, so each branch gets a small typed reader behind a virtual
// call; the loop itself is what a ROOT user would write.
template <typename Op> struct Col { Op op; virtual ~Col() = default; virtual void visit() = 0; };
template <typename T, typename Op> struct Value : Col<Op> {
  TTreeReaderValue<T> v;
  Value(TTreeReader &r, const char *name) : v(r, name) {}
  void visit() override { this->op(*v); }
};
template <typename T, typename Op> struct Array : Col<Op> {
  TTreeReaderArray<T> a;
  Array(TTreeReader &r, const char *name) : a(r, name) {}
  void visit() override { for (const auto &x : a) this->op(x); }
};

template <typename Op>
std::vector<Op> ttreereader_loop(const std::string &path, const std::string &tree,
                                 const std::vector<std::string> &cols, Progress &p) {
  std::unique_ptr<TFile> f;
  auto *t = open_tree(f, path, tree);
  TTreeReader reader(t);
  std::vector<std::unique_ptr<Col<Op>>> readers;
  for (const auto &c : cols) {
    auto *leaf = leaf_of(t, c);
    const bool array = leaf->GetLeafCount() != nullptr;
    if (!with_type(leaf->GetTypeName(), [&](auto tag) {
          using T = typename decltype(tag)::type;
          if (array) readers.push_back(std::make_unique<Array<T, Op>>(reader, c.c_str()));
          else readers.push_back(std::make_unique<Value<T, Op>>(reader, c.c_str()));
        }))
      throw std::runtime_error(std::string("hepfmt: unsupported leaf type ") +
                               leaf->GetTypeName() + " of " + c);
  }
  p.open();
  while (reader.Next()) {
    for (auto &r : readers) r->visit();
    p.step();
  }
  if (reader.GetEntryStatus() != TTreeReader::kEntryBeyondEnd)
    throw std::runtime_error("TTreeReader stopped early (status " +
                             std::to_string(int(reader.GetEntryStatus())) + ")");
  std::vector<Op> out;
  for (auto &r : readers) out.push_back(r->op);
  return out;
}

HEPFMT_READER(ttreereader)

// --- the classic loop: SetBranchAddress into plain buffers, TTree::GetEntry, the counter
// leaf's value for the length of each jagged entry -------------------------------------------
template <typename T, typename Op> void visit_n(Op &o, const char *p, Long64_t n) {
  for (Long64_t i = 0; i < n; ++i) {
    T x;
    std::memcpy(&x, p + i * sizeof(T), sizeof(T));
    o(x);
  }
}
template <typename Op> struct Slot {
  std::vector<char> buf;
  TLeaf *count = nullptr;
  void (*visit)(Op &, const char *, Long64_t) = nullptr;
  Op op;
};

template <typename Op>
std::vector<Op> getentry_loop(const std::string &path, const std::string &tree,
                              const std::vector<std::string> &cols, Progress &p) {
  std::unique_ptr<TFile> f;
  auto *t = open_tree(f, path, tree);
  t->SetBranchStatus("*", false);
  std::vector<Slot<Op>> slots(cols.size());
  for (std::size_t i = 0; i < cols.size(); ++i) {
    auto *leaf = leaf_of(t, cols[i]);
    auto &s = slots[i];
    s.count = leaf->GetLeafCount();
    if (!with_type(leaf->GetTypeName(), [&](auto tag) {
          s.visit = visit_n<typename decltype(tag)::type, Op>; }))
      throw std::runtime_error(std::string("hepfmt: unsupported leaf type ") +
                               leaf->GetTypeName() + " of " + cols[i]);
    const Long64_t n = s.count ? std::max<Long64_t>(1, s.count->GetMaximum()) : 1;
    s.buf.resize(n * leaf->GetLenType());
    if (s.count) t->SetBranchStatus(s.count->GetBranch()->GetName(), true);
    t->SetBranchStatus(cols[i].c_str(), true);
    t->SetBranchAddress(cols[i].c_str(), s.buf.data());
  }
  p.open();
  const Long64_t entries = t->GetEntries();
  for (Long64_t e = 0; e < entries; ++e) {
    if (t->GetEntry(e) < 0) throw std::runtime_error("read error at entry " + std::to_string(e));
    for (auto &s : slots)
      s.visit(s.op, s.buf.data(), s.count ? Long64_t(s.count->GetValue()) : 1);
    p.step();
  }
  t->ResetBranchAddresses();
  std::vector<Op> out;
  for (auto &s : slots) out.push_back(s.op);
  return out;
}

HEPFMT_READER(getentry)

// The clock the scans' marks are on, for Python to check it is its perf_counter's.
double steady_now() { return now(); }
}
#undef HEPFMT_READER
