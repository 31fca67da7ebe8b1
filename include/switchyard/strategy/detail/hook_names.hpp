// Whether a strategy has a member named like one of the optional members of strategy/traits.hpp,
// whatever its kind and signature: the traits refuse such a member when it cannot be called as
// the hook, where it would otherwise be passed over for the default.
#pragma once

#include <type_traits>

namespace switchyard::strategy::detail {

// `&probe_NAME<S>::NAME` names both S's member and the fallback's, so it is ambiguous, and the
// requirement fails, exactly when S has a member NAME of any kind (a function, a template, an
// overload set, a data member; accessible or not). A final class cannot be derived from: its
// members are never reported.
#define SWITCHYARD_DETAIL_HOOK_NAME(member)                                                  \
  struct fallback_##member {                                                                 \
    void member();                                                                           \
  };                                                                                         \
  template <class S>                                                                         \
  struct probe_##member : S, fallback_##member {};                                           \
  template <class S>                                                                         \
  concept has_member_##member = std::is_class_v<S> && !std::is_final_v<S> &&                 \
                                !requires { &probe_##member<S>::member; };

SWITCHYARD_DETAIL_HOOK_NAME(worker_count)
SWITCHYARD_DETAIL_HOOK_NAME(worker_index)
SWITCHYARD_DETAIL_HOOK_NAME(replicated)
SWITCHYARD_DETAIL_HOOK_NAME(batches_per_update)
SWITCHYARD_DETAIL_HOOK_NAME(hands_out_batches)
SWITCHYARD_DETAIL_HOOK_NAME(compares_nodes)
SWITCHYARD_DETAIL_HOOK_NAME(setup)
SWITCHYARD_DETAIL_HOOK_NAME(enter)
SWITCHYARD_DETAIL_HOOK_NAME(forward_backward)
SWITCHYARD_DETAIL_HOOK_NAME(begin_epoch)
SWITCHYARD_DETAIL_HOOK_NAME(serve)
SWITCHYARD_DETAIL_HOOK_NAME(end_epoch)
SWITCHYARD_DETAIL_HOOK_NAME(after_epoch)
SWITCHYARD_DETAIL_HOOK_NAME(hand_over)
SWITCHYARD_DETAIL_HOOK_NAME(assembled_state)
SWITCHYARD_DETAIL_HOOK_NAME(finish)
SWITCHYARD_DETAIL_HOOK_NAME(resume_at)
SWITCHYARD_DETAIL_HOOK_NAME(prepare_checkpoint)
SWITCHYARD_DETAIL_HOOK_NAME(serialize_progress)
SWITCHYARD_DETAIL_HOOK_NAME(stop_when)
SWITCHYARD_DETAIL_HOOK_NAME(stopped_after)
SWITCHYARD_DETAIL_HOOK_NAME(signature)

#undef SWITCHYARD_DETAIL_HOOK_NAME

}  // namespace switchyard::strategy::detail
