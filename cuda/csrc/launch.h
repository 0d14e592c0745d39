/* Kernel launching for both builds (Note [one C ABI, two builds] in cr_cuda.h).
 *
 * Note [kernel bodies]
 *   A kernel is a functor with `CR_HD void operator()(const cr_launch_idx& li) const`:
 *   its body reads blockIdx/threadIdx/blockDim/gridDim only through `li` and uses no
 *   shared memory and no barriers, so the host launcher can run it by looping over the
 *   same grid x block indices, one thread after another. Bodies are grid-stride loops
 *   over `li.global()` .. n step `li.stride()`, so any grid size computes the same
 *   result. Reductions that need the whole block go through global memory in two
 *   launches instead of __syncthreads. Under nvcc, `cr_launch` instantiates one
 *   `__global__` wrapper per functor type and launches it on the given stream (the
 *   opaque `void* stream` of the ABI is a cudaStream_t; NULL is the default stream).
 */
#ifndef CHAINRULE_CUDA_LAUNCH_H_
#define CHAINRULE_CUDA_LAUNCH_H_

#include <stdint.h>

#ifdef __CUDACC__
#include <cuda_runtime.h>
#define CR_HD __host__ __device__
#define CR_DEVICE_BUILD 1
#else
#define CR_HD
#define CR_DEVICE_BUILD 0
#endif

/* The launch indices a kernel body sees (1-D grids of 1-D blocks). */
struct cr_launch_idx {
  int64_t block, thread, block_dim, grid_dim;
  CR_HD int64_t global() const { return block * block_dim + thread; }
  CR_HD int64_t stride() const { return block_dim * grid_dim; }
};

namespace cr {

constexpr int kBlock = 256;

/* Blocks for n work items: enough to cover n once, capped (grid-stride loops do the
 * rest); the cap keeps the host launcher's loop and the GPU's grid the same shape. */
inline int64_t grid_for(int64_t n) {
  int64_t g = (n + kBlock - 1) / kBlock;
  const int64_t cap = 132 * 32;  /* H100 SMs x resident blocks of 256 threads */
  return g < 1 ? 1 : (g > cap ? cap : g);
}

#if CR_DEVICE_BUILD
template <class F>
__global__ void __launch_bounds__(kBlock) cr_kernel(const F f) {
  f(cr_launch_idx{(int64_t)blockIdx.x, (int64_t)threadIdx.x, (int64_t)blockDim.x,
                  (int64_t)gridDim.x});
}
int launch_failed(cudaError_t err);  /* sets cr_last_error; in kernels/common.cc */

/* Runs `f` over enough threads for n work items; 0 or an error code. */
template <class F>
int launch(const F& f, int64_t n, void* stream) {
  if (n <= 0) return 0;
  cr_kernel<F><<<(unsigned)grid_for(n), kBlock, 0, (cudaStream_t)stream>>>(f);
  cudaError_t err = cudaGetLastError();
  return err == cudaSuccess ? 0 : launch_failed(err);
}
#else
}  // namespace cr
#include "runtime/stream_log.h"
namespace cr {
/* The host launcher: the same grid x block indices, run one thread at a time (and the
 * stream it was queued on goes into the stream log, Note [stream log]). */
template <class F>
int launch(const F& f, int64_t n, void* stream) {
  if (n <= 0) return 0;
  log_stream_work(kLogKernel, stream);
  const int64_t grid = grid_for(n);
  cr_launch_idx li{0, 0, kBlock, grid};
  for (li.block = 0; li.block < grid; ++li.block)
    for (li.thread = 0; li.thread < kBlock; ++li.thread) f(li);
  return 0;
}
#endif

}  // namespace cr

#endif  /* CHAINRULE_CUDA_LAUNCH_H_ */
