// hepfmt's ROOT readers (analysis/hepfmt/formats/root/ttree.py), compiled once into a plain shared
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
#include <ROOT/RNTupleModel.hxx>
#include <TBasket.h>
#include <TBranch.h>
#include <TBufferFile.h>
#include <TError.h>
#include <TFile.h>
#include <TKey.h>
#include <TLeaf.h>
#include <TTreeReader.h>
#include <TTreeReaderArray.h>
#include <TTreeReaderValue.h>
#include <TROOT.h>

#include <algorithm>
#include <cctype>
#include <atomic>
#include <chrono>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <thread>
#include <stdexcept>
#include <string>
#include <type_traits>
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
  void step() { mark(++done); }
  // the columnar loops: every selected column of the entries before `d` is done
  void reach(Long64_t d) { done = d; mark(d); }
  void mark(Long64_t d) {
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
  for (const auto &o : ops) {
    out.push_back(o.n);
    out.push_back(o.s);
    out.push_back(o.w);
    out.push_back(o.t);
  }
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

// --- RDataFrame's proof on several threads --------------------------------------------------
// A checksum weighs each value by its position, which one slot of an implicit-MT event loop
// does not know: it sees runs of consecutive entries (RDataFrame's tasks), not all of them.
// Each run is folded on its own from position 0; joined in entry order, a run starting after
// N values adds its weighted sum plus N times its plain sum: exactly the one-thread checksum.
struct Run {
  Long64_t first = 0, last = -2;
  Ck ck;
};
using Runs = std::vector<std::vector<Run>>;  // per slot

inline Ck &run_at(std::vector<Run> &v, Long64_t e) {
  if (v.empty() || v.back().last + 1 != e) v.push_back(Run{e, e, {}});
  v.back().last = e;
  return v.back().ck;
}

Ck join_runs(Runs &slots, const std::string &col) {
  std::vector<Run> all;
  for (auto &v : slots) all.insert(all.end(), v.begin(), v.end());
  std::sort(all.begin(), all.end(), [](const Run &a, const Run &b) { return a.first < b.first; });
  Ck out;
  Long64_t next = 0;
  for (const auto &r : all) {
    if (r.first != next)
      throw std::runtime_error("RDataFrame skipped or repeated entries of " + col + " at " +
                               std::to_string(next));
    out.w += r.ck.w + out.n * r.ck.s;
    out.n += r.ck.n;
    out.s += r.ck.s;
    if (r.ck.n) out.t = r.ck.t;
    next = r.last + 1;
  }
  return out;
}

std::vector<ULong64_t> rdf_mt_checksums(const std::string &path, const std::string &tree,
                                        const std::vector<std::string> &cols) {
  std::unique_ptr<TFile> f(TFile::Open(path.c_str(), "READ"));
  if (!f || f->IsZombie()) throw std::runtime_error("cannot open " + path);
  auto *key = f->GetKey(tree.c_str());
  const bool is_tree = key && std::string(key->GetClassName()) == "TTree";
  if (!is_tree) f.reset();
  ROOT::RDataFrame df = is_tree ? ROOT::RDataFrame(*f->Get<TTree>(tree.c_str()))
                                : ROOT::RDF::FromRNTuple(tree, path);
  const unsigned slots = df.GetNSlots();
  std::vector<Runs> runs(cols.size(), Runs(slots));
  ROOT::RDF::RNode node = df;
  for (std::size_t i = 0; i < cols.size(); ++i) {
    const auto t = df.GetColumnType(cols[i]);
    Runs *r = &runs[i];
    bool known = with_type(t, [&](auto tag) {
      using T = typename decltype(tag)::type;
      node = node.DefineSlotEntry("hepfmt_ck_" + std::to_string(i),
                                  [r](unsigned s, ULong64_t e, const T &x) {
                                    run_at((*r)[s], Long64_t(e))(x);
                                    return 0;
                                  }, {cols[i]});
    });
    for (const std::string pre : {"ROOT::VecOps::RVec<", "ROOT::RVec<"})
      if (!known && t.rfind(pre, 0) == 0 && t.back() == '>')
        known = with_type(t.substr(pre.size(), t.size() - pre.size() - 1), [&](auto tag) {
          using T = typename decltype(tag)::type;
          node = node.DefineSlotEntry("hepfmt_ck_" + std::to_string(i),
                                      [r](unsigned s, ULong64_t e, const ROOT::RVec<T> &v) {
                                        Ck &ck = run_at((*r)[s], Long64_t(e));
                                        for (const auto &x : v) ck(x);
                                        return 0;
                                      }, {cols[i]});
        });
    if (!known) throw std::runtime_error("hepfmt: unsupported column type " + t + " of " +
                                         cols[i]);
  }
  // a Define runs only for an action that reads it: one lazy action each, one event loop
  std::vector<ROOT::RDF::RResultPtr<int>> reads;
  for (std::size_t i = 0; i < cols.size(); ++i)
    reads.push_back(node.Aggregate([](int &a, int x) { a += x; }, [](std::vector<int> &) {},
                                   "hepfmt_ck_" + std::to_string(i), 0));
  if (!reads.empty()) reads.front().GetValue();
  std::vector<Ck> out;
  for (std::size_t i = 0; i < cols.size(); ++i) out.push_back(join_runs(runs[i], cols[i]));
  return checksums(out);
}

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

// --- the columnar loops: a column at a time, as pyarrow reads Parquet -----------------------
// Each selected column is read for a whole cluster before the next column; progress is marked
// when every column of a cluster is done. What a user gets is each column's values in host
// byte order, contiguous, which is what Op sees.

// ROOT stores TTree values big-endian.
template <typename T> inline T from_big(T x) {
  if constexpr (sizeof(T) == 1) return x;
  else {
    using U = std::conditional_t<sizeof(T) == 2, uint16_t,
                                 std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>;
    U u;
    std::memcpy(&u, &x, sizeof(T));
    if constexpr (sizeof(T) == 2) u = __builtin_bswap16(u);
    else if constexpr (sizeof(T) == 4) u = __builtin_bswap32(u);
    else u = __builtin_bswap64(u);
    std::memcpy(&x, &u, sizeof(T));
    return x;
  }
}

// One TTree branch read basket by basket. A flat branch goes through ROOT's bulk API
// (TBranch::GetBulkRead().GetBulkEntries: the basket's values, byte-swapped by ROOT). A jagged
// one cannot: ROOT 6.40's GetEntriesSerialized refuses every branch with a counter ("Failed to
// read from full cluster", the counter's and the values' baskets start at different entries),
// so its baskets are taken with TBranch::GetBasket and the values between the key and the
// entry offsets are byte-swapped here.
template <typename Op> struct BasketColumn {
  TBranch *branch = nullptr;
  bool jagged = false;
  Int_t next = 0;  // the next basket
  std::unique_ptr<TBufferFile> bulk;
  void (*run)(BasketColumn &, Op &, Long64_t) = nullptr;
  Op op;
};

template <typename T, typename Op> void run_baskets(BasketColumn<Op> &c, Op &op, Long64_t end) {
  TBranch *b = c.branch;
  const Long64_t *first = b->GetBasketEntry();
  const Int_t n = b->GetWriteBasket();
  for (; c.next < n && first[c.next] < end; ++c.next) {
    if (!c.jagged) {
      c.bulk->Reset();
      const Int_t got = b->GetBulkRead().GetBulkEntries(first[c.next], *c.bulk);
      if (got < 0)
        throw std::runtime_error(std::string("TBranch::GetBulkEntries refused branch ") +
                                 b->GetName() + " at entry " + std::to_string(first[c.next]));
      const T *v = reinterpret_cast<const T *>(c.bulk->GetCurrent());
      for (Int_t i = 0; i < got; ++i) op(v[i]);
      continue;
    }
    TBasket *basket = b->GetBasket(c.next);
    if (!basket)
      throw std::runtime_error(std::string("cannot read basket ") + std::to_string(c.next) +
                               " of branch " + b->GetName());
    const char *data = basket->GetBufferRef()->Buffer() + basket->GetKeylen();
    const Long64_t bytes = basket->GetLast() - basket->GetKeylen();
    for (Long64_t i = 0; i < bytes / Long64_t(sizeof(T)); ++i) {
      T x;
      std::memcpy(&x, data + i * sizeof(T), sizeof(T));
      op(from_big(x));
    }
    b->DropBaskets();  // the loop never comes back to a basket: keep memory at one per branch
  }
}

// A column of the basket readers (streamed or filled): its branch, whether it is jagged, and
// for a flat one the buffer of ROOT's bulk call, which must be able to read it.
template <typename Column>
void open_column(Column &c, TLeaf *leaf, const std::string &name) {
  c.branch = leaf->GetBranch();
  c.jagged = leaf->GetLeafCount() != nullptr;
  if (!c.jagged) {
    if (!c.branch->SupportsBulkRead())
      throw std::runtime_error(std::string("ROOT's bulk API does not read branch ") + name +
                               " (TBranch::SupportsBulkRead is false)");
    c.bulk = std::make_unique<TBufferFile>(TBuffer::kWrite, 32 * 1024);
  }
}

template <typename Op>
std::vector<Op> basket_loop(TTree *t, const std::vector<std::string> &cols, Progress &p) {
  std::vector<BasketColumn<Op>> columns(cols.size());
  for (std::size_t i = 0; i < cols.size(); ++i) {
    auto *leaf = leaf_of(t, cols[i]);
    auto &c = columns[i];
    open_column(c, leaf, cols[i]);
    if (!with_type(leaf->GetTypeName(), [&](auto tag) {
          c.run = run_baskets<typename decltype(tag)::type, Op>; }))
      throw std::runtime_error(std::string("hepfmt: unsupported leaf type ") +
                               leaf->GetTypeName() + " of " + cols[i]);
  }
  p.open();
  std::vector<Long64_t> ends = p.ends;
  if (ends.empty() || ends.back() < t->GetEntries()) ends.push_back(t->GetEntries());
  for (const Long64_t end : ends) {
    for (auto &c : columns) c.run(c, c.op, end);
    p.reach(end);
  }
  std::vector<Op> out;
  for (auto &c : columns) out.push_back(c.op);
  return out;
}

// One RNTuple field read in bulk (RFieldBase::RBulkValues): for a scalar field the values,
// for an RVec field the RVecs of a range of entries, at most kBulk entries a call.
constexpr std::size_t kBulk = 8192;
template <typename Op> struct BulkColumn {
  std::unique_ptr<ROOT::RFieldBase::RBulkValues> bulk;
  void (*run)(BulkColumn &, ROOT::RNTupleLocalIndex, std::size_t) = nullptr;
  Op op;
};

// V: the field's value type, T itself for a scalar, or a collection of T (RVec, std::vector)
template <typename V, typename Op>
void run_bulk(BulkColumn<Op> &c, ROOT::RNTupleLocalIndex first, std::size_t n) {
  const auto *v = static_cast<const V *>(c.bulk->ReadBulk(first, nullptr, n));
  for (std::size_t i = 0; i < n; ++i) {
    if constexpr (std::is_arithmetic_v<V>) c.op(v[i]);
    else for (auto &&x : v[i]) c.op(typename V::value_type(x));  // vector<bool>: a proxy
  }
}

template <typename Op>
std::vector<Op> bulk_loop(const std::string &path, const std::string &name,
                          const std::vector<std::string> &cols, Progress &p) {
  auto reader = ROOT::RNTupleReader::Open(name, path);
  const auto &model = reader->GetModel();
  std::vector<BulkColumn<Op>> columns(cols.size());
  for (std::size_t i = 0; i < cols.size(); ++i) {
    auto &c = columns[i];
    const std::string t = model.GetConstField(cols[i]).GetTypeName();
    bool known = with_type(t, [&](auto tag) {
      c.run = run_bulk<typename decltype(tag)::type, Op>; });
    for (const std::string pre : {"ROOT::VecOps::RVec<", "ROOT::RVec<"})
      if (!known && t.rfind(pre, 0) == 0 && t.back() == '>')
        known = with_type(t.substr(pre.size(), t.size() - pre.size() - 1), [&](auto tag) {
          c.run = run_bulk<ROOT::RVec<typename decltype(tag)::type>, Op>; });
    const std::string vec = "std::vector<";  // uproot writes jagged fields as std::vector
    if (!known && t.rfind(vec, 0) == 0 && t.back() == '>')
      known = with_type(t.substr(vec.size(), t.size() - vec.size() - 1), [&](auto tag) {
        c.run = run_bulk<std::vector<typename decltype(tag)::type>, Op>; });
    if (!known)
      throw std::runtime_error("hepfmt: RBulkValues is not read here for field type " + t +
                               " of " + cols[i]);
    c.bulk = std::make_unique<ROOT::RFieldBase::RBulkValues>(model.CreateBulk(cols[i]));
  }
  std::vector<std::pair<Long64_t, ROOT::DescriptorId_t>> clusters;
  std::vector<std::size_t> sizes;
  {
    const auto &desc = reader->GetDescriptor();
    for (const auto &cl : desc.GetClusterIterable())
      clusters.emplace_back(Long64_t(cl.GetFirstEntryIndex()), cl.GetId());
    std::sort(clusters.begin(), clusters.end());
    for (const auto &[first, id] : clusters)
      sizes.push_back(desc.GetClusterDescriptor(id).GetNEntries());
  }
  p.open();
  for (std::size_t k = 0; k < clusters.size(); ++k) {
    for (auto &c : columns)
      for (std::size_t at = 0; at < sizes[k]; at += kBulk)
        c.run(c, ROOT::RNTupleLocalIndex(clusters[k].second, at),
              std::min(kBulk, sizes[k] - at));
    p.reach(clusters[k].first + Long64_t(sizes[k]));
  }
  std::vector<Op> out;
  for (auto &c : columns) out.push_back(std::move(c.op));
  return out;
}

// A TTree's basket loop or an RNTuple's bulk loop, whichever `tree` names in the file.
template <typename Op>
std::vector<Op> columnar_loop(const std::string &path, const std::string &tree,
                              const std::vector<std::string> &cols, Progress &p) {
  std::unique_ptr<TFile> f(TFile::Open(path.c_str(), "READ"));
  if (!f || f->IsZombie()) throw std::runtime_error("cannot open " + path);
  auto *key = f->GetKey(tree.c_str());
  if (key && std::string(key->GetClassName()) == "TTree")
    return basket_loop<Op>(f->Get<TTree>(tree.c_str()), cols, p);
  f.reset();
  return bulk_loop<Op>(path, tree, cols, p);
}

HEPFMT_READER(columnar)

// --- threads: columns dealt out over threads, each with its own file handle ----------------
// One TFile / RNTupleReader per thread is the pattern ROOT supports under EnableThreadSafety;
// two threads sharing one TTree's baskets would race on its buffers. Column i goes to thread
// i % threads, so each thread's share of NanoAOD's mixed branches is alike. A cluster counts
// as done when every thread has done it (its mark is the latest thread's).
template <typename R, typename Loop>
std::vector<R> on_threads(Loop loop, const std::string &path, const std::string &tree,
                          const std::vector<std::string> &cols, Progress &p, int threads) {
  const std::size_t k = std::max<std::size_t>(1, std::min<std::size_t>(threads, cols.size()));
  if (k == 1) return loop(path, tree, cols, p);
  ROOT::EnableThreadSafety();
  std::vector<std::vector<std::string>> share(k);
  for (std::size_t i = 0; i < cols.size(); ++i) share[i % k].push_back(cols[i]);
  std::deque<Progress> progress;
  for (std::size_t t = 0; t < k; ++t) progress.emplace_back(p.ends);
  std::vector<std::vector<R>> got(k);
  std::vector<std::exception_ptr> failed(k);
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < k; ++t)
    pool.emplace_back([&, t] {
      try { got[t] = loop(path, tree, share[t], progress[t]); }
      catch (...) { failed[t] = std::current_exception(); }
    });
  for (auto &th : pool) th.join();
  for (auto &e : failed) if (e) std::rethrow_exception(e);
  p.opened = 0;
  Long64_t done = -1;
  for (auto &q : progress) {
    p.opened = std::max(p.opened, q.opened);
    done = done < 0 ? Long64_t(q.done) : std::min(done, Long64_t(q.done));
    for (std::size_t i = 0; i < p.at.size(); ++i) p.at[i] = std::max(p.at[i], q.at[i]);
  }
  p.done = std::max<Long64_t>(done, 0);
  std::vector<R> out;
  for (std::size_t i = 0; i < cols.size(); ++i) out.push_back(std::move(got[i % k][i / k]));
  return out;
}

