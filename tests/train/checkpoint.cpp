#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <switchyard/nn/mlp.hpp>
#include <switchyard/optim/adam.hpp>
#include <switchyard/optim/cosine.hpp>
#include <switchyard/strategy/all_reduce.hpp>
#include <switchyard/strategy/alternate.hpp>
#include <switchyard/strategy/parameter_server.hpp>
#include <switchyard/strategy/switch_to.hpp>
#include <switchyard/train/checkpoint.hpp>
#include <switchyard/train/trainer.hpp>
#include <switchyard/transport/inproc.hpp>
#include <switchyard/trigger/after_epochs.hpp>
#include <switchyard/trigger/after_steps.hpp>
#include <switchyard/trigger/combinators.hpp>
#include <switchyard/trigger/loss_plateau.hpp>
#include <switchyard/trigger/straggler.hpp>
#include <utility>
#include <vector>

#include "../nn/logistic_regression.hpp"
#include "fixtures.hpp"
#include "scratch.hpp"

namespace sy = switchyard;
namespace fs = std::filesystem;

namespace {

// Loads and drops the checkpoint: for the checks that a load throws.
template <class... Args>
void load_only(Args&&... args) {
  static_cast<void>(sy::train::load<float>(std::forward<Args>(args)...));
}

using test_files::scratch;

std::vector<char> read_bytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const fs::path& file, const std::vector<char>& bytes) {
  std::ofstream(file, std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// What the Fashion-MNIST example's "killed with SIGKILL" does to a run, in process: an exception
// at a step ends every rank where it is.
struct killed : std::runtime_error {
  killed() : std::runtime_error("killed") {}
};

struct run {
  std::vector<float> parameters;
  std::vector<std::string> stages;
  std::vector<double> losses;
  std::vector<double> accuracies;
};

constexpr std::size_t epochs = 5;

// A synchronous parameter server repeats bit for bit, so the whole chain can be compared exactly.
using sync_ps = sy::strategy::parameter_server<sy::strategy::consistency::sync>;

// Toggles between all-reduce and `server` (a synchronous one by default): into the server after
// any epoch of all-reduce, back after the server's second epoch. Over 7 epochs: allreduce, ps, ps,
// allreduce, ps, ps, allreduce.
template <class Server = sync_ps>
sy::strategy::alternate<sy::strategy::all_reduce<>, Server, sy::trigger::after_epochs<1>, sy::trigger::stragglers_gone>
toggles(Server server = sync_ps{1}) {
  return {{}, server, {}, sy::trigger::stragglers_gone{.ratio = 1e9, .window = 1, .dwell = 2},
          sy::strategy::switch_options{.rescale_for_batch = true}};
}

// Trains the small mlp for `epochs` epochs with a checkpoint after every one into `directory`;
// `kill_in` > 0 ends the run at step 2 of that epoch; `resume` continues from the checkpoint.
template <class Strategy>
std::vector<run> train(int ranks, const Strategy& prototype, const fs::path& directory, std::size_t kill_in,
                       bool resume, std::size_t epoch_count = epochs, const sy::transport::inproc_options& world = {}) {
  const auto data = fixtures::quadrants(480, 7);
  return sy::transport::run_inproc(ranks, [&](sy::transport::inproc& t) {
    sy::nn::mlp model{11, {8, 8, 1}, 4};
    // A schedule over the run's 300 batches: a resume that lost the schedule's clock or stride
    // steps at other rates.
    sy::optim::adam optimizer{model.parameters().size(), sy::optim::cosine{0.01, 400}};
    sy::train::trainer_options options;
    options.epochs = epoch_count;
    options.batch_size = 8;
    options.checkpoint_every = 1;
    sy::train::trainer trainer{model, optimizer, prototype, options};
    const sy::train::model_fingerprint fingerprint = sy::train::fingerprint(model, "mlp-8-8");
    sy::train::write_checkpoints(trainer, directory, fingerprint);
    if (resume) sy::train::resume(trainer, sy::train::checkpoint_file(directory), fingerprint);
    if (kill_in > 0) {
      trainer.on_step([&](const sy::train::step_record& s) {
        if (s.epoch == kill_in && s.step == 2) throw killed();
      });
    }
    const sy::train::history h = trainer.fit(t, data, *data);
    run r;
    r.parameters.assign(model.parameters().begin(), model.parameters().end());
    for (const auto& e : h.epochs) {
      r.stages.push_back(e.stage);
      r.losses.push_back(e.train_loss);
      r.accuracies.push_back(e.test_accuracy);
    }
    return r;
  }, world);
}

// Kills a run in epoch `kill_in`, resumes it from its last checkpoint, and compares with the
// uninterrupted run: the same parameters to the bit, the same stages and records.
template <class Strategy>
void check_resume(int ranks, const Strategy& prototype, std::size_t kill_in, const std::string& name,
                  std::size_t epoch_count = epochs, const sy::transport::inproc_options& world = {}) {
  scratch uninterrupted(name + "_whole");
  scratch interrupted(name + "_killed");
  const std::vector<run> whole = train(ranks, prototype, uninterrupted.path, 0, false, epoch_count, world);
  CHECK_THROWS_AS(train(ranks, prototype, interrupted.path, kill_in, false, epoch_count, world), killed);
  const std::vector<run> resumed = train(ranks, prototype, interrupted.path, 0, true, epoch_count, world);
  REQUIRE(resumed.size() == whole.size());
  for (std::size_t rank = 0; rank < whole.size(); ++rank) {
    CAPTURE(rank);
    CHECK(resumed[rank].parameters == whole[rank].parameters);
    CHECK(resumed[rank].stages == whole[rank].stages);
    CHECK(resumed[rank].losses == whole[rank].losses);
    CHECK(resumed[rank].accuracies == whole[rank].accuracies);
  }
}

// A trained state of the small mlp to write and read back.
sy::train::checkpoint<float> sample_checkpoint() {
  sy::nn::mlp model{3, {8, 8, 1}, 4};
  sy::optim::adam optimizer{model.parameters().size(), 0.01};
  const auto data = fixtures::quadrants(64, 5);
  model.forward_backward(data->slice(0, 16));
  optimizer.step(model.parameters(), model.gradients());
  optimizer.scale_learning_rate(0.5);
  optimizer.rewarm(10);
  sy::train::checkpoint<float> c;
  c.model = sy::train::fingerprint(model, "mlp-8-8");
  c.strategy = "ps>allreduce";
  c.state.epoch = 3;
  c.state.seed = 17;
  c.state.flush_subnormals = false;  // not the default, so the round trip shows it
  c.state.wall_seconds = 1.25;
  c.state.parameters.assign(model.parameters().begin(), model.parameters().end());
  c.state.optimizer = optimizer.export_state();
  c.state.adjustments = optimizer.export_adjustments();
  c.state.epochs.epochs.resize(3);
  c.state.epochs.epochs[2].stage = "ps>allreduce";
  c.state.epochs.epochs[2].test_accuracy = 0.75;
  c.state.train_examples = 640;
  c.state.batch_size = 16;
  c.strategy_progress = {1, 2, 3};
  return c;
}

}  // namespace

TEST_CASE("checkpoint.round_trip: every field comes back, from a file and from bytes") {
  scratch dir("round_trip");
  const sy::train::checkpoint<float> c = sample_checkpoint();
  const fs::path file = sy::train::checkpoint_file(dir.path);
  sy::train::save(file, c);
  CHECK_FALSE(fs::exists(file.string() + ".tmp"));
  const std::vector<char> bytes = read_bytes(file);
  for (const sy::train::checkpoint<float>& back :
       {sy::train::load<float>(file, c.model),
        sy::train::load<float>(std::as_bytes(std::span(bytes.data(), bytes.size())), "bytes", c.model)}) {
    CHECK(back.model == c.model);
    CHECK(back.model.layout == "flatten, dense 64x256, relu, dense 256x128, relu, dense 128x4");
    CHECK(back.strategy == "ps>allreduce");
    CHECK(back.state.epoch == 3);
    CHECK(back.state.seed == 17);
    CHECK_FALSE(back.state.flush_subnormals);
    CHECK(back.state.wall_seconds == 1.25);
    CHECK(back.state.parameters == c.state.parameters);
    CHECK(back.state.optimizer == c.state.optimizer);
    CHECK(back.state.adjustments == c.state.adjustments);
    CHECK(back.state.adjustments.learning_rate_scale == 0.5);
    REQUIRE(back.state.epochs.epochs.size() == 3);
    CHECK(back.state.epochs.epochs[2].stage == "ps>allreduce");
    CHECK(back.state.epochs.epochs[2].test_accuracy == 0.75);
    CHECK(back.strategy_progress == c.strategy_progress);
    CHECK(back.state.train_examples == 640);
    CHECK(back.state.batch_size == 16);
  }
}

TEST_CASE("checkpoint.atomic: a write that fails leaves the previous checkpoint whole") {
  scratch dir("atomic");
  sy::train::checkpoint<float> c = sample_checkpoint();
  const fs::path file = sy::train::checkpoint_file(dir.path);
  sy::train::save(file, c);
  // The temporary file cannot be created where a directory of that name stands.
  fs::create_directory(file.string() + ".tmp");
  c.state.epoch = 4;
  CHECK_THROWS_WITH_AS(sy::train::save(file, c), doctest::Contains("cannot create the temporary file"), sy::data_error);
  CHECK(sy::train::load<float>(file, c.model).state.epoch == 3);
  fs::remove(file.string() + ".tmp");
  sy::train::save(file, c);
  CHECK(sy::train::load<float>(file, c.model).state.epoch == 4);
}

TEST_CASE("checkpoint.refused: each bad file is refused with what is wrong with it") {
  scratch dir("refused");
  const sy::train::checkpoint<float> c = sample_checkpoint();
  const fs::path file = sy::train::checkpoint_file(dir.path);
  sy::train::save(file, c);
  const std::vector<char> good = read_bytes(file);
  const fs::path bad = dir.path / "bad.bin";
  auto refused = [&](const std::vector<char>& bytes, const std::string& message) {
    write_bytes(bad, bytes);
    CHECK_THROWS_WITH_AS(load_only(bad, c.model), doctest::Contains(message.c_str()), sy::data_error);
    CHECK_THROWS_WITH_AS(load_only(bad, c.model), doctest::Contains(bad.string().c_str()), sy::data_error);
  };
  SUBCASE("a corrupted byte") {
    std::vector<char> bytes = good;
    bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x10);
    refused(bytes, "is corrupted: the payload's CRC-32 does not match");
  }
  SUBCASE("truncated in the payload") { refused(std::vector<char>(good.begin(), good.end() - 100), "is truncated"); }
  SUBCASE("truncated in the header") {
    refused(std::vector<char>(good.begin(), good.begin() + 10), "is truncated: 10 bytes");
  }
  SUBCASE("bytes after the payload") {
    std::vector<char> bytes = good;
    bytes.push_back(0);
    refused(bytes, "is corrupted: 1 bytes follow its payload");
  }
  SUBCASE("another format version") {
    std::vector<char> bytes = good;
    bytes[8] = 7;
    refused(bytes, "has format version 7; this build reads version " +
                       std::to_string(sy::train::checkpoint<float>::format_version));
  }
  SUBCASE("not a checkpoint") {
    std::vector<char> bytes = good;
    bytes[0] = 'X';
    refused(bytes, "is not a switchyard checkpoint");
  }
  SUBCASE("another model") {
    sy::train::checkpoint<float> other = c;
    other.model.name = "cnn";
    sy::train::save(bad, other);
    CHECK_THROWS_WITH_AS(load_only(bad, c.model),
                         doctest::Contains("is for another model: 'cnn' with 50052 parameters of 4 bytes, this run "
                                           "has 'mlp-8-8' with 50052 parameters of 4 bytes"),
                         sy::data_error);
  }
  SUBCASE("the same parameter count in other layers") {
    // 65*5 + 6*4 = 349 = 65*5 + 6*2 + 3*4 parameters.
    sy::nn::sequential wide{1, sy::nn::feature_shape{8, 8, 1}, sy::nn::flatten{}, sy::nn::dense{64, 5}, sy::nn::relu{},
                            sy::nn::dense{5, 4}};
    sy::nn::sequential deep{1, sy::nn::feature_shape{8, 8, 1}, sy::nn::flatten{}, sy::nn::dense{64, 5}, sy::nn::relu{},
                            sy::nn::dense{5, 2}, sy::nn::relu{}, sy::nn::dense{2, 4}};
    REQUIRE(wide.parameters().size() == deep.parameters().size());
    sy::train::checkpoint<float> other = c;
    other.model = sy::train::fingerprint(wide, "small");
    sy::train::save(bad, other);
    CHECK_THROWS_WITH_AS(load_only(bad, sy::train::fingerprint(deep, "small")),
                         doctest::Contains("is for another model: 'small' with 349 parameters of 4 bytes, this run has "
                                           "'small' with 349 parameters of 4 bytes; the layouts differ at layer 4: "
                                           "'dense 5x4' in the checkpoint, 'dense 5x2' in this run"),
                         sy::data_error);
  }
  SUBCASE("a model without a layout") {
    sy::train::checkpoint<float> other = c;
    other.model.layout.clear();
    sy::train::save(bad, other);
    CHECK_THROWS_WITH_AS(load_only(bad, c.model),
                         doctest::Contains("; the layouts differ at layer 1: no layout in the checkpoint, 'flatten' in "
                                           "this run"),
                         sy::data_error);
  }
  SUBCASE("a missing file") {
    CHECK_THROWS_WITH_AS(load_only(dir.path / "none.bin", c.model),
                         doctest::Contains("cannot open it: No such file or directory"), sy::data_error);
  }
}

