// Checkpoint files on POSIX: an atomic replace (a temporary file, fsync, rename, fsync of the
// directory) and a whole-file read, both raising data_error that names the file.
#pragma once

#include <switchyard/core/error.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <span>
#include <string_view>
#include <vector>

// In switchyard::detail, not train::detail, which would hide switchyard::detail from train code.
namespace switchyard::detail {

// Writes all of `bytes` to `fd`; false with errno set on failure.
inline bool write_all(int fd, std::span<const std::byte> bytes) {
  while (!bytes.empty()) {
    const ssize_t written = ::write(fd, bytes.data(), bytes.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    bytes = bytes.subspan(static_cast<std::size_t>(written));
  }
  return true;
}

[[noreturn]] inline void raise_checkpoint_io(const std::filesystem::path& path, std::string_view doing, int error) {
  detail::raise<data_error>(detail::str("checkpoint ", path.string(), ": cannot ", doing, ": ", std::strerror(error)));
}

// Writes `parts`, one after the other, to `path` atomically: into `path` + ".tmp" in the same
// directory, flushed to disk, then renamed over `path`, so `path` is always either the previous
// file or this one, whole. Raises `data_error` naming the file when it cannot be written.
inline void write_file_atomically(const std::filesystem::path& path,
                                  std::initializer_list<std::span<const std::byte>> parts) {
  std::filesystem::path temporary = path;
  temporary += ".tmp";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) detail::raise_checkpoint_io(temporary, "create the temporary file", errno);
  bool written = true;
  for (const std::span<const std::byte> part : parts) written = written && detail::write_all(fd, part);
  written = written && ::fsync(fd) == 0;
  const int write_error = errno;
  if (::close(fd) != 0 || !written) {
    const int error = written ? errno : write_error;
    ::unlink(temporary.c_str());
    detail::raise_checkpoint_io(temporary, "write", error);
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    detail::raise_checkpoint_io(path, "rename the temporary file over it", error);
  }
  // The rename itself is durable once the directory is flushed.
  const std::filesystem::path directory = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  const int directory_fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (directory_fd >= 0) {
    ::fsync(directory_fd);
    ::close(directory_fd);
  }
}

// The bytes of the file at `path`.
inline std::vector<char> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) detail::raise_checkpoint_io(path, "open it", errno);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) detail::raise_checkpoint_io(path, "read it", errno);
  return bytes;
}

}  // namespace switchyard::detail