std::vector<ULong64_t> columnar_mt_checksums(const std::string &path, const std::string &tree,
                                             const std::vector<std::string> &cols,
                                             int threads) {
  Progress p({});
  return checksums(on_threads<Ck>(columnar_loop<Ck>, path, tree, cols, p, threads));
}

std::vector<double> columnar_mt_scan(const std::string &path, const std::string &tree,
                                     const std::vector<std::string> &cols,
                                     std::vector<Long64_t> ends, int threads) {
  Progress p(std::move(ends));
  on_threads<Keep>(columnar_loop<Keep>, path, tree, cols, p, threads);
  return p.marks();
}

// --- the hand-over read: each column of the whole selection into one contiguous array ------
// Preallocated once per column and never moved: a flat column holds exactly its entries; a
// jagged one at most the branch's unzipped bytes (TBranch::GetTotBytes, which counts every
// basket's values besides its key and entry offsets), of which only the pages written become
// memory. Values are in host byte order, offsets in values (entries + 1 of them), as uproot's
// `arrays` hands a user its columns.
struct Filled {
  std::unique_ptr<char[]> data;
  Long64_t n = 0;         // values filled
  Long64_t capacity = 0;  // values the array holds
  std::vector<Long64_t> offsets;  // empty for a flat column
  void (*check)(const Filled &, Ck &) = nullptr;
};