namespace {

// `payload` behind a valid header (magic, version, CRC-32, length): what the fuzz target loads.
std::vector<std::byte> with_header(std::span<const std::byte> payload) {
  const auto header = sy::detail::checkpoint_header(payload, sy::train::checkpoint<float>::format_version);
  std::vector<std::byte> file(header.size() + payload.size());
  std::copy(header.begin(), header.end(), file.begin());
  std::copy(payload.begin(), payload.end(), file.begin() + static_cast<std::ptrdiff_t>(header.size()));
  return file;
}

}  // namespace

TEST_CASE("checkpoint.refused: a payload with a valid checksum that claims more than it holds") {
  scratch dir("claims");
  const sy::train::checkpoint<float> c = sample_checkpoint();
  const fs::path file = sy::train::checkpoint_file(dir.path);
  sy::train::save(file, c);
  const std::vector<char> good = read_bytes(file);
  std::vector<std::byte> payload(good.size() - sy::detail::checkpoint_header_bytes);
  std::memcpy(payload.data(), good.data() + sy::detail::checkpoint_header_bytes, payload.size());
  // The model's name is the first sequence: its 64-bit count comes just before its characters.
  const std::string_view name = "mlp-8-8";
  const auto text = std::search(payload.begin(), payload.end(), name.begin(), name.end(),
                                [](std::byte b, char ch) { return b == std::byte(ch); });
  REQUIRE(text - payload.begin() >= 8);
  const std::uint64_t absurd = std::uint64_t{1} << 60;
  std::memcpy(&*(text - 8), &absurd, sizeof absurd);
  CHECK_THROWS_WITH_AS(load_only(with_header(payload), "claims.bin", c.model),
                       doctest::Contains("claims 1152921504606846976 elements"), sy::data_error);
  // Found by the fuzz target (tests/fuzz/checkpoint.cpp): under the first format, Boost's own
  // archive header made the loader allocate 2 PiB for these 40 bytes.
  const unsigned char found[] = {0x16, 0x00, 0x00, 0x11, 0x00, 0x00, 0x08, 0x00, 0x73, 0x65, 0x72, 0x41, 0x6c, 0x61,
                                 0x69, 0x61, 0x69, 0x7a, 0x74, 0x6f, 0x6e, 0x3a, 0x3a, 0x61, 0x72, 0x63, 0x68, 0x69,
                                 0x76, 0x65, 0x12, 0x00, 0x04, 0x08, 0x04, 0x08, 0x01, 0x00, 0x00, 0x00};
  CHECK_THROWS_AS(load_only(with_header(std::as_bytes(std::span(found))), "found.bin", c.model),
                  sy::data_error);
}

