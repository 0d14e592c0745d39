// The CUDA runtime behind the C ABI (libchainrule_cuda.so; Note [one C ABI, two
// builds]). Plain C++ against cuda_runtime_api.h, linked with static cudart: no nvcc
// needed for this file. Stream and event handles are cudaStream_t / cudaEvent_t.
#include <cuda_runtime_api.h>

#include <mutex>
#include <string>

#include "runtime/errors.h"
#include "runtime/platform.h"

namespace cr {
namespace {

// A failed CUDA call: its error becomes the last error (and is cleared in CUDA).
int cuda_error(cudaError_t err, const char* what) {
  cudaGetLastError();
  return set_error(CR_ERROR_CUDA, "CUDA error: %s (%s returned %d %s)", cudaGetErrorString(err),
                   what, static_cast<int>(err), cudaGetErrorName(err));
}

#define CR_CUDA(call)                                          \
  do {                                                         \
    cudaError_t cr_err_ = (call);                              \
    if (cr_err_ != cudaSuccess) return cuda_error(cr_err_, #call); \
  } while (0)

// Why no GPU can be used, from the first cudaGetDeviceCount (cached: the answer does
// not change in a process), or empty.
const std::string& unavailable() {
  static const std::string reason = [] {
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    cudaGetLastError();
    if (err == cudaErrorInsufficientDriver)
      return std::string(
          "no NVIDIA driver: found no NVIDIA driver on this system (or it is older than "
          "the CUDA runtime needs; cudaGetDeviceCount returned cudaErrorInsufficientDriver, "
          "35). Check that the machine has an NVIDIA GPU and its driver is installed.");
    if (err == cudaErrorNoDevice || (err == cudaSuccess && count == 0))
      return std::string(
          "no CUDA device: the NVIDIA driver sees no GPU (cudaErrorNoDevice; check "
          "CUDA_VISIBLE_DEVICES)");
    if (err != cudaSuccess)
      return std::string("CUDA cannot be initialized: ") + cudaGetErrorName(err) + ": " +
             cudaGetErrorString(err);
    return std::string();
  }();
  return reason;
}

int require_gpu() {
  if (!unavailable().empty()) return set_error(CR_ERROR_UNAVAILABLE, "%s", unavailable().c_str());
  return CR_SUCCESS;
}

// Runs `body` with `device` current, restoring the caller's device after.
template <class F>
int on_device(int device, F&& body) {
  int prev = 0;
  CR_CUDA(cudaGetDevice(&prev));
  if (prev != device) CR_CUDA(cudaSetDevice(device));
  int status = body();
  if (prev != device) cudaSetDevice(prev);
  return status;
}

class CudaMemory : public DeviceMemory {
 public:
  int raw_alloc(int device, size_t nbytes, void** ptr) override {
    return on_device(device, [&] {
      cudaError_t err = cudaMalloc(ptr, nbytes);  // never managed memory
      if (err == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        return static_cast<int>(CR_ERROR_OUT_OF_MEMORY);
      }
      CR_CUDA(err);
      return static_cast<int>(CR_SUCCESS);
    });
  }
  int raw_free(int device, void* ptr) override {
    return on_device(device, [&] {
      CR_CUDA(cudaFree(ptr));
      return static_cast<int>(CR_SUCCESS);
    });
  }
  int mem_info(int device, size_t* free_bytes, size_t* total_bytes) override {
    return on_device(device, [&] {
      CR_CUDA(cudaMemGetInfo(free_bytes, total_bytes));
      return static_cast<int>(CR_SUCCESS);
    });
  }
};

const cudaMemcpyKind kCopyKinds[] = {cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost,
                                     cudaMemcpyDeviceToDevice, cudaMemcpyHostToHost};

}  // namespace

DeviceMemory& platform_memory() {
  static CudaMemory memory;
  return memory;
}

int raw_pinned_alloc(void** ptr, size_t nbytes) {
  CR_RETURN_IF_ERROR(require_gpu());
  cudaError_t err = cudaHostAlloc(ptr, nbytes, cudaHostAllocDefault);
  if (err == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    return CR_ERROR_OUT_OF_MEMORY;
  }
  CR_CUDA(err);
  return CR_SUCCESS;
}

int raw_pinned_free(void* ptr) {
  CR_CUDA(cudaFreeHost(ptr));
  return CR_SUCCESS;
}

}  // namespace cr

using namespace cr;

#define CR_REQUIRE_GPU() CR_RETURN_IF_ERROR(require_gpu())

extern "C" {

int cr_is_emulated(void) { return 0; }

const char* cr_unavailable_reason(void) {
  return unavailable().empty() ? nullptr : unavailable().c_str();
}

int cr_device_count(int* count) {
  *count = 0;
  if (!unavailable().empty()) return CR_SUCCESS;
  CR_CUDA(cudaGetDeviceCount(count));
  return CR_SUCCESS;
}

int cr_set_device(int device) {
  CR_REQUIRE_GPU();
  CR_CUDA(cudaSetDevice(device));
  return CR_SUCCESS;
}

int cr_get_device(int* device) {
  CR_REQUIRE_GPU();
  CR_CUDA(cudaGetDevice(device));
  return CR_SUCCESS;
}

int cr_device_synchronize(void) {
  CR_REQUIRE_GPU();
  CR_CUDA(cudaDeviceSynchronize());
  return CR_SUCCESS;
}

int cr_device_name(int device, char* buf, size_t len) {
  CR_REQUIRE_GPU();
  CR_CHECK_ARG(buf && len > 0, "cr_device_name: no buffer");
  cudaDeviceProp prop;
  CR_CUDA(cudaGetDeviceProperties(&prop, device));
  snprintf(buf, len, "%s", prop.name);
  return CR_SUCCESS;
}

int cr_device_capability(int device, int* major, int* minor) {
  CR_REQUIRE_GPU();
  CR_CUDA(cudaDeviceGetAttribute(major, cudaDevAttrComputeCapabilityMajor, device));
  CR_CUDA(cudaDeviceGetAttribute(minor, cudaDevAttrComputeCapabilityMinor, device));
  return CR_SUCCESS;
}

int cr_stream_create(void** stream, int priority) {
  CR_REQUIRE_GPU();
  cudaStream_t s = nullptr;
  CR_CUDA(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, priority));
  *stream = s;
  return CR_SUCCESS;
}

int cr_stream_destroy(void* stream) {
  CR_CUDA(cudaStreamDestroy(static_cast<cudaStream_t>(stream)));
  return CR_SUCCESS;
}

int cr_stream_synchronize(void* stream) {
  CR_REQUIRE_GPU();
  CR_CUDA(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
  return CR_SUCCESS;
}

int cr_stream_query(void* stream, int* done) {
  CR_REQUIRE_GPU();
  cudaError_t err = cudaStreamQuery(static_cast<cudaStream_t>(stream));
  if (err == cudaErrorNotReady) {
    cudaGetLastError();
    *done = 0;
    return CR_SUCCESS;
  }
  CR_CUDA(err);
  *done = 1;
  return CR_SUCCESS;
}

int cr_stream_wait_event(void* stream, void* event) {
  CR_CUDA(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), static_cast<cudaEvent_t>(event), 0));
  return CR_SUCCESS;
}

