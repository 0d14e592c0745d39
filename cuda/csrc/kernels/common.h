/* What every kernel family shares: errors, the strided geometry of element-wise
 * launches, scratch memory and the index-error flag. */
#ifndef CHAINRULE_CUDA_KERNELS_COMMON_H_
#define CHAINRULE_CUDA_KERNELS_COMMON_H_

#include "dtypes.h"

namespace cr {

/* Formats the message into cr_last_error() and returns CR_ERROR_INVALID_VALUE. */
int fail(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

/* Note [element-wise geometry]
 *   An element-wise launch walks out's shape in C order; operand k sits at
 *   sum(index[d] * strides[k][d]). Before launching, dims of size 1 are dropped and
 *   neighbouring dims that are contiguous in every operand are merged, so a
 *   contiguous (or uniformly strided) launch is one flat dim and the body takes its
 *   fast path (flat index, no division). Operands of lower rank align to the right and
 *   dims of size 1 broadcast by stride 0, like NumPy.
 */
template <int N>
struct Geom {
  int ndim;
  bool flat;  /* one dim, every stride 1 */
  int64_t numel;
  int64_t shape[CR_MAX_DIMS];
  int64_t strides[N][CR_MAX_DIMS];

  CR_HD void offsets(int64_t i, int64_t* off) const {
    for (int k = 0; k < N; ++k) off[k] = 0;
    if (numel <= 2147483647) {  /* 32-bit division: several times cheaper on the GPU */
      uint32_t u = (uint32_t)i;
      for (int d = ndim - 1; d >= 0; --d) {
        uint32_t q = u / (uint32_t)shape[d], r = u - q * (uint32_t)shape[d];
        u = q;
        for (int k = 0; k < N; ++k) off[k] += (int64_t)r * strides[k][d];
      }
      return;
    }
    for (int d = ndim - 1; d >= 0; --d) {
      int64_t q = i / shape[d], r = i - q * shape[d];
      i = q;
      for (int k = 0; k < N; ++k) off[k] += r * strides[k][d];
    }
  }
};

/* Builds the geometry of operands ts[0..n) over ts[0]'s shape (ts[0] is the output);
 * 0 or an error (a shape that does not broadcast). */
int make_geom(int n, const cr_tensor* const* ts, int ndim_max, int64_t* shape,
              int64_t (*strides)[CR_MAX_DIMS], int* ndim_out, int64_t* numel);

template <int N>
int build_geom(Geom<N>& g, const cr_tensor* const (&ts)[N]) {
  int rc = make_geom(N, ts, CR_MAX_DIMS, g.shape, g.strides, &g.ndim, &g.numel);
  if (rc) return rc;
  g.flat = g.ndim <= 1;
  for (int k = 0; k < N && g.ndim == 1; ++k) g.flat = g.flat && g.strides[k][0] == 1;
  return 0;
}

int64_t numel_of(const cr_tensor* t);
int check_tensor(const cr_tensor* t, const char* what);

/* Scratch device memory for multi-pass kernels (through the runtime's allocator). */
struct Scratch {
  void* ptr = nullptr;
  int alloc(size_t nbytes, void* stream);
  ~Scratch();
};

/* Note [index errors]
 *   Kernels that read an index tensor check every index; the first bad one is written
 *   to a flag in device memory (atomically on the GPU), and the entry point reads it
 *   back after the launch and returns the error. On the GPU that read waits for the
 *   kernel: checked indexing costs one synchronization per call.
 */
struct IndexFlag {
  Scratch mem;
  int64_t* dev = nullptr;  /* [0]: 1 when set; [1]: the bad index; [2]: dim size */
  int init(void* stream);
  /* 0, or the error "index I is out of bounds for dimension D with size S". */
  int check(int dim, void* stream);
};

CR_HD inline void flag_index(int64_t* flag, int64_t index, int64_t size) {
#if defined(__CUDA_ARCH__)
  if (atomicCAS((unsigned long long*)flag, 0ull, 1ull) == 0ull) {
    flag[1] = index;
    flag[2] = size;
  }
#else
  if (!flag[0]) { flag[0] = 1; flag[1] = index; flag[2] = size; }
#endif
}

}  // namespace cr

#endif  /* CHAINRULE_CUDA_KERNELS_COMMON_H_ */