TEST_CASE("checkpoint.refused: a flag byte other than 0 or 1 is refused as corrupted, not read into a bool") {
  // The fuzzer's find: Boost's binary archive loads a bool straight from its byte.
  const sy::train::checkpoint<float> c = sample_checkpoint();  // seed 17, flush_subnormals false, 1.25 s
  std::vector<std::byte> payload;
  {
    std::ostringstream out(std::ios::binary);
    boost::archive::binary_oarchive archive(out, boost::archive::no_header);
    archive << c;
    const std::string text = out.str();
    for (const char ch : text) payload.push_back(static_cast<std::byte>(ch));
  }
  std::array<std::byte, 17> around{};  // seed, the flag, then the wall clock's first bytes
  const std::uint64_t seed = 17;
  const double wall = 1.25;
  std::memcpy(around.data(), &seed, 8);
  std::memcpy(around.data() + 9, &wall, 8);
  const auto at = std::search(payload.begin(), payload.end(), around.begin(), around.end());
  REQUIRE(at != payload.end());
  *(at + 8) = std::byte{62};
  std::string what;
  try {
    (void)sy::train::load<float>(with_header(payload), "flag.bin", c.model);
  } catch (const sy::data_error& e) {
    what = e.what();
  }
  CHECK(what.find("checkpoint flag.bin is corrupted: its payload does not decode") != std::string::npos);
  CHECK(what.find("a loaded flag holds 62, not 0 or 1") != std::string::npos);
}