int cr_event_create(void** event, int enable_timing) {
  CR_REQUIRE_GPU();
  cudaEvent_t e = nullptr;
  CR_CUDA(cudaEventCreateWithFlags(&e, enable_timing ? cudaEventDefault : cudaEventDisableTiming));
  *event = e;
  return CR_SUCCESS;
}

int cr_event_destroy(void* event) {
  CR_CUDA(cudaEventDestroy(static_cast<cudaEvent_t>(event)));
  return CR_SUCCESS;
}

int cr_event_record(void* event, void* stream) {
  CR_CUDA(cudaEventRecord(static_cast<cudaEvent_t>(event), static_cast<cudaStream_t>(stream)));
  return CR_SUCCESS;
}

int cr_event_synchronize(void* event) {
  CR_CUDA(cudaEventSynchronize(static_cast<cudaEvent_t>(event)));
  return CR_SUCCESS;
}

int cr_event_query(void* event, int* done) {
  cudaError_t err = cudaEventQuery(static_cast<cudaEvent_t>(event));
  if (err == cudaErrorNotReady) {
    cudaGetLastError();
    *done = 0;
    return CR_SUCCESS;
  }
  CR_CUDA(err);
  *done = 1;
  return CR_SUCCESS;
}

int cr_event_elapsed_ms(void* start, void* end, float* ms) {
  CR_CUDA(cudaEventElapsedTime(ms, static_cast<cudaEvent_t>(start), static_cast<cudaEvent_t>(end)));
  return CR_SUCCESS;
}

int cr_memcpy(void* dst, const void* src, size_t nbytes, int kind, void* stream) {
  CR_CHECK_ARG(kind >= 0 && kind <= 3, "cr_memcpy: kind must be 0..3, got %d", kind);
  if (nbytes == 0) return CR_SUCCESS;
  auto s = static_cast<cudaStream_t>(stream);
  CR_CUDA(cudaMemcpyAsync(dst, src, nbytes, kCopyKinds[kind], s));
  // Device -> host: the caller reads the result next, so wait for it (the reference's
  // non_blocking=False); the other kinds stay queued on the stream.
  if (kind == 1) CR_CUDA(cudaStreamSynchronize(s));
  return record_pinned_copy(dst, src, kind, stream);
}

int cr_testing_hold_stream(void*, int) {
  return set_error(CR_ERROR_NOT_SUPPORTED,
                   "cr_testing_hold_stream exists in the host build only (CHAINRULE_CUDA_EMULATE=1)");
}

}  // extern "C"
