// Reader for IDX files (the MNIST container format), plain or gzip-compressed, that checks every
// byte against the header and never trusts a size it has not seen data for.
#pragma once

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <istream>
#include <limits>
#include <memory>
#include <new>
#include <span>
#include <streambuf>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "switchyard/core/error.hpp"
#include "switchyard/data/dataset.hpp"

namespace switchyard::data {

/// @brief The contents of an IDX file of unsigned bytes: its shape and its values, row-major.
///
/// IDX (http://yann.lecun.com/exdb/mnist/) is a big-endian header (two zero bytes, an element
/// type, a dimension count, one 32-bit size per dimension) followed by the values. The first
/// dimension counts items (images, labels); the others give the shape of one item.
/// @code
/// auto labels = switchyard::data::read_idx("/data/t10k-labels-idx1-ubyte.gz");
/// // labels.shape == {10000}, labels.values.size() == 10000
/// @endcode
struct idx_array {
  std::vector<std::size_t> shape;
  std::vector<std::uint8_t> values;
};

/// @brief Reads an IDX file of unsigned bytes (element type 0x08), gzip-compressed or not: a file
/// that starts with the gzip magic bytes is inflated on the fly, whatever its name.
///
/// @throws data_error naming the file and the problem when it is missing or unreadable, empty,
/// not IDX (magic), of another element type, shorter or longer than its header says, or when its
/// gzip stream is corrupt or truncated. Memory grows with the data actually decompressed, so a
/// header that claims absurd sizes fails on the data, not on the allocation.
[[nodiscard]] idx_array read_idx(const std::filesystem::path& file);

/// @brief Reads IDX bytes already in memory (an embedded resource, a received message), gzip or
/// not, with the same checks and messages as the file reader; `name` stands for the file name in
/// the messages.
///
/// @throws data_error naming `name` and the problem, for the same reasons as `read_idx(file)`.
[[nodiscard]] idx_array read_idx(std::span<const std::uint8_t> bytes,
                                 std::string_view name = "in-memory IDX data");

/// @brief Reads an IDX image file (3 dimensions: count x rows x cols) and an IDX label file
/// (1 dimension: count), each plain or gzip-compressed, into a data set.
/// @throws data_error for any problem of `read_idx`, a file of the wrong rank, image and label
/// counts that disagree (naming both files), or a label not below `classes`.
/// @code
/// auto train = switchyard::data::load_idx_dataset("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz");
/// @endcode
[[nodiscard]] std::shared_ptr<const dataset> load_idx_dataset(const std::filesystem::path& images,
                                                              const std::filesystem::path& labels,
                                                              std::size_t classes = 10);

}  // namespace switchyard::data

// ----------------------------------------------------------------------------------------------
// Implementation
// ----------------------------------------------------------------------------------------------

namespace switchyard::detail {

/// A read-only stream buffer over bytes in memory, so that they take the same path through
/// `idx_source` as a file does.
class memory_streambuf : public std::streambuf {
 public:
  explicit memory_streambuf(std::span<const std::uint8_t> bytes) {
    // std::streambuf wants a mutable get area; nothing writes through it (no putback here).
    char* begin = const_cast<char*>(reinterpret_cast<const char*>(bytes.data()));
    setg(begin, begin, begin + bytes.size());
  }
};

/// The bytes of a file or of memory in order, inflated when they are gzip. Reads go straight into
/// the caller's buffer; only the compressed input passes through a fixed chunk.
class idx_source {
 public:
  explicit idx_source(const std::filesystem::path& file);
  idx_source(std::span<const std::uint8_t> bytes, std::string_view name);
  ~idx_source();
  idx_source(const idx_source&) = delete;
  idx_source& operator=(const idx_source&) = delete;

  /// Fills `out` and returns its size, or returns less when the data ends.
  std::size_t read(std::span<std::uint8_t> out);
  [[nodiscard]] bool compressed() const noexcept { return gzip_; }
  [[nodiscard]] std::uintmax_t file_bytes() const noexcept { return file_bytes_; }
  /// Throws the `data_error` of every IDX problem: the file's name, then what is wrong with it.
  [[noreturn]] void fail(std::string_view problem,
                         source_location where = source_location::current()) const {
    raise<data_error>(str(name_, ": ", problem), where);
  }

