// The metadata-cost study's ROOT decoders (analysis/hepfmt/metastudy/decode.py): open, decode the
// TTree header or RNTuple header + footer + page lists, close.
#include <TFile.h>
#include <TMemFile.h>
#include <TTree.h>
#include <ROOT/RNTuple.hxx>
#include <ROOT/RNTupleDescriptor.hxx>
#include <ROOT/RNTupleReader.hxx>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace hepfmt_meta {
// Each function opens, decodes and closes; returns {columns, entries}.
std::vector<Long64_t> TreeOf(TFile &f, const std::string &name)
{
  std::unique_ptr<TTree> t(f.Get<TTree>(name.c_str()));
  if (!t) throw std::runtime_error("no TTree named " + name);
  return {t->GetListOfBranches()->GetEntriesFast(), t->GetEntries()};
}

std::vector<Long64_t> NTupleOf(TFile &f, const std::string &name)
{
  std::unique_ptr<ROOT::RNTuple> anchor(f.Get<ROOT::RNTuple>(name.c_str()));
  if (!anchor) throw std::runtime_error("no RNTuple named " + name);
  auto reader = ROOT::RNTupleReader::Open(*anchor);
  const auto &d = reader->GetDescriptor();
  if (d.GetNActiveClusters() != d.GetNClusters())
    throw std::runtime_error("RNTupleReader::Open left page lists undecoded");
  return {static_cast<Long64_t>(d.GetFieldDescriptor(d.GetFieldZeroId()).GetLinkIds().size()),
          static_cast<Long64_t>(d.GetNEntries())};
}

std::vector<Long64_t> FromMemory(ULong64_t address, Long64_t size, bool ntuple,
                                 const std::string &name)
{
  TMemFile f("hepfmt-metadata.root",
             TMemFile::ZeroCopyView_t(reinterpret_cast<const char *>(address), size));
  if (f.IsZombie()) throw std::runtime_error("not a ROOT file");
  return ntuple ? NTupleOf(f, name) : TreeOf(f, name);
}

std::vector<Long64_t> FromDisk(const std::string &path, bool ntuple, const std::string &name)
{
  std::unique_ptr<TFile> f(TFile::Open(path.c_str(), "READ"));
  if (!f || f->IsZombie()) throw std::runtime_error("not a readable ROOT file");
  return ntuple ? NTupleOf(*f, name) : TreeOf(*f, name);
}
}
