// Tests of switchyard/data/idx.hpp: round trips, plain and gzip, and every malformed file.
#include "switchyard/data/idx.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <vector>

#include "fixtures.hpp"

using switchyard::data_error;
using switchyard::data::read_idx;

namespace {

const std::vector<std::uint8_t> pixels = fixtures::pattern(2 * 3 * 4);
const std::vector<std::uint8_t> images_file = fixtures::idx_bytes({2, 3, 4}, pixels);

/// Writes `bytes` as `name`, gzip-compressed when `gzip`, and returns the path.
std::filesystem::path write(const fixtures::temp_dir& dir, std::string_view name,
                            const std::vector<std::uint8_t>& bytes, bool gzip) {
  const auto file = dir / name;
  gzip ? fixtures::write_gzip(file, bytes) : fixtures::write_plain(file, bytes);
  return file;
}

std::string read_error(const std::filesystem::path& file) {
  return fixtures::message_of<data_error>([&] { (void)read_idx(file); });
}

}  // namespace

TEST_CASE("idx.round_trip" * doctest::timeout(60)) {
  fixtures::temp_dir dir;
  for (const bool gzip : {false, true}) {
    CAPTURE(gzip);
    // The name says the opposite of the content: detection goes by the magic bytes.
    const auto file = write(dir, gzip ? "images.idx" : "images.gz", images_file, gzip);
    const auto read = read_idx(file);
    CHECK(read.shape == std::vector<std::size_t>{2, 3, 4});
    CHECK(read.values == pixels);
  }
  const std::vector<std::uint8_t> classes{3, 1, 4};
  const auto labels = read_idx(write(dir, "labels.gz", fixtures::idx_bytes({3}, classes), true));
  CHECK(labels.shape == std::vector<std::size_t>{3});
  CHECK(labels.values == classes);
}

TEST_CASE("idx.gzip_payload_larger_than_growth_step" * doctest::timeout(60)) {
  // 3 MiB inflate in several growth steps of the output buffer.
  fixtures::temp_dir dir;
  const auto values = fixtures::pattern(3 * 1024 * 1024, 5);
  const auto read =
      read_idx(write(dir, "big.gz", fixtures::idx_bytes({3 * 1024, 1024}, values), true));
  CHECK(read.shape == std::vector<std::size_t>{3 * 1024, 1024});
  CHECK(read.values == values);
}

TEST_CASE("idx.concatenated_gzip_members" * doctest::timeout(60)) {
  // `cat a.gz b.gz` is a valid gzip file whose content is both parts.
  fixtures::temp_dir dir;
  const auto file = dir / "split.gz";
  const std::span<const std::uint8_t> whole = images_file;
  fixtures::write_gzip(file, whole.first(10));
  fixtures::write_gzip(file, whole.subspan(10), true);
  CHECK(read_idx(file).values == pixels);
}

TEST_CASE("idx.zero_items" * doctest::timeout(60)) {
  fixtures::temp_dir dir;
  const auto read = read_idx(write(dir, "none", fixtures::idx_bytes({0, 28, 28}, {}), false));
  CHECK(read.shape == std::vector<std::size_t>{0, 28, 28});
  CHECK(read.values.empty());
}

TEST_CASE("idx.from_memory" * doctest::timeout(60)) {
  const auto read = read_idx(images_file);
  CHECK(read.shape == std::vector<std::size_t>{2, 3, 4});
  CHECK(read.values == pixels);

  fixtures::temp_dir dir;
  const auto gzip_file = write(dir, "images.gz", images_file, true);
  CHECK(read_idx(fixtures::read_bytes(gzip_file)).values == pixels);

  const auto memory_error = [](std::span<const std::uint8_t> bytes) {
    return fixtures::message_of<data_error>([&] { (void)read_idx(bytes, "blob 7"); });
  };
  fixtures::check_mentions(memory_error({}), {"blob 7: there are no bytes"});
  const std::vector<std::uint8_t> short_data(images_file.begin(), images_file.end() - 2);
  fixtures::check_mentions(memory_error(short_data),
                           {"blob 7: header says 2 items of 12 bytes", "ends after 22 bytes"});
}

TEST_CASE("idx.missing_and_empty_files" * doctest::timeout(60)) {
  fixtures::temp_dir dir;
  fixtures::check_mentions(read_error(dir / "absent.gz"), {"absent.gz", "No such file"});
  fixtures::check_mentions(read_error(dir.path()), {dir.path().string(), "cannot read"});
  fixtures::check_mentions(read_error(write(dir, "empty.gz", {}, false)),
                           {"empty.gz", "the file is empty"});
  // A valid gzip stream of nothing is not an empty file, but holds no IDX header.
  fixtures::check_mentions(read_error(write(dir, "nothing.gz", {}, true)),
                           {"nothing.gz", "too short for an IDX header", "after 0 bytes"});
}