TEST_CASE("checkpoint.refused: a checkpoint of another strategy is refused before training" *
          doctest::timeout(120)) {
  scratch dir("strategy");
  // Its last checkpoint is taken in the second stage: the signature still names both.
  const sy::strategy::switch_to written{sync_ps{1}, sy::strategy::all_reduce<>{}, sy::trigger::after_steps{90}};
  train(4, written, dir.path, 0, false);
  const fs::path file = sy::train::checkpoint_file(dir.path);
  sy::nn::mlp model{11, {8, 8, 1}, 4};
  sy::optim::adam optimizer{model.parameters().size(), 0.01};
  const sy::train::model_fingerprint fingerprint = sy::train::fingerprint(model, "mlp-8-8");
  const sy::train::checkpoint<float> c = sy::train::load<float>(file, fingerprint);
  CHECK(c.strategy == "ps>allreduce");

  // The stages swapped keep their progress in the same bytes: it decodes, and would train the
  // parameter server where the checkpoint was in all-reduce. Only the signature refuses it.
  using swapped = sy::strategy::switch_to<sy::strategy::all_reduce<>, sync_ps, sy::trigger::after_steps<>>;
  swapped decoded{{}, sync_ps{1}, sy::trigger::after_steps{90}};
  sy::train::decode_progress(decoded, c.strategy_progress, file.string());
  CHECK(decoded.switched());
  sy::train::trainer reversed{model, optimizer, swapped{{}, sync_ps{1}, sy::trigger::after_steps{90}}};
  const std::string expected = file.string() + " was written by strategy 'ps>allreduce', this run's strategy is "
                                               "'allreduce>ps'";
  CHECK_THROWS_WITH_AS(sy::train::resume(reversed, file, fingerprint), doctest::Contains(expected.c_str()),
                       sy::data_error);
  CHECK_FALSE(reversed.strategy().switched());  // refused before the progress reached the trainer

  sy::train::trainer plain{model, optimizer, sy::strategy::all_reduce<>{}};
  CHECK_THROWS_WITH_AS(sy::train::resume(plain, file, fingerprint),
                       doctest::Contains("was written by strategy 'ps>allreduce', this run's strategy is 'allreduce'"),
                       sy::data_error);

  sy::train::checkpoint<float> of_plain = c;
  of_plain.strategy = "allreduce";
  of_plain.strategy_progress.clear();
  sy::train::save(file, of_plain);
  sy::train::trainer switching{model, optimizer, written};
  CHECK_THROWS_WITH_AS(sy::train::resume(switching, file, fingerprint),
                       doctest::Contains("was written by strategy 'allreduce', this run's strategy is 'ps>allreduce'"),
                       sy::data_error);
  CHECK(sy::train::resume(plain, file, fingerprint) == epochs);
}

TEST_CASE("checkpoint.refused: a checkpoint trained with the other subnormal setting is refused before training") {
  scratch dir("flush");
  const fs::path file = sy::train::checkpoint_file(dir.path);
  sy::nn::mlp model{11, {8, 8, 1}, 4};
  sy::optim::adam optimizer{model.parameters().size(), 0.01};
  const sy::train::model_fingerprint fingerprint = sy::train::fingerprint(model, "mlp-8-8");
  for (const bool written_flushing : {true, false}) {
    CAPTURE(written_flushing);
    sy::train::checkpoint<float> c{fingerprint, "allreduce", {}, {}};
    c.state.epoch = 2;
    c.state.flush_subnormals = written_flushing;
    c.state.parameters.assign(model.parameters().size(), 0.0F);
    c.state.optimizer = optimizer.export_state();
    sy::train::save(file, c);
    sy::train::trainer_options options;
    options.flush_subnormals = !written_flushing;
    sy::train::trainer other{model, optimizer, sy::strategy::all_reduce<>{}, options};
    const std::string expected =
        written_flushing ? " was trained flushing subnormal floats to zero, this run is set to keeping subnormal floats"
                         : " was trained keeping subnormal floats, this run is set to flushing subnormal floats to zero";
    CHECK_THROWS_WITH_AS(sy::train::resume(other, file, fingerprint), doctest::Contains((file.string() + expected).c_str()),
                         sy::data_error);
    options.flush_subnormals = written_flushing;
    sy::train::trainer same{model, optimizer, sy::strategy::all_reduce<>{}, options};
    CHECK(sy::train::resume(same, file, fingerprint) == 2);
  }
}

