// A user operation that does not declare itself commutative, passed to the hierarchical all-reduce,
// which folds operands in node order rather than rank order.
#include <switchyard/collective/allreduce.hpp>
#include <switchyard/transport/inproc.hpp>

#include <vector>

struct last_set {
  int operator()(int a, int b) const { return b != 0 ? b : a; }
};

void call(switchyard::transport::inproc& t) {
  std::vector<int> data(10);
  switchyard::collective::allreduce(t, data, last_set{}, switchyard::algorithm::hierarchical{});
}
