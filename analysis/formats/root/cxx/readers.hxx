// What Python sees of the compiled readers (readers.cxx): plain functions of strings and
// vectors. Python declares only this header to cling and loads the library built from
// readers.cxx, so no process pays for cling parsing RDataFrame's headers (~6 s), as it did
// when the library carried an ACLiC dictionary.
#pragma once
#include <string>
#include <vector>
#include <RtypesCore.h>
namespace hepfmt {
// The entry after each cluster's last: a TTree's cluster iterator or an RNTuple's clusters.
std::vector<Long64_t> cluster_ends(const std::string &path, const std::string &name);
// Per loop: <loop>_checksums (count, sum) per column, the untimed proof; <loop>_scan, the
// timed read, returning [opened, entries done, time, entries done, time, ...] at `ends`.
#define HEPFMT_DECLARE_READER(LOOP)                                                           \
  std::vector<ULong64_t> LOOP##_checksums(const std::string &path, const std::string &tree,   \
                                          const std::vector<std::string> &cols);             \
  std::vector<double> LOOP##_scan(const std::string &path, const std::string &tree,           \
                                  const std::vector<std::string> &cols,                      \
                                  std::vector<Long64_t> ends);
HEPFMT_DECLARE_READER(rdf)
HEPFMT_DECLARE_READER(ttreereader)
HEPFMT_DECLARE_READER(getentry)
#undef HEPFMT_DECLARE_READER
// The clock the scans' marks are on, for Python to check it is its perf_counter's.
double steady_now();
}  // namespace hepfmt