template <typename T> void check_filled(const Filled &a, Ck &ck) {
  const char *p = a.data.get();
  for (Long64_t i = 0; i < a.n; ++i) {
    T x;
    std::memcpy(&x, p + i * sizeof(T), sizeof(T));
    ck(x);
  }
}

template <typename T> void fill_baskets(TBranch *b, bool jagged, TBufferFile *bulk, Filled &a,
                                        Int_t &next, Long64_t end) {
  const Long64_t *first = b->GetBasketEntry();
  const Int_t n = b->GetWriteBasket();
  char *out = a.data.get();
  for (; next < n && first[next] < end; ++next) {
    if (!jagged) {
      bulk->Reset();
      const Int_t got = b->GetBulkRead().GetBulkEntries(first[next], *bulk);
      if (got < 0 || a.n + got > a.capacity)
        throw std::runtime_error(std::string("TBranch::GetBulkEntries refused branch ") +
                                 b->GetName() + " at entry " + std::to_string(first[next]));
      std::memcpy(out + a.n * sizeof(T), bulk->GetCurrent(), std::size_t(got) * sizeof(T));
      a.n += got;
      continue;
    }
    TBasket *basket = b->GetBasket(next);
    // offsets from the basket's stored entry offsets; a tree written without them
    // (kGenerateOffsetMap) has its offsets from the counter instead (handover_loop)
    const bool stored = !a.offsets.empty();
    if (!basket || (stored && !basket->GetEntryOffset()))
      throw std::runtime_error(std::string("cannot read basket ") + std::to_string(next) +
                               " of branch " + b->GetName() + " with its entry offsets");
    const Int_t key = basket->GetKeylen();
    const char *data = basket->GetBufferRef()->Buffer() + key;
    const Long64_t values = (basket->GetLast() - key) / Long64_t(sizeof(T));
    if (a.n + values > a.capacity)
      throw std::runtime_error(std::string("branch ") + b->GetName() +
                               " holds more values than its unzipped bytes");
    const Int_t *eo = basket->GetEntryOffset();
    for (Int_t i = 0; stored && i < basket->GetNevBuf(); ++i)
      a.offsets[first[next] + i] = a.n + (eo[i] - key) / Long64_t(sizeof(T));
    for (Long64_t i = 0; i < values; ++i) {
      T x;
      std::memcpy(&x, data + i * sizeof(T), sizeof(T));
      x = from_big(x);
      std::memcpy(out + (a.n + i) * sizeof(T), &x, sizeof(T));
    }
    a.n += values;
    b->DropBaskets();  // the values are in the array now: the basket is not kept twice
  }
}

