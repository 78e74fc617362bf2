// The TTree writer's fill loop (analysis/hepfmt/formats/root/ttree.py): a Python loop over 1500
// branches per event would be ~100x slower.
#include <TTree.h>
#include <cstring>
namespace hepfmt {
// Copy row i of every column into its branch buffer, Fill, repeat. Columns are raw pointers
// (numpy arrays); offsets[c] == 0 marks a scalar column.
void fill_tree(TTree *t, Long64_t n, int ncol, const unsigned long *data,
               const unsigned long *offsets, const unsigned long *bufs, const int *sizes,
               Long64_t reset_at, int basket_size) {
  for (Long64_t i = 0; i < n; ++i) {
    for (int c = 0; c < ncol; ++c) {
      const char *d = reinterpret_cast<const char *>(data[c]);
      char *b = reinterpret_cast<char *>(bufs[c]);
      const int sz = sizes[c];
      if (offsets[c]) {
        const long *o = reinterpret_cast<const long *>(offsets[c]);
        std::memcpy(b, d + o[i] * sz, (o[i + 1] - o[i]) * sz);
      } else {
        std::memcpy(b, d + i * sz, sz);
      }
    }
    t->Fill();
    if (t->GetEntries() == reset_at) t->SetBasketSize("*", basket_size);
  }
}
}
