#include "runtime/libraries.h"

#include <mutex>
#include <string>

#include "cr_cuda.h"

namespace cr {
namespace {
std::mutex mutex;
std::string cublas = "libcublas.so.13";
}  // namespace

const char* cublas_path() {
  std::lock_guard<std::mutex> lock(mutex);
  return cublas.c_str();  // set once, at load time, before any kernel runs
}

}  // namespace cr

extern "C" int cr_set_cublas_path(const char* path) {
  std::lock_guard<std::mutex> lock(cr::mutex);
  cr::cublas = path && *path ? path : "libcublas.so.13";
  return CR_SUCCESS;
}