struct FillColumn {
  TBranch *branch = nullptr;
  bool jagged = false;
  Int_t next = 0;
  std::unique_ptr<TBufferFile> bulk;
  void (*run)(TBranch *, bool, TBufferFile *, Filled &, Int_t &, Long64_t) = nullptr;
};

// Jagged branches' offsets from their counters' values, for a tree written without entry
// offsets (kGenerateOffsetMap), whose baskets' generated offsets ROOT 6.40 gets wrong at a
// basket's last entry (the values themselves are right). The counters are read through a
// file handle of their own: bulk-reading a counter that ROOT also reads to generate a basket's
// offsets trips ROOT's bookkeeping of the bulk basket (fExtraBasket).
std::map<std::string, std::vector<Long64_t>> counter_offsets(
    const std::string &path, const std::string &tree, const std::vector<std::string> &counters) {
  std::unique_ptr<TFile> f;
  auto *t = open_tree(f, path, tree);
  const Long64_t entries = t->GetEntries();
  std::map<std::string, std::vector<Long64_t>> out;
  TBufferFile buf(TBuffer::kWrite, 32 * 1024);
  for (const auto &name : counters) {
    if (out.count(name)) continue;
    TLeaf *count = leaf_of(t, name);
    TBranch *b = count->GetBranch();
    std::vector<Long64_t> off(entries + 1, 0);
    const Long64_t *first = b->GetBasketEntry();
    Long64_t e = 0;
    const bool known = with_type(count->GetTypeName(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      for (Int_t k = 0; k < b->GetWriteBasket(); ++k) {
        buf.Reset();
        const Int_t got = b->GetBulkRead().GetBulkEntries(first[k], buf);
        if (got < 0)
          throw std::runtime_error("TBranch::GetBulkEntries refused counter " + name);
        const T *v = reinterpret_cast<const T *>(buf.GetCurrent());
        for (Int_t i = 0; i < got && e < entries; ++i, ++e)
          off[e + 1] = off[e] + Long64_t(v[i]);
      }
    });
    if (!known || e != entries) throw std::runtime_error("cannot read counter " + name);
    out.emplace(name, std::move(off));
  }
  return out;
}

