// hepfmt's per-branch checksum (analysis/hepfmt/checksum.py), the same definition in C++ for the
// ROOT readers: (count, sum of bit patterns as unsigned integers of the value's width, sum of
// (position + 1) * bit pattern, type code), all modulo 2^64, over the values in file order.
#pragma once
#include <cstdint>
#include <cstring>
#include <stdexcept>
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
// (kind letter << 8) | byte width, as hepfmt.checksum.type_code: b bool, i any integer (its
// sign is not part of it), f float
template <typename T> constexpr ULong64_t type_code() {
  if constexpr (std::is_same_v<T, bool>) return (ULong64_t('b') << 8) | 1;
  else if constexpr (std::is_floating_point_v<T>) return (ULong64_t('f') << 8) | sizeof(T);
  else return (ULong64_t('i') << 8) | sizeof(T);
}
// What the verifying readers do with each value, in file order: fold it into the branch's
// checksum. Positions need the order, so a proof runs on one thread (one RDataFrame slot).
struct Ck {
  ULong64_t n = 0;
  ULong64_t s = 0;
  ULong64_t w = 0;
  ULong64_t t = 0;
  template <typename T> void operator()(const T &x) {
    const ULong64_t b = bits(x);
    n += 1;
    s += b;
    w += n * b;
    t = type_code<T>();
  }
  static void merge(std::vector<Ck> &v) {
    for (std::size_t i = 1; i < v.size(); ++i)
      if (v[i].n) throw std::runtime_error("a proof read ran on more than one thread");
  }
};
}
