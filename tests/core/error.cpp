#include <switchyard/core/error.hpp>

#include <doctest/doctest.h>

#include <string>

using namespace switchyard;

TEST_CASE("error.hierarchy: every class is a switchyard::error, timeouts are transport errors") {
  CHECK_THROWS_AS(detail::raise<usage_error>("u"), error);
  CHECK_THROWS_AS(detail::raise<data_error>("d"), error);
  CHECK_THROWS_AS(detail::raise<transport_error>("t"), error);
  CHECK_THROWS_AS(detail::raise<timeout_error>("w"), transport_error);
}

TEST_CASE("error.message: raise prefixes the file and line of the caller") {
  const int line = __LINE__ + 2;
  try {
    detail::raise<usage_error>(detail::str("rank ", 3, " has ", 5u, " elements"));
  } catch (const usage_error& e) {
    const std::string what = e.what();
    CHECK(what == "[error.cpp:" + std::to_string(line) + "] rank 3 has 5 elements");
  }
}
