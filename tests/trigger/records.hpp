// Synthetic epoch records for the trigger tests.
#pragma once

#include <switchyard/core/history.hpp>

#include <cstddef>

inline switchyard::train::epoch_record record(std::size_t epoch, double loss = 1.0, double seconds = 0.0,
                                               std::size_t steps = 100) {
  switchyard::train::epoch_record r;
  r.epoch = epoch;
  r.train_loss = loss;
  r.wall_seconds = seconds;
  r.steps = steps;
  return r;
}
