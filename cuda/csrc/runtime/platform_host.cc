// Host emulation of the CUDA runtime (libchainrule_cuda_host.so; Note [one C ABI, two
// builds]): device memory is host memory, every piece of work runs when it is queued,
// and streams and events are bookkeeping objects. Testing can hold a stream
// (cr_testing_hold_stream) to stand for work still running on it: events recorded on a
// held stream stay pending until the stream is released or synchronized.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <vector>

#include "runtime/errors.h"
#include "runtime/platform.h"
#include "runtime/stream_log.h"

namespace cr {
namespace {

struct HostEvent;

struct HostStream {
  int device = 0;
  int priority = 0;
  bool held = false;
  std::vector<HostEvent*> pending;  // events recorded while held
};

struct HostEvent {
  bool timing = false;
  bool recorded = false;
  bool done = true;
  double ms = 0.0;
  HostStream* pending_on = nullptr;
};

std::mutex mutex;                  // guards every stream and event below
std::set<HostStream*> streams;     // created streams (handles are checked against it)
std::set<HostEvent*> events;
thread_local int current_device = 0;

double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

int emulated_device_count() {
  static const int count = [] {
    const char* env = getenv("CHAINRULE_CUDA_EMULATE_DEVICES");
    int n = env && *env ? atoi(env) : 1;
    return n < 1 ? 1 : n;
  }();
  return count;
}

HostStream* default_stream(int device) {
  static std::vector<HostStream> defaults = [] {
    std::vector<HostStream> v(emulated_device_count());
    for (size_t i = 0; i < v.size(); ++i) v[i].device = static_cast<int>(i);
    return v;
  }();
  return &defaults[device];
}

// The stream a handle names (NULL: the current device's default stream), or nullptr.
HostStream* resolve_stream(void* handle) {
  if (handle == nullptr) return default_stream(current_device);
  auto* s = static_cast<HostStream*>(handle);
  return streams.count(s) ? s : nullptr;
}

HostEvent* resolve_event(void* handle) {
  auto* e = static_cast<HostEvent*>(handle);
  return events.count(e) ? e : nullptr;
}

// The queued work of a held stream finishes now: its pending events complete.
void complete_stream(HostStream* s) {
  double t = now_ms();
  for (HostEvent* e : s->pending) {
    e->done = true;
    e->ms = t;
    e->pending_on = nullptr;
  }
  s->pending.clear();
  s->held = false;
}

void complete_event(HostEvent* e) {
  if (e->pending_on) complete_stream(e->pending_on);
}

class HostMemory : public DeviceMemory {
 public:
  int raw_alloc(int, size_t nbytes, void** ptr) override {
    *ptr = aligned_host_alloc(nbytes);
    return *ptr ? CR_SUCCESS : CR_ERROR_OUT_OF_MEMORY;
  }
  int raw_free(int, void* ptr) override {
    free(ptr);
    return CR_SUCCESS;
  }
  int mem_info(int, size_t* free_bytes, size_t* total_bytes) override {
    size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    *total_bytes = static_cast<size_t>(sysconf(_SC_PHYS_PAGES)) * page;
    *free_bytes = static_cast<size_t>(sysconf(_SC_AVPHYS_PAGES)) * page;
    return CR_SUCCESS;
  }
};

int check_device(int device) {
  CR_CHECK_ARG(device >= 0 && device < emulated_device_count(),
               "CUDA error: invalid device ordinal (device %d; %d emulated device(s))", device,
               emulated_device_count());
  return CR_SUCCESS;
}

}  // namespace

DeviceMemory& platform_memory() {
  static HostMemory memory;
  return memory;
}

int raw_pinned_alloc(void** ptr, size_t nbytes) {
  *ptr = aligned_host_alloc(nbytes);
  return *ptr ? CR_SUCCESS : CR_ERROR_OUT_OF_MEMORY;
}

int raw_pinned_free(void* ptr) {
  free(ptr);
  return CR_SUCCESS;
}

}  // namespace cr

using namespace cr;

