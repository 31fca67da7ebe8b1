// Deprecated forwarding header, kept for the 0.2 series: the training records (step_record,
// epoch_record, history) moved to core/history.hpp, so that triggers and strategies can see them
// without including train/. Their names are unchanged.
#pragma once

#pragma GCC warning "switchyard/train/history.hpp is deprecated: include switchyard/core/history.hpp (the names are unchanged)"

#include <switchyard/core/history.hpp>
