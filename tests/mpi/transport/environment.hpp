// Sets an environment variable for a scope and puts back what was there before, for the suites
// that check the defaults read from SWITCHYARD_TIMEOUT and SWITCHYARD_MPI_WAIT.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace mpi_tests {

class scoped_environment {
 public:
  // Sets `name` to `value`, or unsets it when `value` is null.
  scoped_environment(const char* name, const char* value) : name_(name) {
    if (const char* before = std::getenv(name)) saved_ = before;
    set(value);
  }
  scoped_environment(const scoped_environment&) = delete;
  scoped_environment& operator=(const scoped_environment&) = delete;
  ~scoped_environment() { set(saved_ ? saved_->c_str() : nullptr); }

  void set(const char* value) {
    if (value) {
      ::setenv(name_.c_str(), value, 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }

 private:
  std::string name_;
  std::optional<std::string> saved_;
};

}  // namespace mpi_tests
