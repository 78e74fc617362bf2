// What the TTree adapter's describe() needs (analysis/hepfmt/formats/root/ttree.py), read in C++ in
// one call: a damaged TTree can crash ROOT anywhere while it is being read, and cppyy turns a
// crash into a Python exception only inside a call it makes, not inside PyROOT's pythonizations
// (a bit flip in the tree's metadata crashed in TTree::GetBranch under PyROOT's attribute
// lookup, uncaught). One call also spares a Python loop over NanoAOD's ~1500 branches.
#include "readers.hxx"

#include <TBranch.h>
#include <TFile.h>
#include <TKey.h>
#include <TTree.h>

#include <algorithm>
#include <memory>
#include <set>
#include <stdexcept>

namespace hepfmt {
// Entries per cluster. A tree written with entry-count clusters (SetAutoFlush(n)) records
// them; one without (uproot's) gets clusters estimated from bytes by ROOT's iterator, so
// there the real boundaries are those where every branch starts a basket.
static std::vector<Long64_t> cluster_sizes(TTree *t) {
  const Long64_t n = t->GetEntries();
  std::vector<Long64_t> edges;
  if (t->GetAutoFlush() > 0) {
    edges.push_back(0);
    auto it = t->GetClusterIterator(0);
    for (Long64_t start = it(); start < n; start = it()) edges.push_back(it.GetNextEntry());
  } else {
    std::set<Long64_t> common;
    bool first = true;
    for (auto *obj : *t->GetListOfBranches()) {
      auto *br = static_cast<TBranch *>(obj);
      std::set<Long64_t> starts(br->GetBasketEntry(), br->GetBasketEntry() + br->GetWriteBasket());
      if (first) common = std::move(starts);
      else {
        std::set<Long64_t> both;
        std::set_intersection(common.begin(), common.end(), starts.begin(), starts.end(),
                              std::inserter(both, both.begin()));
        common = std::move(both);
      }
      first = false;
    }
    if (common.empty()) common.insert(0);
    edges.assign(common.begin(), common.end());
  }
  edges.push_back(n);
  std::sort(edges.begin(), edges.end());
  std::vector<Long64_t> sizes;
  for (std::size_t i = 1; i < edges.size(); ++i)
    if (edges[i] > edges[i - 1]) sizes.push_back(std::min(edges[i], n) - edges[i - 1]);
  return sizes;
}

TreeLayout tree_layout(const std::string &path, const std::string &name) {
  std::unique_ptr<TFile> f(TFile::Open(path.c_str(), "READ"));
  if (!f || f->IsZombie()) throw std::runtime_error("not a readable ROOT file");
  auto *key = f->GetKey(name.c_str());
  if (!key || std::string(key->GetClassName()) != "TTree")
    throw std::runtime_error("no TTree named '" + name + "' (it holds " +
                             (key ? std::string("a ") + key->GetClassName() : "nothing") +
                             " under that name)");
  auto *t = f->Get<TTree>(name.c_str());
  if (!t) throw std::runtime_error("its TTree '" + name + "' cannot be read (damaged: ROOT "
                                   "got no object from its key)");
  TreeLayout l;
  l.entries = t->GetEntries();
  l.clusters = cluster_sizes(t);
  for (auto *obj : *t->GetListOfBranches()) {
    auto *br = static_cast<TBranch *>(obj);
    l.branches.emplace_back(br->GetName());
    l.zip.push_back(br->GetZipBytes());
    l.baskets += br->GetWriteBasket();
  }
  l.compression = f->GetCompressionSettings();
  l.store_offsets = !t->GetIOFeatures().Test(ROOT::Experimental::EIOFeatures::kGenerateOffsetMap);
  l.auto_flush = t->GetAutoFlush();
  l.zip_bytes = t->GetZipBytes();
  l.tot_bytes = t->GetTotBytes();
  l.file_bytes = f->GetSize();
  return l;
}
}  // namespace hepfmt
