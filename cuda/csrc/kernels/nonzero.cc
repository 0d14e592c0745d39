/* cr_nonzero: the coordinates of the nonzero elements of a tensor, in C order, like
 * np.argwhere / the reference's nonzero(). The caller sizes out (n, ndim) int64 from a
 * count_nonzero reduction first (a device-to-host read: the output's size depends on
 * the data). Chunks of the flat C-order index are counted (pass 1), the counts turned
 * into exclusive prefixes (pass 2), and each chunk writes its rows from its prefix
 * (pass 3): no barriers, no atomics, the same order on the GPU and the host. */
#include "any_value.h"
#include "common.h"

namespace cr {

struct NonzeroGeom {
  Geom<1> g;                     /* in's elements in C order (collapsed) */
  int ndim;
  int64_t shape[CR_MAX_DIMS];    /* in's own shape, to unravel flat indices */
  int64_t chunks, len;
};

template <class T>
struct NonzeroK {
  NonzeroGeom ng;
  const T* in;
  int64_t* counts;               /* per chunk: the count (pass 1), then its prefix */
  int64_t* out;                  /* (rows, ndim) */
  int64_t rows, os0, os1;
  bool write;
  CR_HD void operator()(const cr_launch_idx& li) const {
    for (int64_t c = li.global(); c < ng.chunks; c += li.stride()) {
      const int64_t end = (c + 1) * ng.len < ng.g.numel ? (c + 1) * ng.len : ng.g.numel;
      int64_t k = write ? counts[c] : 0;
      for (int64_t i = c * ng.len; i < end; ++i) {
        int64_t off;
        ng.g.offsets(i, &off);
        if (!nonzero(load(in[off]))) continue;
        if (write && k < rows) {
          int64_t rest = i;
          for (int d = ng.ndim - 1; d >= 0; --d) {
            out[k * os0 + d * os1] = rest % ng.shape[d];
            rest /= ng.shape[d];
          }
        }
        ++k;
      }
      if (!write) counts[c] = k;
    }
  }
};

struct PrefixK {
  int64_t* counts;
  int64_t chunks;
  CR_HD void operator()(const cr_launch_idx& li) const {
    if (li.global() != 0) return;
    int64_t run = 0;
    for (int64_t c = 0; c < chunks; ++c) {
      int64_t n = counts[c];
      counts[c] = run;
      run += n;
    }
  }
};

}  // namespace cr

using namespace cr;

extern "C" int cr_nonzero(cr_tensor* out, const cr_tensor* in, void* stream) {
  if (check_tensor(out, "nonzero") || check_tensor(in, "nonzero")) return 1;
  if (out->dtype != CR_INT64 || out->ndim != 2 || out->shape[1] != in->ndim)
    return fail("nonzero: out must be int64 of shape (n, %d)", in->ndim);
  NonzeroGeom ng;
  const cr_tensor* ts[1] = {in};
  if (build_geom(ng.g, ts)) return 1;
  ng.ndim = in->ndim;
  for (int d = 0; d < in->ndim; ++d) ng.shape[d] = in->shape[d];
  if (ng.g.numel == 0 || out->shape[0] == 0) return 0;
  ng.chunks = (ng.g.numel + 1023) / 1024;
  ng.len = 1024;
  Scratch counts;
  if (counts.alloc(sizeof(int64_t) * ng.chunks, stream)) return 1;
  int64_t* cp = (int64_t*)counts.ptr;
  CR_DISPATCH(in->dtype, {
    NonzeroK<T> k{ng, (const T*)in->data, cp, (int64_t*)out->data, out->shape[0], out->strides[0],
                  out->strides[1], false};
    if (launch(k, ng.chunks, stream) || launch(PrefixK{cp, ng.chunks}, 1, stream)) return 1;
    k.write = true;
    return launch(k, ng.chunks, stream);
  });
  return 0;
}