std::vector<Filled> handover_loop(const std::string &path, const std::string &tree,
                                  const std::vector<std::string> &cols, Progress &p) {
  std::unique_ptr<TFile> f;
  auto *t = open_tree(f, path, tree);
  const Long64_t entries = t->GetEntries();
  const bool generated =
      t->GetIOFeatures().Test(ROOT::Experimental::EIOFeatures::kGenerateOffsetMap);
  std::vector<FillColumn> columns(cols.size());
  std::vector<Filled> arrays(cols.size());
  for (std::size_t i = 0; i < cols.size(); ++i) {
    auto *leaf = leaf_of(t, cols[i]);
    auto &c = columns[i];
    auto &a = arrays[i];
    open_column(c, leaf, cols[i]);
    std::size_t width = 0;
    if (!with_type(leaf->GetTypeName(), [&](auto tag) {
          using T = typename decltype(tag)::type;
          c.run = fill_baskets<T>;
          a.check = check_filled<T>;
          width = sizeof(T);
        }))
      throw std::runtime_error(std::string("hepfmt: unsupported leaf type ") +
                               leaf->GetTypeName() + " of " + cols[i]);
    a.capacity = c.jagged ? c.branch->GetTotBytes() / Long64_t(width) : entries;
    a.data.reset(new char[std::max<Long64_t>(a.capacity, 1) * width]);  // not zeroed: untouched
    if (c.jagged && !generated) a.offsets.assign(entries + 1, 0);
  }
  p.open();
  // without stored entry offsets: each counter read once (counter_offsets)
  std::vector<std::string> counters;
  for (std::size_t i = 0; generated && i < columns.size(); ++i)
    if (columns[i].jagged) counters.push_back(leaf_of(t, cols[i])->GetLeafCount()->GetName());
  const auto by_counter = counters.empty() ? std::map<std::string, std::vector<Long64_t>>{}
                                           : counter_offsets(path, tree, counters);
  std::vector<Long64_t> ends = p.ends;
  if (ends.empty() || ends.back() < entries) ends.push_back(entries);
  for (const Long64_t end : ends) {
    for (std::size_t i = 0; i < columns.size(); ++i)
      columns[i].run(columns[i].branch, columns[i].jagged, columns[i].bulk.get(), arrays[i],
                     columns[i].next, end);
    p.reach(end);
  }
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    auto &a = arrays[i];
    if (!columns[i].jagged && a.n != entries)
      throw std::runtime_error("branch " + cols[i] + ": " + std::to_string(a.n) +
                               " values for " + std::to_string(entries) + " entries");
    if (!columns[i].jagged) continue;
    if (generated) {
      a.offsets = by_counter.at(leaf_of(t, cols[i])->GetLeafCount()->GetName());
      if (a.offsets[entries] != a.n)
        throw std::runtime_error("branch " + cols[i] + ": " + std::to_string(a.n) +
                                 " values, its counter says " +
                                 std::to_string(a.offsets[entries]));
    }
    a.offsets[entries] = a.n;
  }
  return arrays;
}