 private:
  /// Starts reading from `buffer`, which holds `file_bytes_` bytes.
  void open(std::unique_ptr<std::streambuf> buffer);
  std::size_t read_plain(std::span<std::uint8_t> out);
  std::size_t read_gzip(std::span<std::uint8_t> out);
  /// Loads the next chunk of the file; false at its end.
  bool refill();

  std::string name_;
  std::unique_ptr<std::streambuf> buffer_;
  std::istream in_{nullptr};
  std::uintmax_t file_bytes_ = 0;
  std::vector<std::uint8_t> chunk_;
  std::size_t chunk_pos_ = 0;
  std::size_t chunk_end_ = 0;
  std::uintmax_t chunk_offset_ = 0;  // file offset of chunk_[0], for messages
  bool gzip_ = false;
  bool member_ended_ = false;      // the current gzip member is complete
  bool later_member_ = false;      // decoding what follows a complete member
  std::uintmax_t member_end_ = 0;  // file offset just past the last complete member
  z_stream zs_{};
};

inline idx_source::idx_source(const std::filesystem::path& file) : name_(file.string()) {
  std::error_code ec;
  file_bytes_ = std::filesystem::file_size(file, ec);
  if (ec) fail(str("cannot read: ", ec.message()));
  if (file_bytes_ == 0) fail("the file is empty");
  auto buffer = std::make_unique<std::filebuf>();
  if (buffer->open(file, std::ios::in | std::ios::binary) == nullptr) {
    fail("cannot open for reading");
  }
  open(std::move(buffer));
}

inline idx_source::idx_source(std::span<const std::uint8_t> bytes, std::string_view name)
    : name_(name), file_bytes_(bytes.size()) {
  if (bytes.empty()) fail("there are no bytes");
  open(std::make_unique<memory_streambuf>(bytes));
}

inline void idx_source::open(std::unique_ptr<std::streambuf> buffer) {
  buffer_ = std::move(buffer);
  in_.rdbuf(buffer_.get());
  chunk_.resize(std::size_t{1} << 16);
  refill();
  gzip_ = chunk_end_ >= 2 && chunk_[0] == 0x1f && chunk_[1] == 0x8b;
  // 16 + MAX_WBITS: expect a gzip wrapper and check its CRC-32 and length trailer.
  if (gzip_ && inflateInit2(&zs_, 16 + MAX_WBITS) != Z_OK) throw std::bad_alloc();
}

inline idx_source::~idx_source() {
  if (gzip_) inflateEnd(&zs_);
}

inline std::size_t idx_source::read(std::span<std::uint8_t> out) {
  return gzip_ ? read_gzip(out) : read_plain(out);
}

inline bool idx_source::refill() {
  chunk_offset_ += chunk_end_;
  in_.read(reinterpret_cast<char*>(chunk_.data()), static_cast<std::streamsize>(chunk_.size()));
  chunk_pos_ = 0;
  chunk_end_ = static_cast<std::size_t>(in_.gcount());
  if (in_.bad()) fail("read error");
  return chunk_end_ != 0;
}

inline std::size_t idx_source::read_plain(std::span<std::uint8_t> out) {
  const std::size_t buffered = std::min(out.size(), chunk_end_ - chunk_pos_);
  std::copy_n(chunk_.data() + chunk_pos_, buffered, out.data());
  chunk_pos_ += buffered;
  if (buffered == out.size()) return buffered;
  // The payload bypasses the chunk: one read into its final place.
  in_.read(reinterpret_cast<char*>(out.data() + buffered),
           static_cast<std::streamsize>(out.size() - buffered));
  if (in_.bad()) fail("read error");
  return buffered + static_cast<std::size_t>(in_.gcount());
}

inline std::size_t idx_source::read_gzip(std::span<std::uint8_t> out) {
  std::size_t produced = 0;
  while (produced < out.size()) {
    if (chunk_pos_ == chunk_end_ && !refill()) {
      if (member_ended_) return produced;
      if (later_member_ && zs_.total_out == 0) break;
      fail(str("the gzip stream is truncated: the file ends after ", file_bytes_,
               " bytes, before the end of the compressed data"));
    }
    if (member_ended_) {
      // More bytes after a complete member: a further member (gzip allows concatenation) or
      // trailing garbage, told apart by inflating them.
      inflateReset(&zs_);
      member_ended_ = false;
      later_member_ = true;
    }
    // Both counts fit in uInt: the input is one chunk, the output is taken in pieces of 1 GiB.
    zs_.next_in = chunk_.data() + chunk_pos_;
    zs_.avail_in = static_cast<uInt>(chunk_end_ - chunk_pos_);
    zs_.next_out = out.data() + produced;
    zs_.avail_out = static_cast<uInt>(std::min<std::size_t>(out.size() - produced, 1u << 30));
    const uInt room = zs_.avail_out;
    const int status = inflate(&zs_, Z_NO_FLUSH);
    chunk_pos_ = chunk_end_ - zs_.avail_in;
    produced += room - zs_.avail_out;
    if (status == Z_STREAM_END) {
      member_ended_ = true;
      member_end_ = chunk_offset_ + chunk_pos_;
    } else if (status == Z_MEM_ERROR) {
      throw std::bad_alloc();
    } else if (status != Z_OK && status != Z_BUF_ERROR) {
      if (later_member_ && zs_.total_out == 0) break;
      fail(str("corrupt gzip data near compressed byte ", chunk_offset_ + chunk_pos_,
               " (zlib: ", zs_.msg != nullptr ? zs_.msg : "unknown error", ")"));
    }
  }
  if (produced == out.size()) return produced;
  fail(str("trailing garbage: the ", file_bytes_ - member_end_, " bytes from offset ", member_end_,
           " on are not part of the gzip stream"));
}

inline std::string_view idx_type_name(std::uint8_t type) {
  switch (type) {
    case 0x08:
      return "unsigned byte";
    case 0x09:
      return "signed byte";
    case 0x0B:
      return "16-bit integer";
    case 0x0C:
      return "32-bit integer";
    case 0x0D:
      return "32-bit float";
    case 0x0E:
      return "64-bit float";
    default:
      return "not an IDX type";
  }
}

inline std::string idx_shape_string(std::span<const std::size_t> shape) {
  std::string out;
  for (const std::size_t extent : shape) {
    if (!out.empty()) out += 'x';
    out += std::to_string(extent);
  }
  return out;
}

/// Reads one IDX array from `source`, checking every byte against the header.
inline data::idx_array read_idx(idx_source& source) {
  std::array<std::uint8_t, 4> magic{};
  if (const std::size_t got = source.read(magic); got < magic.size()) {
    source.fail(str("too short for an IDX header: the data ends after ", got, " bytes"));
  }
  if (magic[0] != 0 || magic[1] != 0) {
    source.fail(str("not an IDX file: it starts with bytes ", unsigned{magic[0]}, ", ",
                    unsigned{magic[1]}, " instead of the two zero bytes of the IDX magic"));
  }
  if (magic[2] != 0x08) {
    source.fail(str("element type 0x", std::hex, unsigned{magic[2]}, std::dec, " (",
                    idx_type_name(magic[2]), ") is not supported: only unsigned byte (0x08) is"));
  }
  const std::size_t rank = magic[3];
  if (rank == 0) source.fail("the header declares 0 dimensions");

  std::vector<std::uint8_t> extents(4 * rank);
  if (const std::size_t got = source.read(extents); got < extents.size()) {
    source.fail(str("the header declares ", rank, " dimensions, which take ", extents.size(),
                    " bytes, but the data ends after ", got, " of them"));
  }
  data::idx_array out;
  out.shape.resize(rank);
  std::size_t item_bytes = 1;
  bool overflow = false;
  for (std::size_t d = 0; d < rank; ++d) {
    const std::uint8_t* big_endian = extents.data() + 4 * d;
    out.shape[d] = std::size_t{big_endian[0]} << 24 | std::size_t{big_endian[1]} << 16 |
                   std::size_t{big_endian[2]} << 8 | std::size_t{big_endian[3]};
    if (d == 0) continue;
    overflow |=
        out.shape[d] != 0 && item_bytes > std::numeric_limits<std::size_t>::max() / out.shape[d];
    item_bytes *= out.shape[d];
  }
  const std::size_t items = out.shape[0];
  overflow |= item_bytes != 0 && items > std::numeric_limits<std::size_t>::max() / item_bytes;
  if (overflow) {
    source.fail(
        str("the header declares shape ", idx_shape_string(out.shape), ", too large to address"));
  }
  const std::size_t claim = items * item_bytes;
  const auto says = [&] {
    return str("header says ", items, " items of ", item_bytes, " bytes (shape ",
               idx_shape_string(out.shape), ")");
  };

  if (!source.compressed()) {
    // The file size bounds the payload: check it before allocating anything of the claimed size.
    const std::uintmax_t data_bytes = source.file_bytes() - 4 - extents.size();
    if (data_bytes < claim) {
      source.fail(str(says(), " but the data ends after ", data_bytes, " bytes"));
    }
    if (data_bytes > claim) {
      source.fail(str(says(), " but ", data_bytes - claim, " bytes of trailing garbage follow"));
    }
  }
  // A compressed payload's size is only known once inflated: grow the buffer with the data that
  // actually arrives (at most twice what arrived), capped by the claim.
  std::size_t filled = 0;
  while (filled < claim) {
    const std::size_t target =
        source.compressed() ? std::min(claim, std::max(2 * filled, std::size_t{1} << 20)) : claim;
    out.values.resize(target);
    filled += source.read(std::span(out.values).subspan(filled));
    if (filled < target) {
      source.fail(str(says(), " but the data ends after ", filled, " bytes"));
    }
  }
  std::uint8_t extra = 0;
  if (source.read(std::span(&extra, 1)) != 0) {
    source.fail(str(says(), " but the data goes on after them (trailing garbage)"));
  }
  return out;
}

}  // namespace switchyard::detail

