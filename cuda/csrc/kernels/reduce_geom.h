/* Geometry of kernels that walk lines of a tensor: reductions (any set of dims), arg
 * reductions, scans and softmax (one dim).
 *
 * Note [reduction geometry]
 *   The input's dims split into kept dims (walked by output index m, with strides in
 *   the input and in the output) and reduced dims (walked by reduce index r, with
 *   strides in the input and, for scans, the output). Each group is collapsed on its
 *   own (size-1 dims dropped, contiguous neighbours merged), so the common cases
 *   have one dim per group and index without division. Work item m covers output
 *   element m; reductions with few outputs split each output's r range over P
 *   interleaved work items (adjacent threads read adjacent elements) whose partial
 *   states a second launch combines: two passes through global memory, no barriers.
 */
#ifndef CHAINRULE_CUDA_KERNELS_REDUCE_GEOM_H_
#define CHAINRULE_CUDA_KERNELS_REDUCE_GEOM_H_

#include "common.h"

namespace cr {

struct RGeom {
  int kd, rd;
  int64_t M, R;
  int64_t ks[CR_MAX_DIMS], kin[CR_MAX_DIMS], kout[CR_MAX_DIMS];
  int64_t rs[CR_MAX_DIMS], rin[CR_MAX_DIMS], rout[CR_MAX_DIMS];

  CR_HD void kept(int64_t m, int64_t* in_off, int64_t* out_off) const {
    int64_t a = 0, b = 0;
    if (kd == 1) {
      a = m * kin[0];
      b = m * kout[0];
    } else {
      for (int d = kd - 1; d >= 0; --d) {
        int64_t q = m / ks[d], i = m - q * ks[d];
        m = q;
        a += i * kin[d];
        b += i * kout[d];
      }
    }
    *in_off = a;
    *out_off = b;
  }
  CR_HD int64_t reduced_in(int64_t r) const {
    if (rd == 1) return r * rin[0];
    int64_t a = 0;
    for (int d = rd - 1; d >= 0; --d) {
      int64_t q = r / rs[d];
      a += (r - q * rs[d]) * rin[d];
      r = q;
    }
    return a;
  }
};

/* Splits in's dims by `mask` (bit d: dim d is reduced) against out, which has in's
 * ndim with size 1 at reduced dims (scans: out has in's shape; pass same_shape). */
int make_rgeom(RGeom& g, const cr_tensor* in, const cr_tensor* out, uint64_t mask,
               bool same_shape, const char* op);

}  // namespace cr

#endif  /* CHAINRULE_CUDA_KERNELS_REDUCE_GEOM_H_ */