extern "C" {

int cr_is_emulated(void) { return 1; }
const char* cr_unavailable_reason(void) { return nullptr; }

int cr_device_count(int* count) {
  *count = emulated_device_count();
  return CR_SUCCESS;
}

int cr_set_device(int device) {
  CR_RETURN_IF_ERROR(check_device(device));
  current_device = device;
  return CR_SUCCESS;
}

int cr_get_device(int* device) {
  *device = current_device;
  return CR_SUCCESS;
}

int cr_device_synchronize(void) {
  std::lock_guard<std::mutex> lock(mutex);
  for (HostStream* s : streams)
    if (s->device == current_device) complete_stream(s);
  complete_stream(default_stream(current_device));
  return CR_SUCCESS;
}

int cr_device_name(int device, char* buf, size_t len) {
  CR_RETURN_IF_ERROR(check_device(device));
  CR_CHECK_ARG(buf && len > 0, "cr_device_name: no buffer");
  snprintf(buf, len, "chainrule host emulation (CPU)");
  return CR_SUCCESS;
}

int cr_device_capability(int device, int* major, int* minor) {
  CR_RETURN_IF_ERROR(check_device(device));
  *major = 9;  // the GPU build's target, sm_90
  *minor = 0;
  return CR_SUCCESS;
}

int cr_stream_create(void** stream, int priority) {
  std::lock_guard<std::mutex> lock(mutex);
  auto* s = new HostStream;
  s->device = current_device;
  s->priority = priority;
  streams.insert(s);
  *stream = s;
  return CR_SUCCESS;
}

int cr_stream_destroy(void* stream) {
  std::lock_guard<std::mutex> lock(mutex);
  CR_CHECK_ARG(stream && streams.count(static_cast<HostStream*>(stream)),
               "CUDA error: invalid resource handle (stream %p)", stream);
  auto* s = static_cast<HostStream*>(stream);
  complete_stream(s);  // like cudaStreamDestroy: queued work still finishes
  streams.erase(s);
  delete s;
  return CR_SUCCESS;
}

int cr_stream_synchronize(void* stream) {
  std::lock_guard<std::mutex> lock(mutex);
  HostStream* s = resolve_stream(stream);
  CR_CHECK_ARG(s, "CUDA error: invalid resource handle (stream %p)", stream);
  complete_stream(s);
  return CR_SUCCESS;
}

int cr_stream_query(void* stream, int* done) {
  std::lock_guard<std::mutex> lock(mutex);
  HostStream* s = resolve_stream(stream);
  CR_CHECK_ARG(s, "CUDA error: invalid resource handle (stream %p)", stream);
  *done = s->held ? 0 : 1;
  return CR_SUCCESS;
}

int cr_stream_wait_event(void* stream, void* event) {
  std::lock_guard<std::mutex> lock(mutex);
  CR_CHECK_ARG(resolve_stream(stream), "CUDA error: invalid resource handle (stream %p)", stream);
  CR_CHECK_ARG(resolve_event(event), "CUDA error: invalid resource handle (event %p)", event);
  log_stream_work(kLogStreamWait, stream, event);
  return CR_SUCCESS;  // work runs when queued: there is nothing to order
}

int cr_event_create(void** event, int enable_timing) {
  std::lock_guard<std::mutex> lock(mutex);
  auto* e = new HostEvent;
  e->timing = enable_timing != 0;
  events.insert(e);
  *event = e;
  return CR_SUCCESS;
}

int cr_event_destroy(void* event) {
  std::lock_guard<std::mutex> lock(mutex);
  HostEvent* e = resolve_event(event);
  CR_CHECK_ARG(e, "CUDA error: invalid resource handle (event %p)", event);
  if (e->pending_on) {
    auto& p = e->pending_on->pending;
    p.erase(std::remove(p.begin(), p.end(), e), p.end());
  }
  events.erase(e);
  delete e;
  return CR_SUCCESS;
}

int cr_event_record(void* event, void* stream) {
  std::lock_guard<std::mutex> lock(mutex);
  HostEvent* e = resolve_event(event);
  HostStream* s = resolve_stream(stream);
  CR_CHECK_ARG(e, "CUDA error: invalid resource handle (event %p)", event);
  CR_CHECK_ARG(s, "CUDA error: invalid resource handle (stream %p)", stream);
  if (e->pending_on) {  // re-recorded: it now marks the new point
    auto& p = e->pending_on->pending;
    p.erase(std::remove(p.begin(), p.end(), e), p.end());
    e->pending_on = nullptr;
  }
  log_stream_work(kLogEventRecord, stream, event);
  e->recorded = true;
  e->done = !s->held;
  e->ms = now_ms();
  if (s->held) {
    e->pending_on = s;
    s->pending.push_back(e);
  }
  return CR_SUCCESS;
}

int cr_event_synchronize(void* event) {
  std::lock_guard<std::mutex> lock(mutex);
  HostEvent* e = resolve_event(event);
  CR_CHECK_ARG(e, "CUDA error: invalid resource handle (event %p)", event);
  complete_event(e);
  return CR_SUCCESS;
}

int cr_event_query(void* event, int* done) {
  std::lock_guard<std::mutex> lock(mutex);
  HostEvent* e = resolve_event(event);
  CR_CHECK_ARG(e, "CUDA error: invalid resource handle (event %p)", event);
  *done = e->done ? 1 : 0;
  return CR_SUCCESS;
}

int cr_event_elapsed_ms(void* start, void* end, float* ms) {
  std::lock_guard<std::mutex> lock(mutex);
  HostEvent* a = resolve_event(start);
  HostEvent* b = resolve_event(end);
  CR_CHECK_ARG(a && b, "CUDA error: invalid resource handle (event)");
  CR_CHECK_ARG(a->timing && b->timing,
               "CUDA error: invalid resource handle (both events must be created with "
               "enable_timing=True to measure elapsed time)");
  CR_CHECK_ARG(a->recorded && b->recorded,
               "CUDA error: invalid resource handle (both events must be recorded before "
               "measuring elapsed time)");
  if (!a->done || !b->done) return set_error(CR_ERROR_CUDA, "CUDA error: device not ready");
  *ms = static_cast<float>(b->ms - a->ms);
  return CR_SUCCESS;
}

int cr_memcpy(void* dst, const void* src, size_t nbytes, int kind, void* stream) {
  CR_CHECK_ARG(kind >= 0 && kind <= 3, "cr_memcpy: kind must be 0..3, got %d", kind);
  {
    std::lock_guard<std::mutex> lock(mutex);
    CR_CHECK_ARG(resolve_stream(stream), "CUDA error: invalid resource handle (stream %p)",
                 stream);
  }
  if (nbytes) memmove(dst, src, nbytes);
  log_stream_work(kLogMemcpy, stream);
  return record_pinned_copy(dst, src, kind, stream);
}

int cr_testing_hold_stream(void* stream, int hold) {
  std::lock_guard<std::mutex> lock(mutex);
  HostStream* s = resolve_stream(stream);
  CR_CHECK_ARG(s, "CUDA error: invalid resource handle (stream %p)", stream);
  if (hold)
    s->held = true;
  else
    complete_stream(s);
  return CR_SUCCESS;
}

}  // extern "C"