TEST_CASE("checkpoint.refused: resume_from a state of the other subnormal setting is refused when fit starts") {
  const auto data = fixtures::quadrants(32, 7);
  sy::nn::mlp model{11, {8, 8, 1}, 4};
  sy::optim::adam optimizer{model.parameters().size(), 0.01};
  sy::train::training_state<float> state;
  state.epoch = 1;
  state.seed = 1;  // trainer_options' default
  state.flush_subnormals = false;
  state.parameters.assign(model.parameters().size(), 0.0F);
  state.optimizer = optimizer.export_state();
  sy::train::trainer_options options;
  options.batch_size = 8;
  sy::train::trainer trainer{model, optimizer, sy::strategy::all_reduce<>{}, options};
  trainer.resume_from(state);
  CHECK_THROWS_WITH_AS(
      sy::transport::run_inproc(1, [&](sy::transport::inproc& t) { trainer.fit(t, data, *data); }),
      doctest::Contains("the state to resume from was trained keeping subnormal floats, this run is set to flushing "
                        "subnormal floats to zero"),
      sy::usage_error);
}

TEST_CASE("checkpoint.refused: resume_from a state of another training set or batch size is refused when fit "
          "starts, naming both") {
  const auto data = fixtures::quadrants(32, 7);
  sy::nn::mlp model{11, {8, 8, 1}, 4};
  sy::optim::adam optimizer{model.parameters().size(), 0.01};
  const auto refused = [&](std::uint64_t examples, std::uint64_t batch) {
    sy::train::training_state<float> state;
    state.epoch = 1;
    state.seed = 1;  // trainer_options' default
    state.parameters.assign(model.parameters().size(), 0.0F);
    state.optimizer = optimizer.export_state();
    state.train_examples = examples;
    state.batch_size = batch;
    sy::train::trainer_options options;
    options.batch_size = 8;
    options.epochs = 2;
    sy::train::trainer trainer{model, optimizer, sy::strategy::all_reduce<>{}, options};
    trainer.resume_from(state);
    std::string what;
    try {
      sy::transport::run_inproc(1, [&](sy::transport::inproc& t) { trainer.fit(t, data, *data); });
    } catch (const sy::usage_error& e) {
      what = e.what();
    }
    return what;
  };
  CHECK(refused(64, 8).find("was trained on 64 training examples, this run has 32") != std::string::npos);
  CHECK(refused(32, 16).find("was trained with batches of 16 per worker, this run has batches of 8") !=
        std::string::npos);
  CHECK(refused(32, 8).empty());  // the same: it resumes
  CHECK(refused(0, 0).empty());   // a state made by hand records neither
}

TEST_CASE("checkpoint.fingerprint: a model's layers when it describes them; without, name and sizes") {
  sy::nn::mlp model{3, {8, 8, 1}, 4};
  const sy::train::model_fingerprint mlp = sy::train::fingerprint(model, "mlp-8-8");
  CHECK(mlp.parameters == 50052);
  CHECK(mlp.element_bytes == 4);
  CHECK(mlp.layout == "flatten, dense 64x256, relu, dense 256x128, relu, dense 128x4");
  // The user model of docs/models.md has no layout(): its checkpoints load as before.
  scratch dir("fingerprint");
  logistic_regression user{64, 4};
  sy::optim::adam optimizer{user.parameters().size(), 0.01};
  sy::train::checkpoint<float> c;
  c.model = sy::train::fingerprint(user, "logistic");
  CHECK(c.model.layout.empty());
  CHECK(c.model.parameters == 260);
  c.strategy = "allreduce";
  c.state.parameters.assign(user.parameters().begin(), user.parameters().end());
  c.state.optimizer = optimizer.export_state();
  const fs::path file = sy::train::checkpoint_file(dir.path);
  sy::train::save(file, c);
  CHECK(sy::train::load<float>(file, c.model).model == c.model);
}

