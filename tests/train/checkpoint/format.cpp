// train/checkpoint/format.hpp: what a checkpoint holds, the 24-byte header (magic, version,
// CRC-32, length) in front of its payload, and load from bytes refusing anything that is not a
// whole checkpoint of this model.
#include <switchyard/train/checkpoint/format.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace sy = switchyard;

namespace {

// A checkpoint of a 6-parameter model with a one-slot optimizer state, no nn/ needed.
sy::train::checkpoint<double> sample() {
  sy::train::checkpoint<double> c;
  c.model = {"tiny", 6, 8, "dense 2x2, relu"};
  c.strategy = "ps>allreduce";
  c.state.epoch = 2;
  c.state.seed = 5;
  c.state.wall_seconds = 0.5;
  c.state.parameters = {0.5, -1.0, 2.0, 0.25, 3.0, -0.125};
  c.state.optimizer = {12, 6, {{1, 2, 3, 4, 5, 6}}, 24};
  c.state.epochs.epochs.resize(2);
  c.state.epochs.epochs[1].test_accuracy = 0.5;
  c.strategy_progress = {9, 8, 7};
  return c;
}

// The file's bytes: the header, then the payload.
std::vector<std::byte> encode(const sy::train::checkpoint<double>& c) {
  const std::string payload = sy::detail::checkpoint_payload(c);
  const auto payload_bytes = std::as_bytes(std::span(payload.data(), payload.size()));
  const auto header = sy::detail::checkpoint_header(payload_bytes, sy::train::checkpoint<double>::format_version);
  std::vector<std::byte> file(header.size() + payload_bytes.size());
  std::copy(header.begin(), header.end(), file.begin());
  std::copy(payload_bytes.begin(), payload_bytes.end(), file.begin() + static_cast<std::ptrdiff_t>(header.size()));
  return file;
}

sy::train::checkpoint<double> load(const std::vector<std::byte>& bytes, const sy::train::model_fingerprint& model) {
  return sy::train::load<double>(bytes, "c.bin", model);
}

}  // namespace

TEST_CASE("checkpoint.format.header: magic, version, CRC-32 and length, little-endian") {
  const std::vector<std::byte> payload{std::byte{'1'}, std::byte{'2'}, std::byte{'3'}, std::byte{'4'},
                                       std::byte{'5'}, std::byte{'6'}, std::byte{'7'}, std::byte{'8'},
                                       std::byte{'9'}};
  const auto header = sy::detail::checkpoint_header(payload, 3);
  CHECK(header.size() == 24);
  CHECK(std::equal(sy::detail::checkpoint_magic.begin(), sy::detail::checkpoint_magic.end(), header.begin(),
                   [](char c, std::byte b) { return std::byte(c) == b; }));
  CHECK(sy::detail::get_le(header.data() + 8, 4) == 3);
  CHECK(sy::detail::get_le(header.data() + 12, 4) == 0xCBF43926u);  // the CRC-32 check value of "123456789"
  CHECK(sy::detail::get_le(header.data() + 16, 8) == 9);
  CHECK(header[16] == std::byte{9});  // least significant byte first
  std::byte out[8];
  sy::detail::put_le(out, 0x0102030405060708u, 8);
  CHECK(out[0] == std::byte{8});
  CHECK(out[7] == std::byte{1});
  CHECK(sy::detail::get_le(out, 8) == 0x0102030405060708u);
}

TEST_CASE("checkpoint.format.round_trip: every field comes back from the bytes") {
  const sy::train::checkpoint<double> c = sample();
  const sy::train::checkpoint<double> back = load(encode(c), c.model);
  CHECK(back.model == c.model);
  CHECK(back.strategy == "ps>allreduce");
  CHECK(back.state.epoch == 2);
  CHECK(back.state.seed == 5);
  CHECK(back.state.wall_seconds == 0.5);
  CHECK(back.state.parameters == c.state.parameters);
  CHECK(back.state.optimizer == c.state.optimizer);
  REQUIRE(back.state.epochs.epochs.size() == 2);
  CHECK(back.state.epochs.epochs[1].test_accuracy == 0.5);
  CHECK(back.strategy_progress == c.strategy_progress);
}

TEST_CASE("checkpoint.format.refused: each damage to the bytes is refused with what it is") {
  const sy::train::checkpoint<double> c = sample();
  const std::vector<std::byte> good = encode(c);
  std::vector<std::byte> bytes = good;
  auto refused = [&](const std::string& message) {
    CHECK_THROWS_WITH_AS(load(bytes, c.model), doctest::Contains(message.c_str()), sy::data_error);
  };
  SUBCASE("any single flipped bit of the payload") {
    for (std::size_t at = sy::detail::checkpoint_header_bytes; at < good.size(); ++at) {
      bytes = good;
      bytes[at] ^= std::byte{0x04};
      refused("checkpoint c.bin is corrupted: the payload's CRC-32 does not match its header");
    }
  }
  SUBCASE("a flipped bit of the checksum") {
    bytes[13] ^= std::byte{0x01};
    refused("the payload's CRC-32 does not match its header");
  }
  SUBCASE("shorter than the header") {
    bytes.resize(23);
    refused("checkpoint c.bin is truncated: 23 bytes, shorter than the 24-byte header");
  }
  SUBCASE("truncated in the payload") {
    bytes.pop_back();
    refused("checkpoint c.bin is truncated: " + std::to_string(good.size() - 25) + " of its " +
            std::to_string(good.size() - 24) + " payload bytes are there");
  }
  SUBCASE("bytes after the payload") {
    bytes.push_back(std::byte{0});
    bytes.push_back(std::byte{0});
    refused("checkpoint c.bin is corrupted: 2 bytes follow its payload of " + std::to_string(good.size() - 24));
  }
  SUBCASE("not a checkpoint") {
    bytes[7] = std::byte{'X'};
    refused("checkpoint c.bin is not a switchyard checkpoint (no SWYDCKPT header)");
  }
  SUBCASE("another version") {
    bytes[8] = std::byte{2};
    refused("checkpoint c.bin has format version 2; this build reads version " +
            std::to_string(sy::train::checkpoint<double>::format_version));
  }
  SUBCASE("another model") {
    sy::train::model_fingerprint other = c.model;
    other.parameters = 7;
    CHECK_THROWS_WITH_AS(load(good, other),
                         doctest::Contains("checkpoint c.bin is for another model: 'tiny' with 6 parameters of 8 "
                                           "bytes, this run has 'tiny' with 7 parameters of 8 bytes"),
                         sy::data_error);
  }
  SUBCASE("a state that does not fit its model") {
    sy::train::checkpoint<double> odd = c;
    odd.state.parameters.pop_back();
    bytes = encode(odd);
    refused("checkpoint c.bin is corrupted: 5 parameters and an optimizer state of 6 for a model of 6");
    odd = c;
    odd.state.optimizer.slots[0].push_back(7);
    bytes = encode(odd);
    refused("checkpoint c.bin is corrupted: optimizer slot 0 has 7 values for 6 parameters");
  }
  SUBCASE("a payload with a valid checksum that does not decode") {
    const std::vector<std::byte> payload(5, std::byte{0xff});
    const auto header = sy::detail::checkpoint_header(payload, sy::train::checkpoint<double>::format_version);
    bytes.assign(header.size() + payload.size(), std::byte{0});
    std::copy(header.begin(), header.end(), bytes.begin());
    std::copy(payload.begin(), payload.end(), bytes.begin() + static_cast<std::ptrdiff_t>(header.size()));
    refused("checkpoint c.bin is corrupted: its payload does not decode");
  }
}
