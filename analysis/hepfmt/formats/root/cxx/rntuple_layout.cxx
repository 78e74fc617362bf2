// What the RNTuple adapter's describe() needs from the descriptor (analysis/hepfmt/formats/root/
// rntuple.py), gathered in C++: a Python loop over every page of every column takes seconds.
#include <ROOT/RNTupleDescriptor.hxx>
#include <ROOT/RNTupleReader.hxx>
#include <algorithm>
#include <set>
#include <stdexcept>
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

// The pages of `fields` (their subfields' too) as [offset, bytes of data, bytes unpacked] per
// page, for the codec bound: the locator's bytes exclude the page's checksum (8 bytes after
// them), the unpacked size is the column's elements at their bits on storage. A page that same-page
// merging stores once is listed once.
std::vector<Long64_t> pages(const std::string &path, const std::string &name,
                            const std::vector<std::string> &fields) {
  auto reader = ROOT::RNTupleReader::Open(name, path);
  const auto &d = reader->GetDescriptor();
  std::vector<ROOT::DescriptorId_t> cols;
  for (const auto &f : fields) {
    const auto id = d.FindFieldId(f);
    if (id == ROOT::kInvalidDescriptorId) throw std::runtime_error("no field " + f);
    columns_of(d, id, cols);
  }
  std::vector<Long64_t> out;
  std::set<std::uint64_t> seen;
  for (const auto &c : d.GetClusterIterable())
    for (auto col : cols) {
      if (!c.ContainsColumn(col)) continue;
      const auto bits = d.GetColumnDescriptor(col).GetBitsOnStorage();
      for (const auto &p : c.GetPageRange(col).GetPageInfos()) {
        const auto &loc = p.GetLocator();
        const auto at = loc.GetPosition<std::uint64_t>();
        if (!seen.insert(at).second) continue;
        out.push_back(Long64_t(at));
        out.push_back(Long64_t(loc.GetNBytesOnStorage()));
        out.push_back((Long64_t(p.GetNElements()) * bits + 7) / 8);
      }
    }
  return out;
}
}
