// The host build's stream log (Note [stream log] in stream_log.h) and its C ABI.
#include "runtime/stream_log.h"

#include <cstdint>
#include <mutex>
#include <vector>

#include "runtime/errors.h"

namespace cr {

std::atomic<bool> stream_log_on{false};

namespace {

struct Entry {
  int64_t kind, device, stream, event;
};

std::mutex log_mutex;
std::vector<Entry> entries;

}  // namespace

void stream_log_append(int kind, const void* stream, const void* event) {
  int device = 0;
  cr_get_device(&device);  // a NULL stream is the default stream of the current device
  std::lock_guard<std::mutex> lock(log_mutex);
  entries.push_back({kind, device, static_cast<int64_t>(reinterpret_cast<uintptr_t>(stream)),
                     static_cast<int64_t>(reinterpret_cast<uintptr_t>(event))});
}

}  // namespace cr

using namespace cr;

extern "C" {

int cr_testing_stream_log(int on) {
#ifndef CR_HOST_BUILD
  (void)on;
  return set_error(CR_ERROR_NOT_SUPPORTED, "cr_testing_stream_log: only the host build logs");
#else
  std::lock_guard<std::mutex> lock(log_mutex);
  if (on) entries.clear();
  stream_log_on.store(on != 0);
  return CR_SUCCESS;
#endif
}

int cr_testing_stream_log_read(int64_t* out, int capacity, int* count) {
  CR_CHECK_ARG(count, "cr_testing_stream_log_read: count is NULL");
  std::lock_guard<std::mutex> lock(log_mutex);
  *count = static_cast<int>(entries.size());
  for (int i = 0; i < capacity && i < *count; ++i) {
    const Entry& e = entries[i];
    int64_t* row = out + 4 * i;
    row[0] = e.kind;
    row[1] = e.device;
    row[2] = e.stream;
    row[3] = e.event;
  }
  return CR_SUCCESS;
}

}  // extern "C"
