#!/usr/bin/env python3
"""Checks examples/simulation/build_simgrid.sh's changes to SimGrid's source on a tree that has
SimGrid 3.32's lines where the script changes them (the build itself, 5 to 13 minutes, is not run):

- the list of ActorImpl.hpp becomes a std::set, with <set> included, and every emplace_back and
  remove of it in the four sources an insert and an erase, other lines untouched;
- the two circular buffers of MailboxImpl.hpp become std::deque, with <deque> included instead;
- a second run leaves the changed tree as it is;
- a tree that is not SimGrid 3.32 is refused by name, before anything is configured or installed;
- the step that fails (here cmake, the tree having no CMakeLists.txt) is named with its log.

    build_simgrid.py BUILD_SIMGRID_SH
"""
import os
import subprocess
import sys
import tempfile

script = sys.argv[1]

header = """#include <functional>
#include <list>
#include <map>
class ActorImpl {
  activity::ActivityImplPtr waiting_synchro_ = nullptr;
  std::list<activity::ActivityImplPtr> activities_;     /* the current non-blocking synchros */
};
"""
mailbox = """#include <boost/circular_buffer.hpp>
class MailboxImpl {
  static constexpr size_t MAX_MAILBOX_SIZE = 10000000;
  boost::circular_buffer_space_optimized<CommImplPtr> comm_queue_{MAX_MAILBOX_SIZE};
  // messages already received in the permanent receive mode
  boost::circular_buffer_space_optimized<CommImplPtr> done_comm_queue_{MAX_MAILBOX_SIZE};
};
"""
sources = {
    "src/kernel/activity/MailboxImpl.hpp": mailbox,
    "src/kernel/activity/CommImpl.cpp": """  EngineImpl::get_instance()->get_maestro()->activities_.emplace_back(this);
    observer->get_issuer()->activities_.emplace_back(other_comm);
    EngineImpl::get_instance()->get_maestro()->activities_.remove(this);
    simcall->issuer_->activities_.remove(this);
  mbox_->remove(this);
""",
    "src/kernel/activity/ExecImpl.cpp": """    self->activities_.emplace_back(this);
    get_actor()->activities_.remove(this);
""",
    "src/kernel/activity/IoImpl.cpp": "    self->activities_.emplace_back(this);\n",
    "src/kernel/actor/ActorImpl.cpp": """  for (auto activity : activities_)
    activities_.remove(waiting_synchro_);
  activities_.clear();
""",
}


def write(root, path, text):
    os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
    with open(os.path.join(root, path), "w") as f:
        f.write(text)


def read(root, path):
    with open(os.path.join(root, path)) as f:
        return f.read()


def build(prefix, work):
    return subprocess.run(["sh", script, prefix, work], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def tree_of(source):
    return {path: read(source, path) for path in ["src/kernel/actor/ActorImpl.hpp", *sources]}


with tempfile.TemporaryDirectory() as tmp:
    work = os.path.join(tmp, "work")
    prefix = os.path.join(tmp, "prefix")
    source = os.path.join(work, "simgrid-3.32")
    write(source, "src/kernel/actor/ActorImpl.hpp", header)
    for path, text in sources.items():
        write(source, path, text)

    done = build(prefix, work)
    print(done.stdout)
    assert done.returncode != 0, done.stdout
    assert "build_simgrid.sh: cmake failed: see " + os.path.join(work, "cmake.log") in done.stdout, done.stdout
    changed = tree_of(source)
    assert changed["src/kernel/actor/ActorImpl.hpp"] == header.replace(
        "#include <list>\n", "#include <list>\n#include <set>\n").replace(
        "std::list<activity::ActivityImplPtr> activities_;", "std::set<activity::ActivityImplPtr> activities_;")
    assert changed["src/kernel/activity/MailboxImpl.hpp"] == """#include <deque>
class MailboxImpl {
  static constexpr size_t MAX_MAILBOX_SIZE = 10000000;
  std::deque<CommImplPtr> comm_queue_;
  // messages already received in the permanent receive mode
  std::deque<CommImplPtr> done_comm_queue_;
};
"""
    for path, text in sources.items():
        if path.endswith("MailboxImpl.hpp"):
            continue
        want = text.replace("activities_.emplace_back(", "activities_.insert(").replace(
            "activities_.remove(", "activities_.erase(")
        assert changed[path] == want, (path, changed[path])
    assert "mbox_->remove(this);" in changed["src/kernel/activity/CommImpl.cpp"]
    assert not os.path.exists(prefix)

    again = build(prefix, work)
    assert again.returncode != 0 and "cmake failed" in again.stdout, again.stdout
    assert tree_of(source) == changed

    # Not SimGrid 3.32: refused before cmake.
    other = os.path.join(tmp, "other")
    write(os.path.join(other, "simgrid-3.32"), "src/kernel/actor/ActorImpl.hpp", "class ActorImpl {};\n")
    refused = build(prefix, other)
    assert refused.returncode != 0, refused.stdout
    assert "simgrid-3.32 is not the SimGrid 3.32 this script changes" in refused.stdout, refused.stdout
    assert not os.path.exists(os.path.join(other, "cmake.log")) and not os.path.exists(prefix)