TEST_CASE("checkpoint.progress: a switch chain's stage and trigger states round-trip") {
  using inner = sy::strategy::switch_to<sy::strategy::all_reduce<>, sy::strategy::all_reduce<>,
                                        sy::trigger::any_of<sy::trigger::loss_plateau, sy::trigger::after_steps<>>>;
  using outer = sy::strategy::switch_to<sy::strategy::all_reduce<>, inner, sy::trigger::after_epochs<1>>;
  outer trained{
      {}, inner{{}, {}, sy::trigger::any_of{sy::trigger::loss_plateau{0.1, 3}, sy::trigger::after_steps{1000}}}, {}};
  sy::transport::run_inproc(1, [&](sy::transport::inproc& t) {
    sy::nn::mlp model{3, {8, 8, 1}, 4};
    sy::optim::adam optimizer{model.parameters().size(), 0.01};
    trained.setup(t, model, optimizer);
    sy::train::epoch_record record;
    record.steps = 7;
    for (std::size_t epoch = 1; epoch <= 3; ++epoch) {
      record.epoch = epoch;
      record.train_loss = 1.0 / static_cast<double>(epoch);
      trained.after_epoch(t, model, optimizer, record);
    }
  });
  REQUIRE(trained.switched());
  // The thresholds are configuration, given again by the resumed run; the progress is what decodes.
  outer restored{
      {}, inner{{}, {}, sy::trigger::any_of{sy::trigger::loss_plateau{0.1, 3}, sy::trigger::after_steps{1000}}}, {}};
  const std::vector<std::uint8_t> bytes = sy::train::encode_progress(trained);
  // Cut short inside the inner switch's part: refused, and the outer switch's fields, read before
  // the cut, are not left behind.
  const std::vector<std::uint8_t> cut(bytes.begin(), bytes.end() - 4);
  CHECK_THROWS_AS(sy::train::decode_progress(restored, cut, "cut.bin"), sy::data_error);
  CHECK_FALSE(restored.switched());
  CHECK(restored.switched_after_batches() == std::nullopt);
  sy::train::decode_progress(restored, bytes, "bytes");
  CHECK(restored.switched_after_epoch() == trained.switched_after_epoch());
  CHECK(restored.switched_after_batches() == std::optional<std::uint64_t>(7));
  const auto& [plateau, steps] = restored.second().trigger().triggers;
  const auto& [trained_plateau, trained_steps] = trained.second().trigger().triggers;
  CHECK(plateau.started);
  CHECK(plateau.smoothed == trained_plateau.smoothed);
  CHECK(plateau.flat == trained_plateau.flat);
  CHECK(steps.taken == 14);
  CHECK(steps.taken == trained_steps.taken);
  CHECK(restored.second().switched() == trained.second().switched());
}

TEST_CASE("checkpoint.resume.allreduce.1rank: killed in epoch 4, resumed, equal to the bit" * doctest::timeout(120)) {
  check_resume(1, sy::strategy::all_reduce<>{}, 4, "ar1");
}

TEST_CASE("checkpoint.resume.allreduce.3ranks: killed in epoch 3, resumed, equal to the bit" * doctest::timeout(120)) {
  check_resume(3, sy::strategy::all_reduce<>{}, 3, "ar3");
}

TEST_CASE("checkpoint.resume.switch.before: killed in the first stage, resumed there, switches at its step" *
          doctest::timeout(120)) {
  // 60 batches an epoch over 3 workers: 90 batches is inside epoch 2; the checkpoint of epoch 1
  // must bring back the 60 batches the trigger and the switch have counted.
  const sy::strategy::switch_to chain{sync_ps{1}, sy::strategy::all_reduce<>{}, sy::trigger::after_steps{90}};
  check_resume(4, chain, 2, "switch_before");
}

TEST_CASE("checkpoint.resume.switch.after: killed in the second stage, resumed in it" * doctest::timeout(120)) {
  const sy::strategy::switch_to chain{sync_ps{1}, sy::strategy::all_reduce<>{}, sy::trigger::after_epochs{2},
                                      sy::strategy::switch_options{.learning_rate_scale = 0.5, .warmup_steps = 30}};
  check_resume(4, chain, 4, "switch_after");
}

TEST_CASE("checkpoint.resume.chain: killed in the middle of three stages, resumed there" * doctest::timeout(120)) {
  using middle = sy::strategy::switch_to<sy::strategy::all_reduce<>, sync_ps, sy::trigger::after_epochs<3>>;
  const sy::strategy::switch_to<sync_ps, middle, sy::trigger::after_epochs<1>> chain{
      sync_ps{1}, middle{{}, sync_ps{2}, {}}, {}};
  check_resume(4, chain, 3, "chain");
}

TEST_CASE("checkpoint.resume.ps_compressed: a synchronous server with bf16 pushes, killed in epoch 3, resumed, equal "
          "to the bit" * doctest::timeout(120)) {
  // Each worker's error-feedback residual is in the checkpoint: without it the resumed pushes differ.
  check_resume(4, sync_ps{2, {}, sy::compression::format::bf16}, 3, "ps_bf16");
}

TEST_CASE("checkpoint.resume.switch_compressed: killed in a compressed server stage of a switch, resumed in it" *
          doctest::timeout(120)) {
  const sy::strategy::switch_to chain{sy::strategy::all_reduce<>{}, sync_ps{1, {}, sy::compression::format::fp16},
                                      sy::trigger::after_epochs{1}};
  check_resume(4, chain, 3, "switch_fp16");
}

TEST_CASE("checkpoint.resume.colocated: co-located bf16 servers, and a switch from them, killed and resumed, equal "
          "to the bit" * doctest::timeout(120)) {
  check_resume(3, sync_ps{sy::strategy::colocated, {}, sy::compression::format::bf16}, 3, "ps_colocated");
  const sy::strategy::switch_to chain{sync_ps{sy::strategy::colocated}, sy::strategy::all_reduce<>{},
                                      sy::trigger::after_steps{90}};
  check_resume(4, chain, 2, "switch_colocated");
}

TEST_CASE("checkpoint.resume.node: node-summed servers, pipelined or not, over consecutive and dealt nodes, and a "
          "switch from them, killed and resumed, equal to the bit" * doctest::timeout(300)) {
  using sy::strategy::aggregation;
  using sy::strategy::pipelining;
  const auto by_node = [](pipelining pipeline, sy::compression::format format = sy::compression::format::none) {
    return sync_ps{sy::strategy::colocated, {}, format, pipeline, aggregation::node};
  };
  sy::transport::inproc_options uneven;  // nodes of 2 and 1 ranks
  uneven.node_sizes = {2, 1};
  sy::transport::inproc_options dealt;  // 3 + 1 + 2, ranks dealt in turn as mpirun places them
  dealt.node_sizes = {3, 1, 2};
  dealt.round_robin_nodes = true;
  for (const pipelining pipeline : {pipelining::off, pipelining::one_ahead}) {
    const std::string suffix = pipeline == pipelining::off ? "" : "_ahead";
    CAPTURE(suffix);
    check_resume(3, by_node(pipeline), 3, "node" + suffix, epochs, uneven);
    check_resume(6, by_node(pipeline, sy::compression::format::bf16), 2, "node_dealt_bf16" + suffix, epochs, dealt);
    const sy::strategy::switch_to chain{by_node(pipeline), sy::strategy::all_reduce<>{}, sy::trigger::after_steps{90}};
    check_resume(3, chain, 2, "node_switch" + suffix, epochs, uneven);
  }
}

