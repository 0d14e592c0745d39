// The ready queue: nodes whose gradients have all arrived, newest first (Note
// [sequence numbers] in node.py). Among equal sequence numbers (AccumulateGrad
// nodes share the maximum) the one pushed first pops first, like the Python
// engine's heap of (-seq, tie, node).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace chainrule_engine {

class ReadyQueue {
 public:
  void push(int64_t seq, int32_t node) {
    heap_.push_back(Entry{seq, next_tie_++, node});
    std::push_heap(heap_.begin(), heap_.end(), Later());
  }

  int32_t pop() {
    std::pop_heap(heap_.begin(), heap_.end(), Later());
    int32_t node = heap_.back().node;
    heap_.pop_back();
    return node;
  }

  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }

 private:
  struct Entry {
    int64_t seq;
    uint64_t tie;
    int32_t node;
  };
  // std heaps put the largest first: "a < b" means a pops after b.
  struct Later {
    bool operator()(const Entry& a, const Entry& b) const {
      if (a.seq != b.seq) return a.seq < b.seq;
      return a.tie > b.tie;
    }
  };
  std::vector<Entry> heap_;
  uint64_t next_tie_ = 0;
};

}  // namespace chainrule_engine