TEST_CASE("idx.bad_header" * doctest::timeout(60)) {
  fixtures::temp_dir dir;
  for (const bool gzip : {false, true}) {
    CAPTURE(gzip);
    auto bad_magic = images_file;
    bad_magic[1] = 0x03;
    fixtures::check_mentions(read_error(write(dir, "magic", bad_magic, gzip)),
                             {"magic", "not an IDX file", "starts with bytes 0, 3"});

    fixtures::check_mentions(
        read_error(write(dir, "floats", fixtures::idx_bytes({2}, pixels, 0x0D), gzip)),
        {"floats", "element type 0xd (32-bit float) is not supported"});

    fixtures::check_mentions(
        read_error(write(dir, "scalar", fixtures::idx_bytes({}, pixels), gzip)),
        {"scalar", "declares 0 dimensions"});

    fixtures::check_mentions(
        read_error(write(dir, "short",
                         std::vector<std::uint8_t>(images_file.begin(), images_file.begin() + 3),
                         gzip)),
        {"short", "too short for an IDX header", "after 3 bytes"});

    // Declares 3 dimensions, but only one extent (4 bytes) follows.
    auto cut_extents = fixtures::idx_bytes({7}, {});
    cut_extents[3] = 3;
    fixtures::check_mentions(read_error(write(dir, "rank", cut_extents, gzip)),
                             {"rank", "declares 3 dimensions", "ends after 4 of them"});

    fixtures::check_mentions(
        read_error(write(dir, "huge", fixtures::idx_bytes({0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF}, {}),
                         gzip)),
        {"huge", "4294967295x4294967295x4294967295", "too large to address"});
  }
}

TEST_CASE("idx.length_disagrees_with_header" * doctest::timeout(60)) {
  fixtures::temp_dir dir;
  for (const bool gzip : {false, true}) {
    CAPTURE(gzip);
    const std::vector<std::uint8_t> short_data(images_file.begin(), images_file.end() - 2);
    fixtures::check_mentions(read_error(write(dir, "t10k-images", short_data, gzip)),
                             {"t10k-images: header says 2 items of 12 bytes (shape 2x3x4)",
                              "the data ends after 22 bytes"});

    auto long_data = images_file;
    long_data.insert(long_data.end(), {1, 2, 3});
    fixtures::check_mentions(read_error(write(dir, "long", long_data, gzip)),
                             {"long: header says 2 items of 12 bytes", "trailing garbage"});

    // A labels file read as images: labels 0 to 7 become extents 66051 and 67438087. Nothing of
    // the claimed size (about 2^45 bytes) is allocated: the data runs out first.
    auto labels_as_images =
        fixtures::idx_bytes({10}, std::vector<std::uint8_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
    labels_as_images[3] = 3;
    fixtures::check_mentions(read_error(write(dir, "mislabelled", labels_as_images, gzip)),
                             {"mislabelled: header says 10 items of 4454353084437 bytes "
                              "(shape 10x66051x67438087) but the data ends after 2 bytes"});
  }
}

TEST_CASE("idx.broken_gzip_stream" * doctest::timeout(60)) {
  fixtures::temp_dir dir;
  const auto good = dir / "good.gz";
  fixtures::write_gzip(good, fixtures::idx_bytes({2000}, fixtures::pattern(2000)));
  const auto compressed = fixtures::read_bytes(good);

  for (const std::size_t cut : {std::size_t{1}, std::size_t{8}, compressed.size() / 2}) {
    CAPTURE(cut);
    const std::vector<std::uint8_t> truncated(compressed.begin(), compressed.end() - cut);
    const auto file = dir / "truncated.gz";
    fixtures::write_plain(file, truncated);
    fixtures::check_mentions(read_error(file), {"truncated.gz", "the gzip stream is truncated"});
  }

  auto bad_crc = compressed;
  bad_crc[bad_crc.size() - 8] ^= 0xFF;  // first byte of the CRC-32 trailer
  const auto crc_file = dir / "crc.gz";
  fixtures::write_plain(crc_file, bad_crc);
  fixtures::check_mentions(read_error(crc_file),
                           {"crc.gz", "corrupt gzip data", "incorrect data check"});

  for (const std::vector<std::uint8_t>& garbage :
       {std::vector<std::uint8_t>{'\n'}, std::vector<std::uint8_t>{1, 2, 3, 4, 5}}) {
    CAPTURE(garbage.size());
    auto followed = compressed;
    followed.insert(followed.end(), garbage.begin(), garbage.end());
    const auto file = dir / "followed.gz";
    fixtures::write_plain(file, followed);
    fixtures::check_mentions(
        read_error(file), {"followed.gz: trailing garbage: the " + std::to_string(garbage.size()) +
                           " bytes from offset " + std::to_string(compressed.size()) +
                           " on are not part of the gzip stream"});
  }
}
