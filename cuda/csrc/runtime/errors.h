// Errors of the C ABI: every entry point returns a cr_status and leaves the message in
// a thread-local string that cr_last_error() returns (Note [one C ABI, two builds]).
#ifndef CHAINRULE_CUDA_RUNTIME_ERRORS_H_
#define CHAINRULE_CUDA_RUNTIME_ERRORS_H_

#include <exception>
#include <new>
#include <string>

#include "cr_cuda.h"

namespace cr {

// Sets the calling thread's last error (printf-style) and returns `code`.
int set_error(int code, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

// "20.00 MiB": sizes in the reference allocator's units (bytes, KiB, MiB, GiB).
std::string format_size(double bytes);

// Runs `body` (returning a cr_status), turning a C++ exception into an error code, so
// that no exception crosses the C ABI.
template <class F>
int guarded(F&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return set_error(CR_ERROR_OUT_OF_MEMORY, "host out of memory");
  } catch (const std::exception& e) {
    return set_error(CR_ERROR_INVALID_VALUE, "%s", e.what());
  }
}

}  // namespace cr

#define CR_CHECK_ARG(cond, ...) \
  do {                          \
    if (!(cond)) return ::cr::set_error(CR_ERROR_INVALID_VALUE, __VA_ARGS__); \
  } while (0)

#define CR_RETURN_IF_ERROR(expr) \
  do {                           \
    int cr_status_ = (expr);     \
    if (cr_status_ != CR_SUCCESS) return cr_status_; \
  } while (0)

#endif  // CHAINRULE_CUDA_RUNTIME_ERRORS_H_