TEST_CASE("checkpoint.resume.ps_compressed: resumed on another number of workers without the residuals; a residual "
          "of another model's size, and another compression, are refused" * doctest::timeout(120)) {
  const sync_ps bf16{1, {}, sy::compression::format::bf16};
  scratch dir("ps_bf16_ranks");
  CHECK_THROWS_AS(train(4, bf16, dir.path, 3, false), killed);
  // 3 workers saved their residuals; 2 workers cannot tell whose is whose, and start without.
  const std::vector<run> resumed = train(3, bf16, dir.path, 0, true);
  CHECK(resumed[0].losses.size() == epochs);

  sy::nn::mlp trained{11, {8, 8, 1}, 4};
  const std::size_t trained_size = trained.parameters().size();
  const auto saved =
      sy::train::load<float>(sy::train::checkpoint_file(dir.path), sy::train::fingerprint(trained, "mlp-8-8"));
  sync_ps restored = bf16;
  sy::train::decode_progress(restored, saved.strategy_progress, "saved");
  std::size_t other_size = 0;
  std::string refused;
  try {
    sy::transport::run_inproc(4, [&](sy::transport::inproc& t) {
      sy::nn::mlp other{11, {4, 1}, 4};
      if (t.rank() == 0) other_size = other.parameters().size();
      sy::optim::adam optimizer{other.parameters().size(), 0.01};
      sync_ps copy = restored;
      copy.setup(t, other, optimizer);
    });
  } catch (const sy::data_error& e) {
    refused = e.what();
  }
  CAPTURE(refused);
  CHECK(refused.find("error-feedback residual of " + std::to_string(trained_size) + " elements for a model of " +
                     std::to_string(other_size) + " parameters") != std::string::npos);

  // Its checkpoints hold the residuals: resumed without compression, or with fp16, it is refused
  // by its signature before any progress is decoded.
  sy::optim::adam optimizer{trained_size, 0.01};
  sy::train::trainer plain{trained, optimizer, sync_ps{1}};
  CHECK_THROWS_WITH_AS(sy::train::resume(plain, sy::train::checkpoint_file(dir.path),
                                         sy::train::fingerprint(trained, "mlp-8-8")),
                       doctest::Contains("was written by strategy 'ps[bf16]', this run's strategy is 'ps'"),
                       sy::data_error);
  sy::train::trainer fp16{trained, optimizer, sync_ps{1, {}, sy::compression::format::fp16}};
  CHECK_THROWS_WITH_AS(sy::train::resume(fp16, sy::train::checkpoint_file(dir.path),
                                         sy::train::fingerprint(trained, "mlp-8-8")),
                       doctest::Contains("this run's strategy is 'ps[fp16]'"), sy::data_error);
}

TEST_CASE("checkpoint.resume.alternate: killed in the second server period, resumed there with its trigger's count" *
          doctest::timeout(120)) {
  // The checkpoint of epoch 5 is taken inside the second server period, one epoch into it: the
  // resumed run must set up the server, and switch back after epoch 6 as the whole run did.
  check_resume(4, toggles(), 6, "alternate", 7);
}

// Backup-worker rounds hand batches out first come, first served, so only a single worker's run
// repeats bit for bit: its every round closes at its own push.
using backups_ps = sy::strategy::parameter_server<sy::strategy::consistency::backups<1>>;

TEST_CASE("checkpoint.resume.backups: one worker's backup rounds, on a server rank, co-located, and in a toggle, "
          "killed and resumed, equal to the bit" * doctest::timeout(120)) {
  check_resume(2, backups_ps{1}, 3, "ps_backups");
  check_resume(1, backups_ps{sy::strategy::colocated}, 3, "ps_backups_colocated");
  check_resume(2, toggles(backups_ps{1}), 6, "alternate_backups", 7);
  // B taken at run time, as `fashion_mnist --consistency backups:1` does: neither the stage nor the
  // alternate holding it is default constructible, and resuming it must not need them to be.
  using run_time_backups = sy::strategy::parameter_server<sy::strategy::consistency::backups<>>;
  check_resume(2, toggles(run_time_backups{1, sy::strategy::consistency::backups{1}}), 6, "alternate_backups_b", 7);
}

