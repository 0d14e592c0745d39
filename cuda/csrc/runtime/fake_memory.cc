#include <cstdlib>

#include "runtime/errors.h"
#include "runtime/platform.h"

namespace cr {

void* aligned_host_alloc(size_t nbytes) {
  void* ptr = nullptr;
  if (posix_memalign(&ptr, 512, nbytes == 0 ? 1 : nbytes) != 0) return nullptr;
  return ptr;
}

int FakeDeviceMemory::raw_alloc(int, size_t nbytes, void** ptr) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (nbytes > capacity_ - used_) return CR_ERROR_OUT_OF_MEMORY;
  *ptr = aligned_host_alloc(nbytes);
  if (*ptr == nullptr) return CR_ERROR_OUT_OF_MEMORY;
  used_ += nbytes;
  sizes_[*ptr] = nbytes;
  return CR_SUCCESS;
}

int FakeDeviceMemory::raw_free(int, void* ptr) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = sizes_.find(ptr);
  CR_CHECK_ARG(it != sizes_.end(), "fake device memory: %p was not allocated here", ptr);
  used_ -= it->second;
  sizes_.erase(it);
  free(ptr);
  return CR_SUCCESS;
}

int FakeDeviceMemory::mem_info(int, size_t* free_bytes, size_t* total_bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  *free_bytes = capacity_ - used_;
  *total_bytes = capacity_;
  return CR_SUCCESS;
}

}  // namespace cr
