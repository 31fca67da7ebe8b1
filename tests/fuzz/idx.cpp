// libFuzzer target for switchyard/data/idx.hpp: whatever the bytes, read_idx either returns an
// array whose values match its shape or throws data_error. A crash, a sanitizer report, another
// exception or a mismatched array is a bug. Each input is read as it is (plain or gzip, as its
// first bytes say) and once more gzip-compressed here: zlib is not instrumented, so mutated
// compressed bytes rarely get past its checks, while this way every IDX header and payload the
// fuzzer makes also reaches the reader's gzip path.
#include "switchyard/data/idx.hpp"

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

namespace {

void read_and_check(std::span<const std::uint8_t> bytes) {
  try {
    const auto array = switchyard::data::read_idx(bytes, "fuzz input");
    std::size_t elements = 1;
    for (const std::size_t extent : array.shape) elements *= extent;
    if (array.shape.empty() || elements != array.values.size()) std::abort();
  } catch (const switchyard::data_error&) {
    // The expected outcome for malformed input.
  }
}

/// `bytes` as one gzip member.
std::vector<std::uint8_t> gzip(std::span<const std::uint8_t> bytes) {
  z_stream zs{};
  // 16 + MAX_WBITS: write a gzip wrapper, as gzip(1) does.
  if (deflateInit2(&zs, 1, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) std::abort();
  std::vector<std::uint8_t> out(deflateBound(&zs, static_cast<uLong>(bytes.size())));
  zs.next_in = const_cast<Bytef*>(bytes.data());  // zlib's API is not const; it only reads
  zs.avail_in = static_cast<uInt>(bytes.size());
  zs.next_out = out.data();
  zs.avail_out = static_cast<uInt>(out.size());
  if (deflate(&zs, Z_FINISH) != Z_STREAM_END) std::abort();
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  read_and_check(bytes);
  read_and_check(gzip(bytes));
  return 0;
}