HandedOver handover_scan(const std::string &path, const std::string &tree,
                         const std::vector<std::string> &cols, std::vector<Long64_t> ends,
                         int threads) {
  Progress p(std::move(ends));
  auto arrays = std::make_shared<std::vector<Filled>>(
      on_threads<Filled>(handover_loop, path, tree, cols, p, threads));
  HandedOver out;
  out.marks = p.marks();
  for (const auto &a : *arrays) out.values.push_back(a.n);
  out.arrays = arrays;
  return out;
}

std::vector<Long64_t> handover_offsets(const std::string &path, const std::string &tree,
                                       const std::string &col) {
  Progress p({});
  return handover_loop(path, tree, {col}, p).at(0).offsets;
}

std::vector<ULong64_t> handover_checksums(const std::string &path, const std::string &tree,
                                          const std::vector<std::string> &cols, int threads) {
  Progress p({});
  const auto arrays = on_threads<Filled>(handover_loop, path, tree, cols, p, threads);
  std::vector<Ck> cks(arrays.size());
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    const auto &a = arrays[i];
    a.check(a, cks[i]);
    // the offsets are part of what is handed over: they must rise to the values filled
    for (std::size_t e = 1; e < a.offsets.size(); ++e)
      if (a.offsets[e] < a.offsets[e - 1] || a.offsets[e] > a.n)
        throw std::runtime_error("branch " + cols[i] + ": entry offsets out of order at " +
                                 std::to_string(e));
  }
  return checksums(cks);
}

