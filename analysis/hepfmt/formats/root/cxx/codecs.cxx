// The codec bound (analysis/hepfmt/measure/bound.py): a file's own compressed blocks decompressed by
// the codec library alone, on one core, with nothing of any format's reader around it. Built
// into the readers' library (backend.compile_readers) because ROOT's libCore carries the codecs
// ROOT reads with: R__unzip (ROOT's framing, a new zstd context per frame, as TBasket and
// RNTuple's page source call it) and the zstd and LZ4 it bundles; zlib is the system's, which
// ROOT links too.
#include "readers.hxx"

#include <RZip.h>
#include <zlib.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

// libCore exports these (ROOT's builtin zstd and LZ4); their headers are not installed.
extern "C" {
struct ZSTD_DCtx_s;
typedef struct ZSTD_DCtx_s ZSTD_DCtx;
ZSTD_DCtx *ZSTD_createDCtx(void);
size_t ZSTD_freeDCtx(ZSTD_DCtx *);
size_t ZSTD_decompressDCtx(ZSTD_DCtx *, void *, size_t, const void *, size_t);
size_t ZSTD_decompress(void *, size_t, const void *, size_t);
unsigned ZSTD_isError(size_t);
const char *ZSTD_getErrorName(size_t);
unsigned ZSTD_versionNumber(void);
int LZ4_decompress_safe(const char *, char *, int, int);
}

