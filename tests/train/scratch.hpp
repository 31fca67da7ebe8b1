// A fresh directory for one checkpoint test, removed afterwards.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

namespace test_files {

struct scratch {
  std::filesystem::path path;
  explicit scratch(const std::string& name)
      : path(std::filesystem::temp_directory_path() /
             ("switchyard_checkpoint_" + name + "_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~scratch() { std::filesystem::remove_all(path); }
  scratch(const scratch&) = delete;
  scratch& operator=(const scratch&) = delete;
};

}  // namespace test_files
