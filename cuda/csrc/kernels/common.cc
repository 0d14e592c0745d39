#include "common.h"

#include <stdarg.h>
#include <stdio.h>

#include "runtime/errors.h"

namespace cr {

int fail(const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return set_error(CR_ERROR_INVALID_VALUE, "%s", buf);
}

#if CR_DEVICE_BUILD
int launch_failed(cudaError_t err) {
  return set_error(CR_ERROR_CUDA, "CUDA error: %s (kernel launch)", cudaGetErrorString(err));
}
#endif

const char* dtype_name(int dt) {
  static const char* names[CR_NUM_DTYPES] = {
      "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
      "float32", "float64", "complex64", "complex128"};
  return (dt >= 0 && dt < CR_NUM_DTYPES) ? names[dt] : "unknown";
}

int64_t numel_of(const cr_tensor* t) {
  int64_t n = 1;
  for (int d = 0; d < t->ndim; ++d) n *= t->shape[d];
  return n;
}

int check_tensor(const cr_tensor* t, const char* what) {
  if (!t) return fail("%s: missing tensor", what);
  if (t->ndim < 0 || t->ndim > CR_MAX_DIMS)
    return fail("%s: ndim %d is outside 0..%d", what, t->ndim, CR_MAX_DIMS);
  if (!dtype_size(t->dtype)) return fail("%s: unknown dtype code %d", what, t->dtype);
  for (int d = 0; d < t->ndim; ++d)
    if (t->shape[d] < 0) return fail("%s: negative size %lld", what, (long long)t->shape[d]);
  return 0;
}

/* Note [element-wise geometry]: broadcast each operand to out's shape, then drop
 * size-1 dims and merge dims contiguous in every operand. */
int make_geom(int n, const cr_tensor* const* ts, int, int64_t* shape,
              int64_t (*strides)[CR_MAX_DIMS], int* ndim_out, int64_t* numel) {
  const cr_tensor* out = ts[0];
  int nd = out->ndim;
  int64_t full[CR_MAX_DIMS][CR_MAX_DIMS];  /* [operand][dim] before merging */
  for (int k = 0; k < n; ++k) {
    const cr_tensor* t = ts[k];
    if (t->ndim > nd)
      return fail("operand %d has %d dims, more than the output's %d", k, t->ndim, nd);
    for (int d = 0; d < nd; ++d) {
      int dt = d - (nd - t->ndim);
      if (dt < 0 || t->shape[dt] == 1) full[k][d] = 0;
      else if (t->shape[dt] == out->shape[d]) full[k][d] = t->strides[dt];
      else
        return fail("the size of operand %d (%lld) must match the size of the output "
                    "(%lld) at dimension %d", k, (long long)t->shape[dt],
                    (long long)out->shape[d], d);
    }
  }
  *numel = numel_of(out);
  int m = 0;
  for (int d = 0; d < nd; ++d) {
    if (out->shape[d] == 1) continue;
    bool merge = m > 0;
    for (int k = 0; k < n && merge; ++k)
      merge = strides[k][m - 1] == full[k][d] * out->shape[d];
    if (merge) {
      shape[m - 1] *= out->shape[d];
      for (int k = 0; k < n; ++k) strides[k][m - 1] = full[k][d];
    } else {
      shape[m] = out->shape[d];
      for (int k = 0; k < n; ++k) strides[k][m] = full[k][d];
      ++m;
    }
  }
  *ndim_out = m;
  return 0;
}

int Scratch::alloc(size_t nbytes, void* stream) {
  if (cr_alloc(0, nbytes ? nbytes : 1, stream, &ptr)) { ptr = nullptr; return 1; }
  return 0;
}

Scratch::~Scratch() {
  if (ptr) cr_free(ptr);
}

int IndexFlag::init(void* stream) {
  if (mem.alloc(3 * sizeof(int64_t), stream)) return 1;
  dev = (int64_t*)mem.ptr;
  static const int64_t zeros[3] = {0, 0, 0};
  return cr_memcpy(dev, zeros, sizeof zeros, 0, stream);
}

int IndexFlag::check(int dim, void* stream) {
  int64_t host[3];
  if (cr_memcpy(host, dev, sizeof host, 1, stream) || cr_stream_synchronize(stream)) return 1;
  if (!host[0]) return 0;
  return fail("index %lld is out of bounds for dimension %d with size %lld",
              (long long)host[1], dim, (long long)host[2]);
}

}  // namespace cr

#include "reduce_geom.h"

namespace cr {

/* Appends dim (size, a, b) to a group, merging it into the previous dim when both
 * strides are contiguous across them; size-1 dims are dropped. */
static void push_dim(int* n, int64_t* shape, int64_t* sa, int64_t* sb, int64_t size,
                     int64_t a, int64_t b) {
  if (size == 1) return;
  int m = *n;
  if (m > 0 && sa[m - 1] == a * size && sb[m - 1] == b * size) {
    shape[m - 1] *= size;
    sa[m - 1] = a;
    sb[m - 1] = b;
    return;
  }
  shape[m] = size;
  sa[m] = a;
  sb[m] = b;
  *n = m + 1;
}

int make_rgeom(RGeom& g, const cr_tensor* in, const cr_tensor* out, uint64_t mask,
               bool same_shape, const char* op) {
  if (out->ndim != in->ndim)
    return fail("%s: the output has %d dims, the input %d", op, out->ndim, in->ndim);
  if (in->ndim < 64 && (mask >> in->ndim))
    return fail("%s: dims mask 0x%llx names a dim beyond the input's %d", op,
                (unsigned long long)mask, in->ndim);
  g.kd = g.rd = 0;
  g.M = g.R = 1;
  for (int d = 0; d < in->ndim; ++d) {
    bool reduced = (mask >> d) & 1;
    int64_t want = (reduced && !same_shape) ? 1 : in->shape[d];
    if (out->shape[d] != want)
      return fail("%s: the output's size %lld at dim %d should be %lld", op,
                  (long long)out->shape[d], d, (long long)want);
    if (reduced) {
      g.R *= in->shape[d];
      push_dim(&g.rd, g.rs, g.rin, g.rout, in->shape[d], in->strides[d],
               same_shape ? out->strides[d] : 0);
    } else {
      g.M *= in->shape[d];
      push_dim(&g.kd, g.ks, g.kin, g.kout, in->shape[d], in->strides[d], out->strides[d]);
    }
  }
  return 0;
}

}  // namespace cr