TEST_CASE("checkpoint.resume.backups: four co-located workers that drop a push a round, killed in epoch 3 and "
          "resumed: the saved epochs come back to the bit, every replica ends equal, the run ends trained" *
          doctest::timeout(120)) {
  const backups_ps prototype{sy::strategy::colocated};
  scratch uninterrupted("ps_backups4_whole");
  scratch interrupted("ps_backups4_killed");
  const std::vector<run> whole = train(4, prototype, uninterrupted.path, 0, false);
  CHECK_THROWS_AS(train(4, prototype, interrupted.path, 3, false), killed);
  sy::nn::mlp model{11, {8, 8, 1}, 4};
  const auto saved = sy::train::load<float>(sy::train::checkpoint_file(interrupted.path),
                                            sy::train::fingerprint(model, "mlp-8-8"));
  REQUIRE(saved.state.epoch == 2);
  const std::vector<run> resumed = train(4, prototype, interrupted.path, 0, true);
  REQUIRE(resumed.size() == 4);
  for (std::size_t rank = 0; rank < resumed.size(); ++rank) {
    CAPTURE(rank);
    CHECK(resumed[rank].parameters == resumed[0].parameters);
    CHECK(resumed[rank].stages == std::vector<std::string>(epochs, "ps"));
    REQUIRE(resumed[rank].losses.size() == epochs);
    for (std::size_t e = 0; e < 2; ++e) {
      CHECK(resumed[rank].losses[e] == saved.state.epochs.epochs[e].train_loss);
      CHECK(resumed[rank].accuracies[e] == saved.state.epochs.epochs[e].test_accuracy);
    }
    // Trained on from the checkpoint, not from scratch (whose first epoch is back near epoch 1's loss),
    // and as far as the uninterrupted run.
    CHECK(resumed[rank].losses[2] < resumed[rank].losses[1]);
    CHECK(resumed[rank].accuracies.back() >= whole[rank].accuracies.back() - 0.05);
  }
}

TEST_CASE("checkpoint.resume: the stages of the runs above are the ones asked for") {
  {
    scratch dir("alternate_stages");
    const std::vector<run> runs = train(4, toggles(), dir.path, 0, false, 7);
    CHECK(runs[0].stages ==
          std::vector<std::string>{"allreduce", "ps", "ps", "allreduce", "ps", "ps", "allreduce"});
  }
  scratch dir("stages");
  const sy::strategy::switch_to chain{sync_ps{1}, sy::strategy::all_reduce<>{}, sy::trigger::after_steps{90}};
  const std::vector<run> runs = train(4, chain, dir.path, 0, false);
  CHECK(runs[0].stages == std::vector<std::string>{"ps", "ps>allreduce", "allreduce", "allreduce", "allreduce"});
}

namespace {

// The mlp, except that one step of one rank goes wrong: its loss or its gradient becomes NaN.
struct poisoned : sy::nn::mlp<> {
  enum class where { loss, gradient };
  poisoned(std::size_t at, where w) : sy::nn::mlp<>{11, {8, 8, 1}, 4}, at_(at), where_(w) {}
  double forward_backward(const sy::data::batch_view& batch) {
    const double loss = sy::nn::mlp<>::forward_backward(batch);
    if (++calls_ != at_) return loss;
    if (where_ == where::loss) return std::numeric_limits<double>::quiet_NaN();
    gradients().back() = std::numeric_limits<float>::infinity();  // an output bias: no ReLU hides it
    return loss;
  }

 private:
  std::size_t at_;
  where where_;
  std::size_t calls_ = 0;
};

}  // namespace

TEST_CASE("checkpoint.divergence: a NaN loss or gradient ends the run at its step, the checkpoint stays" *
          doctest::timeout(120)) {
  const auto data = fixtures::quadrants(480, 7);
  // 20 steps an epoch per rank on 3 ranks: call 45 is epoch 3, step 4.
  for (const poisoned::where where : {poisoned::where::loss, poisoned::where::gradient}) {
    scratch dir("divergence");
    const std::string expected =
        where == poisoned::where::loss ? "the loss is NaN" : "a gradient element is NaN or infinite";
    CAPTURE(expected);
    CHECK_THROWS_WITH_AS(
        sy::transport::run_inproc(3,
                                  [&](sy::transport::inproc& t) {
                                    poisoned model{t.rank() == 1 ? 45u : 0u, where};
                                    sy::optim::adam optimizer{model.parameters().size(), 0.01};
                                    sy::train::trainer_options options;
                                    options.epochs = 5;
                                    options.batch_size = 8;
                                    options.checkpoint_every = 1;
                                    sy::train::trainer trainer{model, optimizer, sy::strategy::all_reduce<>{}, options};
                                    sy::train::write_checkpoints(trainer, dir.path,
                                                                 sy::train::fingerprint(model, "mlp-8-8"));
                                    trainer.fit(t, data, *data);
                                  }),
        doctest::Contains("training diverged at epoch 3, step 4"), sy::divergence_error);
    sy::nn::mlp model{11, {8, 8, 1}, 4};
    const auto c =
        sy::train::load<float>(sy::train::checkpoint_file(dir.path), sy::train::fingerprint(model, "mlp-8-8"));
    CHECK(c.state.epoch == 2);
    for (const float p : c.state.parameters) REQUIRE(std::isfinite(p));
  }
}

TEST_CASE("checkpoint.divergence: without the gradient scan an infinite gradient is caught one step later") {
  const auto data = fixtures::quadrants(480, 7);
  CHECK_THROWS_WITH_AS(
      sy::transport::run_inproc(1,
                                [&](sy::transport::inproc& t) {
                                  poisoned model{5, poisoned::where::gradient};
                                  sy::optim::adam optimizer{model.parameters().size(), 0.01};
                                  sy::train::trainer_options options;
                                  options.epochs = 1;
                                  options.batch_size = 8;
                                  options.check_gradients = false;
                                  sy::train::trainer trainer{model, optimizer, sy::strategy::all_reduce<>{}, options};
                                  trainer.fit(t, data, *data);
                                }),
      doctest::Contains("on rank 0: training diverged at epoch 1, step 5 (0-based, this worker's): "
                        "the loss is NaN"),
      sy::divergence_error);
}
