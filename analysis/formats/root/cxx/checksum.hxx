// hepfmt's per-branch checksum (analysis/checksum.py), the same definition in C++ for the
// ROOT readers: (count, sum of bit patterns as unsigned integers of the value's width).
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>
#include <RtypesCore.h>
namespace hepfmt {
template <typename T> inline ULong64_t bits(T x) {
  if constexpr (std::is_same_v<T, bool>) { return x ? 1 : 0; }
  else if constexpr (sizeof(T) == 1) { uint8_t u; std::memcpy(&u, &x, 1); return u; }
  else if constexpr (sizeof(T) == 2) { uint16_t u; std::memcpy(&u, &x, 2); return u; }
  else if constexpr (sizeof(T) == 4) { uint32_t u; std::memcpy(&u, &x, 4); return u; }
  else { uint64_t u; std::memcpy(&u, &x, 8); return u; }
}
// What the verifying readers do with each value: fold it into the branch's checksum.
struct Ck {
  ULong64_t n = 0;
  ULong64_t s = 0;
  template <typename T> void operator()(const T &x) { n += 1; s += bits(x); }
  static void merge(std::vector<Ck> &v) {
    for (std::size_t i = 1; i < v.size(); ++i) { v[0].n += v[i].n; v[0].s += v[i].s; }
  }
};
}
