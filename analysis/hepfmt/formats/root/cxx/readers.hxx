// What Python sees of the compiled readers (readers.cxx): plain functions of strings and
// vectors. Python declares only this header to cling and loads the library built from
// readers.cxx, so no process pays for cling parsing RDataFrame's headers (~6 s), as it did
// when the library carried an ACLiC dictionary.
#pragma once
#include <memory>
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
HEPFMT_DECLARE_READER(columnar)
#undef HEPFMT_DECLARE_READER
// RDataFrame's checksums under implicit MT: each slot's runs of consecutive entries folded
// apart, then joined in entry order, so they equal rdf_checksums' on one thread.
std::vector<ULong64_t> rdf_mt_checksums(const std::string &path, const std::string &tree,
                                        const std::vector<std::string> &cols);
// The columnar reader on `threads` threads (the columns dealt out over them, each thread with
// its own file handle): the same checksums and marks as columnar_*, `threads` = 1 is columnar_*.
std::vector<ULong64_t> columnar_mt_checksums(const std::string &path, const std::string &tree,
                                             const std::vector<std::string> &cols, int threads);
std::vector<double> columnar_mt_scan(const std::string &path, const std::string &tree,
                                     const std::vector<std::string> &cols,
                                     std::vector<Long64_t> ends, int threads);
// The hand-over read of a TTree: every selected column of every entry into one contiguous
// array (values, and entry offsets for a jagged one), as uproot's `arrays` returns them. The
// arrays live as long as the returned object (Python holds it until its clock stopped).
struct HandedOver {
  std::vector<double> marks;          // as <loop>_scan's
  std::vector<Long64_t> values;       // values in each column's array
  std::shared_ptr<void> arrays;       // the columns themselves
};
HandedOver handover_scan(const std::string &path, const std::string &tree,
                         const std::vector<std::string> &cols, std::vector<Long64_t> ends,
                         int threads);
// One jagged column's entry offsets as handover_scan fills them (for the tests).
std::vector<Long64_t> handover_offsets(const std::string &path, const std::string &tree,
                                       const std::string &col);
// The checksums of the arrays handover_scan hands over (taken from the arrays once filled).
std::vector<ULong64_t> handover_checksums(const std::string &path, const std::string &tree,
                                          const std::vector<std::string> &cols, int threads);
// ROOT's GetEntriesSerialized at every basket of every jagged branch: [tried, refused,
// ROOT's messages...] (the columnar reader's reason for reading jagged baskets itself).
std::vector<std::string> serialized_refusals(const std::string &path, const std::string &tree);
// codecs.cxx: seconds of each of `passes` passes decompressing the blocks of `path` at
// `offsets` (`zipped` bytes each, `unzipped` once decompressed) the way `how` names: root
// (R__unzip per frame), root-reused (one zstd context for ROOT's zstd frames), zstd,
// zstd-reused, gzip, gzip-reused, lz4 (raw blocks) or memcpy.
std::vector<double> decompress_blocks(const std::string &path,
                                      const std::vector<Long64_t> &offsets,
                                      const std::vector<Long64_t> &zipped,
                                      const std::vector<Long64_t> &unzipped,
                                      const std::string &how, int passes);
std::string zstd_version();
// tree_layout.cxx: a TTree's facts for describe(), in one call (a crash inside it is caught).
struct TreeLayout {
  Long64_t entries = 0;
  std::vector<Long64_t> clusters;       // entries per cluster, in entry order
  std::vector<std::string> branches;    // top-level branches
  std::vector<Long64_t> zip;            // each one's compressed bytes
  Long64_t baskets = 0;
  int compression = 0;
  bool store_offsets = true;            // false: written with kGenerateOffsetMap
  Long64_t auto_flush = 0;
  Long64_t zip_bytes = 0;
  Long64_t tot_bytes = 0;
  Long64_t file_bytes = 0;
};
TreeLayout tree_layout(const std::string &path, const std::string &name);
// The clock the scans' marks are on, for Python to check it is its perf_counter's.
double steady_now();
}  // namespace hepfmt
