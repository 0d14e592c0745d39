// What the platform-independent runtime (the caching allocator) needs from the
// platform: raw device memory and events. Two implementations, one per build (Note [one
// C ABI, two builds]): platform_cuda.cc (the CUDA runtime) and platform_host.cc (host
// emulation: device memory is host memory, work runs at once, streams and events are
// bookkeeping). Streams, events, devices and memcpy are C ABI functions each platform
// file defines directly.
#ifndef CHAINRULE_CUDA_RUNTIME_PLATFORM_H_
#define CHAINRULE_CUDA_RUNTIME_PLATFORM_H_

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace cr {

// Note [device memory interface]
//   The caching allocator asks for whole segments through this interface and never
//   touches the platform otherwise, so CI runs its logic (size classes, reuse,
//   split/merge, per-stream pools, OOM retry) against FakeDeviceMemory, a capacity
//   limit over host memory (cr_testing_set_fake_capacity), on a machine without a GPU.
class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  // CR_SUCCESS, or CR_ERROR_OUT_OF_MEMORY (no message set) when the device is full.
  virtual int raw_alloc(int device, size_t nbytes, void** ptr) = 0;
  virtual int raw_free(int device, void* ptr) = 0;
  virtual int mem_info(int device, size_t* free_bytes, size_t* total_bytes) = 0;
};

// The platform's own device memory (cudaMalloc, or host memory in the host build).
DeviceMemory& platform_memory();

// Host memory with a capacity: the fake device of the allocator's tests.
class FakeDeviceMemory : public DeviceMemory {
 public:
  explicit FakeDeviceMemory(size_t capacity) : capacity_(capacity) {}
  int raw_alloc(int device, size_t nbytes, void** ptr) override;
  int raw_free(int device, void* ptr) override;
  int mem_info(int device, size_t* free_bytes, size_t* total_bytes) override;

 private:
  std::mutex mutex_;
  size_t capacity_;
  size_t used_ = 0;
  std::unordered_map<void*, size_t> sizes_;
};

// Page-locked host memory from the platform (cudaHostAlloc, or host memory in the host
// build): CR_ERROR_OUT_OF_MEMORY (no message) when there is none; pinned_memory.cc
// caches it.
int raw_pinned_alloc(void** ptr, size_t nbytes);
int raw_pinned_free(void* ptr);

// cr_memcpy tells the pinned-memory cache that a copy queued on `stream` reads or
// writes a pinned block, which is then not reused before that copy is done.
int record_pinned_copy(void* dst, const void* src, int kind, void* stream);

// Host memory aligned like cudaMalloc's (512 bytes), or nullptr.
void* aligned_host_alloc(size_t nbytes);

}  // namespace cr

#endif  // CHAINRULE_CUDA_RUNTIME_PLATFORM_H_
