// train/checkpoint/file.hpp: the atomic POSIX write (a temporary file, fsync, rename) and the
// whole-file read, both raising data_error that names the file.
#include <switchyard/train/checkpoint/file.hpp>

#include "../scratch.hpp"

#include <doctest/doctest.h>

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <vector>

namespace sy = switchyard;
namespace fs = std::filesystem;

namespace {

using test_files::scratch;

std::span<const std::byte> bytes_of(const std::string& text) { return std::as_bytes(std::span(text.data(), text.size())); }

std::string text_of(const std::vector<char>& bytes) { return {bytes.begin(), bytes.end()}; }

}  // namespace

TEST_CASE("checkpoint.file.write: the parts land one after the other, replacing the file, with no temporary left") {
  scratch dir("file_write");
  const fs::path file = dir.path / "checkpoint.bin";
  const std::string header = "HEAD";
  const std::string payload = std::string("pay\0load", 8);
  sy::detail::write_file_atomically(file, {bytes_of(header), bytes_of(payload)});
  CHECK(text_of(sy::detail::read_file(file)) == header + payload);
  CHECK_FALSE(fs::exists(dir.path / "checkpoint.bin.tmp"));
  const std::string shorter = "x";
  sy::detail::write_file_atomically(file, {bytes_of(shorter)});
  CHECK(text_of(sy::detail::read_file(file)) == "x");
  sy::detail::write_file_atomically(file, {});
  CHECK(sy::detail::read_file(file).empty());
  CHECK(fs::file_size(file) == 0);
}

TEST_CASE("checkpoint.file.write: a relative path without a directory is written in the working directory") {
  scratch dir("file_relative");
  const fs::path before = fs::current_path();
  fs::current_path(dir.path);
  const std::string text = "relative";
  sy::detail::write_file_atomically("plain.bin", {bytes_of(text)});
  fs::current_path(before);
  CHECK(text_of(sy::detail::read_file(dir.path / "plain.bin")) == "relative");
}

TEST_CASE("checkpoint.file.write: a write that fails names the file and leaves the previous one whole") {
  scratch dir("file_fails");
  const fs::path file = dir.path / "checkpoint.bin";
  const std::string first = "first";
  sy::detail::write_file_atomically(file, {bytes_of(first)});
  SUBCASE("the temporary file cannot be created") {
    fs::create_directory(dir.path / "checkpoint.bin.tmp");
    const std::string expected = "checkpoint " + (dir.path / "checkpoint.bin.tmp").string() +
                                 ": cannot create the temporary file: Is a directory";
    const std::string second = "second";
    CHECK_THROWS_WITH_AS(sy::detail::write_file_atomically(file, {bytes_of(second)}), doctest::Contains(expected.c_str()),
                         sy::data_error);
    CHECK(text_of(sy::detail::read_file(file)) == "first");
  }
  SUBCASE("the rename fails: a non-empty directory stands at the path") {
    const fs::path blocked = dir.path / "blocked";
    fs::create_directories(blocked / "inside");
    const std::string expected = "checkpoint " + blocked.string() + ": cannot rename the temporary file over it";
    CHECK_THROWS_WITH_AS(sy::detail::write_file_atomically(blocked, {bytes_of(first)}),
                         doctest::Contains(expected.c_str()), sy::data_error);
    CHECK_FALSE(fs::exists(dir.path / "blocked.tmp"));  // the temporary file is removed
    CHECK(fs::is_directory(blocked / "inside"));
  }
  SUBCASE("the directory does not exist") {
    const fs::path missing = dir.path / "none" / "checkpoint.bin";
    const std::string expected = "checkpoint " + (dir.path / "none" / "checkpoint.bin.tmp").string() +
                                 ": cannot create the temporary file: No such file or directory";
    CHECK_THROWS_WITH_AS(sy::detail::write_file_atomically(missing, {bytes_of(first)}), doctest::Contains(expected.c_str()),
                         sy::data_error);
  }
}

TEST_CASE("checkpoint.file.read: every byte of the file; a missing file is a data_error naming it") {
  scratch dir("file_read");
  const fs::path file = dir.path / "bytes.bin";
  std::vector<char> written(1000);
  for (std::size_t i = 0; i < written.size(); ++i) written[i] = static_cast<char>(i * 7);
  std::ofstream(file, std::ios::binary).write(written.data(), static_cast<std::streamsize>(written.size()));
  CHECK(sy::detail::read_file(file) == written);
  const fs::path missing = dir.path / "none.bin";
  const std::string expected = "checkpoint " + missing.string() + ": cannot open it: No such file or directory";
  CHECK_THROWS_WITH_AS((void)sy::detail::read_file(missing), doctest::Contains(expected.c_str()), sy::data_error);
}
