// The host build's log of where device work went (Note [stream log]).
#ifndef CHAINRULE_CUDA_RUNTIME_STREAM_LOG_H_
#define CHAINRULE_CUDA_RUNTIME_STREAM_LOG_H_

#include <atomic>

namespace cr {

// Note [stream log]
//   The host build runs work when it is queued, so ordering bugs between streams
//   (a backward node on the wrong stream, a missing event wait) cannot show up as
//   wrong values. Instead, while cr_testing_stream_log(1) is on, the host build
//   writes down which stream each kernel launch, memcpy, event record and stream
//   wait went to, and tests assert the streams and the waits. Off (the default),
//   a launch pays one relaxed atomic load. The GPU build does not log.
enum StreamLogKind { kLogKernel = 0, kLogEventRecord = 1, kLogStreamWait = 2, kLogMemcpy = 3 };

extern std::atomic<bool> stream_log_on;
void stream_log_append(int kind, const void* stream, const void* event);

inline void log_stream_work(int kind, const void* stream, const void* event = nullptr) {
  if (stream_log_on.load(std::memory_order_relaxed)) stream_log_append(kind, stream, event);
}

}  // namespace cr

#endif  // CHAINRULE_CUDA_RUNTIME_STREAM_LOG_H_
