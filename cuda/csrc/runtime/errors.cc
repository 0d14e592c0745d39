#include "runtime/errors.h"

#include <cstdarg>
#include <cstdio>
#include <new>
#include <stdexcept>

namespace cr {
namespace {
thread_local std::string last_error;
}  // namespace

int set_error(int code, const char* fmt, ...) {
  char buf[1024];
  va_list args;
  va_start(args, fmt);
  vsnprintf(buf, sizeof(buf), fmt, args);
  va_end(args);
  last_error = buf;
  return code;
}

std::string format_size(double bytes) {
  char buf[64];
  if (bytes < 1024.0) {
    snprintf(buf, sizeof(buf), "%.0f bytes", bytes);
  } else if (bytes < 1024.0 * 1024.0) {
    snprintf(buf, sizeof(buf), "%.2f KiB", bytes / 1024.0);
  } else if (bytes < 1024.0 * 1024.0 * 1024.0) {
    snprintf(buf, sizeof(buf), "%.2f MiB", bytes / (1024.0 * 1024.0));
  } else {
    snprintf(buf, sizeof(buf), "%.2f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  }
  return buf;
}

}  // namespace cr

extern "C" const char* cr_last_error(void) { return cr::last_error.c_str(); }