namespace hepfmt {
namespace {
constexpr int kFrameHeader = 9;  // ROOT's: algorithm (2), method (1), sizes (3 + 3, little-endian)

int le3(const unsigned char *p) { return p[0] | (p[1] << 8) | (p[2] << 16); }

[[noreturn]] void fail(const std::string &how, long long block, const std::string &why) {
  throw std::runtime_error(how + ": block " + std::to_string(block) + ": " + why);
}

struct Zstd {
  ZSTD_DCtx *ctx = ZSTD_createDCtx();
  ~Zstd() { ZSTD_freeDCtx(ctx); }
};

struct Inflater {
  z_stream z{};
  bool open = false;
  ~Inflater() { if (open) inflateEnd(&z); }
  // a gzip or zlib stream (window bits 15 + 32: detect the header) or raw deflate (-15: ORC's
  // zlib blocks), into at most `cap` bytes; a reused stream keeps its window bits
  std::size_t run(const unsigned char *src, std::size_t n, unsigned char *dst, std::size_t cap,
                  bool reuse, int bits) {
    if (!open || !reuse) {
      if (open) inflateEnd(&z);
      z = z_stream{};
      if (inflateInit2(&z, bits) != Z_OK) throw std::runtime_error("inflateInit2 failed");
      open = true;
    } else if (inflateReset(&z) != Z_OK) {
      throw std::runtime_error("inflateReset failed");
    }
    z.next_in = const_cast<unsigned char *>(src);
    z.avail_in = unsigned(n);
    z.next_out = dst;
    z.avail_out = unsigned(cap);
    const int rc = inflate(&z, Z_FINISH);
    if (rc != Z_STREAM_END) return std::size_t(-1);
    return cap - z.avail_out;
  }
};

// One block as `how` decompresses it; the bytes it produced.
std::size_t one_block(const std::string &how, long long k, const unsigned char *src,
                      std::size_t n, unsigned char *dst, std::size_t cap, Zstd &zstd,
                      Inflater &inflater) {
  if (how == "memcpy" || n == cap) {  // a block stored as it is (incompressible)
    std::memcpy(dst, src, cap);
    return cap;
  }
  if (how == "root" || how == "root-reused") {
    std::size_t in = 0, out = 0;
    while (in + kFrameHeader <= n) {
      const unsigned char *f = src + in;
      const int csize = le3(f + 3), usize = le3(f + 6);
      if (in + kFrameHeader + csize > n || out + usize > cap) fail(how, k, "frame overruns");
      if (how == "root-reused" && f[0] == 'Z' && f[1] == 'S') {
        const std::size_t got =
            ZSTD_decompressDCtx(zstd.ctx, dst + out, usize, f + kFrameHeader, csize);
        if (ZSTD_isError(got) || got != std::size_t(usize))
          fail(how, k, ZSTD_isError(got) ? ZSTD_getErrorName(got) : "short frame");
      } else {
        int srcsize = kFrameHeader + csize, tgtsize = usize, irep = 0;
        R__unzip(&srcsize, f, &tgtsize, dst + out, &irep);
        if (irep != usize) fail(how, k, "R__unzip gave " + std::to_string(irep) + " of " +
                                            std::to_string(usize) + " bytes");
      }
      in += kFrameHeader + csize;
      out += usize;
    }
    return out;
  }
  if (how == "zstd" || how == "zstd-reused") {
    const std::size_t got = how == "zstd" ? ZSTD_decompress(dst, cap, src, n)
                                          : ZSTD_decompressDCtx(zstd.ctx, dst, cap, src, n);
    if (ZSTD_isError(got)) fail(how, k, ZSTD_getErrorName(got));
    return got;
  }
  if (how == "gzip" || how == "gzip-reused" || how == "deflate" || how == "deflate-reused") {
    const bool reuse = how.find("-reused") != std::string::npos, raw = how[0] == 'd';
    const std::size_t got = inflater.run(src, n, dst, cap, reuse, raw ? -15 : 15 + 32);
    if (got == std::size_t(-1)) fail(how, k, "inflate failed");
    return got;
  }
  if (how == "lz4") {
    const int got = LZ4_decompress_safe(reinterpret_cast<const char *>(src),
                                        reinterpret_cast<char *>(dst), int(n), int(cap));
    if (got < 0) fail(how, k, "LZ4_decompress_safe failed");
    return std::size_t(got);
  }
  throw std::runtime_error("unknown decompression " + how);
}
}  // namespace

std::vector<double> decompress_blocks(const std::string &path,
                                      const std::vector<Long64_t> &offsets,
                                      const std::vector<Long64_t> &zipped,
                                      const std::vector<Long64_t> &unzipped,
                                      const std::string &how, int passes) {
  if (offsets.size() != zipped.size() || zipped.size() != unzipped.size())
    throw std::runtime_error("offsets, zipped and unzipped differ in length");
  // Every block in memory first: the bound is the codec's, not the disk's.
  std::vector<std::size_t> at(zipped.size() + 1, 0);
  std::size_t largest = 0;
  for (std::size_t k = 0; k < zipped.size(); ++k) {
    if (zipped[k] < 0 || unzipped[k] < 0) throw std::runtime_error("negative block size");
    at[k + 1] = at[k] + std::size_t(zipped[k]);
    largest = std::max(largest, std::size_t(unzipped[k]));
  }
  std::unique_ptr<std::FILE, int (*)(std::FILE *)> f(std::fopen(path.c_str(), "rb"), std::fclose);
  if (!f) throw std::runtime_error("cannot open " + path);
  std::vector<unsigned char> in(at.back()), out(largest);
  for (std::size_t k = 0; k < zipped.size(); ++k) {
    if (std::fseek(f.get(), long(offsets[k]), SEEK_SET) != 0 ||
        std::fread(in.data() + at[k], 1, std::size_t(zipped[k]), f.get()) !=
            std::size_t(zipped[k]))
      throw std::runtime_error("block " + std::to_string(k) + " lies beyond the end of " + path);
  }
  std::vector<double> seconds;
  Zstd zstd;
  Inflater inflater;
  for (int pass = 0; pass < passes; ++pass) {
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t k = 0; k < zipped.size(); ++k) {
      const std::size_t got = one_block(how, long(k), in.data() + at[k], std::size_t(zipped[k]),
                                        out.data(), std::size_t(unzipped[k]), zstd, inflater);
      if (got != std::size_t(unzipped[k]))
        fail(how, long(k), std::to_string(got) + " bytes, " + std::to_string(unzipped[k]) +
                               " expected");
      asm volatile("" : : "r"(out.data()) : "memory");  // the output is not dead
    }
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return seconds;
}

std::string zstd_version() {
  const unsigned v = ZSTD_versionNumber();
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
         std::to_string(v % 100);
}
}  // namespace hepfmt