// What ROOT's own bulk call for jagged branches does on a file: TBranch::GetEntriesSerialized
// (the values with their counter's) at the first entry of every basket of every jagged
// branch. [baskets tried, baskets refused] and the distinct messages ROOT gave, captured
// through its error handler (restored after).
namespace {
std::vector<std::string> *g_messages = nullptr;
void keep_message(int, Bool_t, const char *location, const char *msg) {
  if (!g_messages) return;
  std::string m = std::string(location) + ": " + msg;
  // "first entry is 3000; requested entry is 3725": one message, whatever the numbers
  std::string shape;
  for (char ch : m) if (!std::isdigit(static_cast<unsigned char>(ch))) shape += ch;
  for (const auto &seen : *g_messages) {
    std::string s2;
    for (char ch : seen) if (!std::isdigit(static_cast<unsigned char>(ch))) s2 += ch;
    if (s2 == shape) return;
  }
  g_messages->push_back(m);
}
}  // namespace

std::vector<std::string> serialized_refusals(const std::string &path, const std::string &tree) {
  std::unique_ptr<TFile> f;
  auto *t = open_tree(f, path, tree);
  std::vector<std::string> messages;
  Long64_t tried = 0, refused = 0;
  TBufferFile values(TBuffer::kWrite, 32 * 1024), counts(TBuffer::kWrite, 32 * 1024);
  const Int_t level = gErrorIgnoreLevel;
  gErrorIgnoreLevel = kError;
  g_messages = &messages;
  auto previous = SetErrorHandler(keep_message);
  for (auto *obj : *t->GetListOfBranches()) {
    auto *b = static_cast<TBranch *>(obj);
    auto *leaf = static_cast<TLeaf *>(b->GetListOfLeaves()->At(0));
    if (!leaf || !leaf->GetLeafCount()) continue;
    for (Int_t i = 0; i < b->GetWriteBasket(); ++i) {
      values.Reset();
      counts.Reset();
      ++tried;
      if (b->GetBulkRead().GetEntriesSerialized(b->GetBasketEntry()[i], values, &counts) < 0)
        ++refused;
    }
    b->DropBaskets("all");
  }
  SetErrorHandler(previous);
  g_messages = nullptr;
  gErrorIgnoreLevel = level;
  std::vector<std::string> out{std::to_string(tried), std::to_string(refused)};
  out.insert(out.end(), messages.begin(), messages.end());
  return out;
}

// The clock the scans' marks are on, for Python to check it is its perf_counter's.
double steady_now() { return now(); }
}
#undef HEPFMT_READER
