/* Stable sort along one dim (values and/or int64 indices), like np.sort(kind="stable")
 * / np.argsort and the reference's sort(stable=True).
 *
 * Note [bitonic sort through global memory]
 *   Each line is copied into scratch as (key, original index) pairs, padded to a power
 *   of two P, and sorted by a bitonic network: log2(P) * (log2(P) + 1) / 2 launches,
 *   each one compare-exchange step over every line at once (no barriers, so the host
 *   launcher runs the same passes). Ties compare by original index, which makes the
 *   unstable network give the stable order; NaN sorts after every number (before
 *   them when descending, as the reference does); padding sorts last. The last launch
 *   writes each line's values (read back from the input at the sorted index, so no
 *   precision is lost) and indices.
 */
#include "accumulate.h"
#include "any_value.h"
#include "reduce_geom.h"
#include "scalar_ops.h"

namespace cr {

template <class K> struct SortItem {
  K key;
  int64_t index;  /* original position; -1 marks padding */
};

template <class K> CR_HD inline bool key_nan(K k) { return k != k; }

/* a goes before b in the final order. */
template <class K> CR_HD inline bool before(const SortItem<K>& a, const SortItem<K>& b, bool desc) {
  if ((a.index < 0) != (b.index < 0)) return b.index < 0;
  if (a.index < 0) return false;
  bool an = key_nan(a.key), bn = key_nan(b.key);
  if (an != bn) return desc ? an : bn;
  if (!an && a.key != b.key) return desc ? a.key > b.key : a.key < b.key;
  return a.index < b.index;
}

template <class T>
struct SortInitK {
  typedef typename Acc<typename Compute<T>::type>::type K;
  RGeom g;
  const T* in;
  SortItem<K>* items;
  int64_t P;
  CR_HD void operator()(const cr_launch_idx& li) const {
    for (int64_t t = li.global(); t < g.M * P; t += li.stride()) {
      int64_t m = t / P, p = t - m * P, in_off, out_off;
      g.kept(m, &in_off, &out_off);
      if (p < g.R) items[t] = SortItem<K>{to_acc(load(in[in_off + p * g.rin[0]])), p};
      else items[t] = SortItem<K>{K(0), -1};
    }
  }
};

template <class K>
struct BitonicK {
  SortItem<K>* items;
  int64_t n, P, k, j;
  bool desc;
  CR_HD void operator()(const cr_launch_idx& li) const {
    for (int64_t t = li.global(); t < n; t += li.stride()) {
      int64_t i = t % P, l = i ^ j;
      if (l <= i) continue;
      SortItem<K>* line = items + (t - i);
      bool up = (i & k) == 0;  /* this block of size k sorts toward the final order */
      bool swap = up ? before(line[l], line[i], desc) : before(line[i], line[l], desc);
      if (swap) {
        SortItem<K> tmp = line[i];
        line[i] = line[l];
        line[l] = tmp;
      }
    }
  }
};

template <class T>
struct SortWriteK {
  typedef typename Acc<typename Compute<T>::type>::type K;
  RGeom g, gi;  /* values walk, indices walk (each with rout along dim) */
  const T* in;
  const SortItem<K>* items;
  T* values;
  int64_t* indices;
  int64_t P;
  CR_HD void operator()(const cr_launch_idx& li) const {
    for (int64_t t = li.global(); t < g.M * g.R; t += li.stride()) {
      int64_t m = t / g.R, p = t - m * g.R, in_off, out_off;
      g.kept(m, &in_off, &out_off);
      int64_t src = items[m * P + p].index;
      if (values) values[out_off + p * g.rout[0]] = in[in_off + src * g.rin[0]];
      if (indices) {
        int64_t ii, io;
        gi.kept(m, &ii, &io);
        indices[io + p * gi.rout[0]] = src;
      }
    }
  }
};

static int sort_line_geom(RGeom& g, const cr_tensor* in, const cr_tensor* out, int dim) {
  if (dim < 0 || dim >= (in->ndim ? in->ndim : 1))
    return fail("sort: dim %d is out of range for a tensor of %d dims", dim, in->ndim);
  if (make_rgeom(g, in, out, in->ndim ? 1ull << dim : 0, true, "sort")) return 1;
  if (g.rd == 0) { g.rd = 1; g.rs[0] = 1; g.rin[0] = g.rout[0] = 0; }
  return 0;
}

template <class T>
int run_sort(const RGeom& g, const RGeom& gi, const cr_tensor* in, cr_tensor* values,
             cr_tensor* indices, bool desc, void* stream) {
  typedef typename SortInitK<T>::K K;
  int64_t P = 1;
  while (P < g.R) P *= 2;
  Scratch scratch;
  if (scratch.alloc(sizeof(SortItem<K>) * g.M * P, stream)) return 1;
  SortItem<K>* items = (SortItem<K>*)scratch.ptr;
  if (launch(SortInitK<T>{g, (const T*)in->data, items, P}, g.M * P, stream)) return 1;
  for (int64_t k = 2; k <= P; k *= 2)
    for (int64_t j = k / 2; j >= 1; j /= 2)
      if (launch(BitonicK<K>{items, g.M * P, P, k, j, desc}, g.M * P, stream)) return 1;
  return launch(SortWriteK<T>{g, gi, (const T*)in->data, items, values ? (T*)values->data : nullptr,
                              indices ? (int64_t*)indices->data : nullptr, P},
                g.M * g.R, stream);
}

}  // namespace cr

using namespace cr;

extern "C" int cr_sort(cr_tensor* values, cr_tensor* indices, const cr_tensor* in, int dim,
                       int descending, void* stream) {
  if (check_tensor(in, "sort") || (values && check_tensor(values, "sort")) ||
      (indices && check_tensor(indices, "sort")))
    return 1;
  if (!values && !indices) return fail("sort: pass values, indices or both");
  if (values && values->dtype != in->dtype) return fail("sort: values must have the input's dtype");
  if (indices && indices->dtype != CR_INT64) return fail("sort: indices must be int64");
  RGeom g, gi;
  if (sort_line_geom(g, in, values ? values : indices, dim) ||
      sort_line_geom(gi, in, indices ? indices : values, dim))
    return 1;
  if (g.M * g.R == 0) return 0;
  CR_DISPATCH_REAL(in->dtype, return run_sort<T>(g, gi, in, values, indices, descending != 0, stream));
  return 0;
}