namespace switchyard::data {

inline idx_array read_idx(const std::filesystem::path& file) {
  detail::idx_source source(file);
  return detail::read_idx(source);
}

inline idx_array read_idx(std::span<const std::uint8_t> bytes, std::string_view name) {
  detail::idx_source source(bytes, name);
  return detail::read_idx(source);
}

inline std::shared_ptr<const dataset> load_idx_dataset(const std::filesystem::path& images,
                                                       const std::filesystem::path& labels, std::size_t classes) {
  detail::check_class_count(classes);
  idx_array image_file = read_idx(images);
  const auto& shape = image_file.shape;
  if (shape.size() != 3 || shape[1] == 0 || shape[2] == 0) {
    detail::raise<data_error>(detail::str(images.string(),
                                          ": expected images (3 dimensions: count x rows x cols, "
                                          "rows and cols not 0) but the header declares shape ",
                                          detail::idx_shape_string(shape)));
  }
  idx_array label_file = read_idx(labels);
  if (label_file.shape.size() != 1) {
    detail::raise<data_error>(
        detail::str(labels.string(), ": expected labels (1 dimension: count) but the header ",
                    "declares shape ", detail::idx_shape_string(label_file.shape)));
  }
  if (shape[0] != label_file.shape[0]) {
    detail::raise<data_error>(detail::str(images.string(), " holds ", shape[0], " images but ",
                                          labels.string(), " holds ", label_file.shape[0],
                                          " labels"));
  }
  if (const std::size_t bad = detail::first_label_out_of_range(label_file.values, classes);
      bad < label_file.values.size()) {
    detail::raise<data_error>(detail::str(labels.string(), ": label ",
                                          unsigned{label_file.values[bad]}, " of example ", bad,
                                          " is out of range for ", classes, " classes"));
  }
  return std::make_shared<const dataset>(std::move(image_file.values), std::move(label_file.values),
                                         shape[1], shape[2], classes);
}

}  // namespace switchyard::data
