/* Indexing kernels: gather, scatter_add, index_select, index_add, masked_fill, and
 * im2col/col2im for convolutions as matmuls. Index tensors are int64; every index is
 * checked (Note [index errors]); negative indices are errors, as in the reference's
 * gather/index_select (the Python side wraps them first where the reference does). */
#include "any_value.h"
#include "common.h"
#include "scalar_ops.h"

namespace cr {

/* out[p] += v, atomically on the GPU. Types without a native atomicAdd go through a
 * compare-and-swap loop on the aligned 32-bit word that holds them. */
template <class T> CR_HD inline T add_values(T a, T b) { return store<T>(load(a) + load(b)); }
CR_HD inline crbool add_values(crbool a, crbool b) { return crbool{(uint8_t)(a.v | b.v)}; }

#if defined(__CUDA_ARCH__)
template <class T> __device__ inline void atomic_add_cas(T* p, T v) {
  static_assert(sizeof(T) <= 2, "sub-word types only");
  unsigned int* word = (unsigned int*)((uintptr_t)p & ~(uintptr_t)3);
  const unsigned shift = (unsigned)((uintptr_t)p & 3) * 8;
  const unsigned mask = (sizeof(T) == 1 ? 0xffu : 0xffffu) << shift;
  unsigned old = *word, assumed;
  do {
    assumed = old;
    unsigned bits = (assumed & mask) >> shift, nb = 0;
    T cur;
    memcpy(&cur, &bits, sizeof(T));
    T nv = add_values(cur, v);
    memcpy(&nb, &nv, sizeof(T));
    old = atomicCAS(word, assumed, (assumed & ~mask) | (nb << shift));
  } while (assumed != old);
}
template <class T> __device__ inline void atomic_add(T* p, T v) { atomic_add_cas(p, v); }
__device__ inline void atomic_add(float* p, float v) { atomicAdd(p, v); }
__device__ inline void atomic_add(double* p, double v) { atomicAdd(p, v); }
__device__ inline void atomic_add(int32_t* p, int32_t v) { atomicAdd((int*)p, (int)v); }
__device__ inline void atomic_add(int64_t* p, int64_t v) {
  atomicAdd((unsigned long long*)p, (unsigned long long)v);
}
template <class R> __device__ inline void atomic_add(cplx<R>* p, cplx<R> v) {
  atomicAdd(&p->re, v.re);
  atomicAdd(&p->im, v.im);
}
#else
template <class T> inline void atomic_add(T* p, T v) { *p = add_values(*p, v); }
#endif

/* Reads index i of an int64 index tensor and checks 0 <= idx < size. */
CR_HD inline bool checked_index(const int64_t* index, int64_t off, int64_t size, int64_t* flag,
                                int64_t* out) {
  int64_t v = index[off];
  if (v < 0 || v >= size) { flag_index(flag, v, size); return false; }
  *out = v;
  return true;
}

/* gather (mode 0): out[p] = in[p with dim -> index[p]];
 * scatter_add (mode 1): out[p with dim -> index[p]] += src[p]. Walks index's shape;
 * operand 0 is the walked tensor (out / src), 1 index, 2 the other one with its
 * stride along dim zeroed (added back with the index). */
template <class T>
struct GatherScatterK {
  Geom<3> g;
  T* walked;
  const int64_t* index;
  T* other;
  int64_t dim_stride, dim_size;
  int64_t* flag;
  bool scatter;
  CR_HD void operator()(const cr_launch_idx& li) const {
    for (int64_t i = li.global(); i < g.numel; i += li.stride()) {
      int64_t o[3], idx;
      g.offsets(i, o);
      if (!checked_index(index, o[1], dim_size, flag, &idx)) continue;
      T* p = other + o[2] + idx * dim_stride;
      if (scatter) atomic_add(p, walked[o[0]]);
      else walked[o[0]] = *p;
    }
  }
};

/* A copy of t with `shape` (t's sizes must cover it) and its stride along dim zeroed. */
static cr_tensor restrided(const cr_tensor* t, const cr_tensor* shape_of, int dim) {
  cr_tensor v = *t;
  v.ndim = shape_of->ndim;
  for (int d = 0; d < v.ndim; ++d) v.shape[d] = shape_of->shape[d];
  if (v.ndim) v.strides[dim] = 0;
  return v;
}

static int check_dim(const char* op, int dim, const cr_tensor* t) {
  int nd = t->ndim ? t->ndim : 1;
  if (dim < 0 || dim >= nd)
    return fail("%s: Dimension out of range (expected to be in range of [%d, %d], but got %d)", op,
                -nd, nd - 1, dim);
  return 0;
}

static int check_index_tensor(const char* op, const cr_tensor* index) {
  if (check_tensor(index, op)) return 1;
  if (index->dtype != CR_INT64)
    return fail("%s(): Expected dtype int64 for index, got %s", op, dtype_name(index->dtype));
  return 0;
}

/* gather/scatter_add: index has the walked tensor's ndim; each size covers index's
 * except the other tensor's along dim. */
static int gather_scatter(bool scatter, const cr_tensor* walked, const cr_tensor* index,
                          const cr_tensor* other, int dim, void* stream) {
  const char* op = scatter ? "scatter_add" : "gather";
  if (check_tensor(walked, op) || check_tensor(other, op) || check_index_tensor(op, index) ||
      check_dim(op, dim, other))
    return 1;
  if (walked->dtype != other->dtype)
    return fail("%s(): Expected self.dtype to be equal to src.dtype", op);
  if (index->ndim != other->ndim || walked->ndim != other->ndim)
    return fail("Index tensor must have the same number of dimensions as %s tensor",
                scatter ? "self" : "input");
  for (int d = 0; d < index->ndim; ++d) {
    if (walked->shape[d] < index->shape[d] || (d != dim && other->shape[d] < index->shape[d]))
      return fail("Size does not match at dimension %d: expected index (size %lld) to be no "
                  "larger than %s apart from dimension %d", d, (long long)index->shape[d],
                  scatter ? "self and src" : "input", dim);
  }
  if (!scatter)
    for (int d = 0; d < index->ndim; ++d)
      if (walked->shape[d] != index->shape[d])
        return fail("gather: the output's size at dim %d must be index's", d);
  cr_tensor w = *walked, ov = restrided(other, index, dim);
  for (int d = 0; d < w.ndim; ++d) w.shape[d] = index->shape[d];
  Geom<3> g;
  const cr_tensor* ts[3] = {&w, index, &ov};
  if (build_geom(g, ts)) return 1;
  if (g.numel == 0) return 0;
  IndexFlag flag;
  if (flag.init(stream)) return 1;
  int64_t ds = other->ndim ? other->strides[dim] : 0, dsize = other->ndim ? other->shape[dim] : 1;
  CR_DISPATCH(other->dtype, {
    if (launch(GatherScatterK<T>{g, (T*)walked->data, (const int64_t*)index->data, (T*)other->data, ds,
                                 dsize, flag.dev, scatter}, g.numel, stream))
      return 1;
  });
  return flag.check(dim, stream);
}

/* index_select (gather-like) and index_add (scatter-like) along dim with a 1-D index:
 * walks `walked` (out / src), whose size along dim is the index's length. */
static int select_add(bool add, const cr_tensor* walked, const cr_tensor* index,
                      const cr_tensor* other, int dim, void* stream) {
  const char* op = add ? "index_add" : "index_select";
  if (check_tensor(walked, op) || check_tensor(other, op) || check_index_tensor(op, index) ||
      check_dim(op, dim, other))
    return 1;
  if (index->ndim > 1) return fail("%s(): Index is supposed to be a vector", op);
  if (walked->dtype != other->dtype)
    return fail("%s(): self (%s) and source (%s) must have the same scalar type", op,
                dtype_name(add ? other->dtype : walked->dtype), dtype_name(add ? walked->dtype : other->dtype));
  int64_t len = index->ndim ? index->shape[0] : 1;
  if (walked->ndim != other->ndim)
    return fail("%s(): the source and the destination need the same number of dims", op);
  for (int d = 0; d < walked->ndim; ++d)
    if (walked->shape[d] != (d == dim ? len : other->shape[d]))
      return fail("%s(): the size at dim %d should be %lld, got %lld", op, d,
                  (long long)(d == dim ? len : other->shape[d]), (long long)walked->shape[d]);
  cr_tensor ov = restrided(other, walked, dim), iv = *index;
  iv.ndim = walked->ndim;
  for (int d = 0; d < iv.ndim; ++d) {
    iv.shape[d] = walked->shape[d];
    iv.strides[d] = d == dim && index->ndim ? index->strides[0] : 0;
  }
  Geom<3> g;
  const cr_tensor* ts[3] = {walked, &iv, &ov};
  if (build_geom(g, ts)) return 1;
  if (g.numel == 0) return 0;
  IndexFlag flag;
  if (flag.init(stream)) return 1;
  int64_t ds = other->ndim ? other->strides[dim] : 0, dsize = other->ndim ? other->shape[dim] : 1;
  CR_DISPATCH(other->dtype, {
    if (launch(GatherScatterK<T>{g, (T*)walked->data, (const int64_t*)index->data, (T*)other->data, ds,
                                 dsize, flag.dev, add}, g.numel, stream))
      return 1;
  });
  if (!flag.check(dim, stream)) return 0;
  return add ? 1 : fail("index out of range in self");
}

template <class T>
struct MaskedFillK {
  Geom<2> g;
  T* out;
  const crbool* mask;
  T value;
  CR_HD void operator()(const cr_launch_idx& li) const {
    for (int64_t i = li.global(); i < g.numel; i += li.stride()) {
      int64_t o[2];
      g.offsets(i, o);
      if (mask[o[1]].v) out[o[0]] = value;
    }
  }
};

/* ---- im2col / col2im (NCHW; cols is (N, C*kh*kw, oh*ow)) ---- */
struct ConvGeom {
  int64_t N, C, H, W, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow;
  int64_t in_s[4], col_s[3];
};

template <class T>
struct Im2colK {
  ConvGeom g;
  const T* in;
  T* cols;
  CR_HD void operator()(const cr_launch_idx& li) const {
    const int64_t L = g.oh * g.ow, rows = g.C * g.kh * g.kw, total = g.N * rows * L;
    for (int64_t t = li.global(); t < total; t += li.stride()) {
      int64_t l = t % L, r = (t / L) % rows, n = t / (L * rows);
      int64_t kj = r % g.kw, ki = (r / g.kw) % g.kh, c = r / (g.kw * g.kh);
      int64_t y = (l / g.ow) * g.sh - g.ph + ki * g.dh, x = (l % g.ow) * g.sw - g.pw + kj * g.dw;
      T v = store<T>(FromDouble<typename Compute<T>::type>::make(0, 0));
      if (y >= 0 && y < g.H && x >= 0 && x < g.W)
        v = in[n * g.in_s[0] + c * g.in_s[1] + y * g.in_s[2] + x * g.in_s[3]];
      cols[n * g.col_s[0] + r * g.col_s[1] + l * g.col_s[2]] = v;
    }
  }
};

/* Each output pixel sums the columns that read it (no atomics: one writer each). */
template <class T>
struct Col2imK {
  ConvGeom g;
  const T* cols;
  T* out;
  CR_HD void operator()(const cr_launch_idx& li) const {
    typedef typename Compute<T>::type C;
    const int64_t total = g.N * g.C * g.H * g.W;
    for (int64_t t = li.global(); t < total; t += li.stride()) {
      int64_t x = t % g.W, y = (t / g.W) % g.H, c = (t / (g.W * g.H)) % g.C, n = t / (g.W * g.H * g.C);
      C acc = FromDouble<C>::make(0, 0);
      for (int64_t ki = 0; ki < g.kh; ++ki) {
        int64_t yy = y + g.ph - ki * g.dh;
        if (yy < 0 || yy % g.sh || yy / g.sh >= g.oh) continue;
        for (int64_t kj = 0; kj < g.kw; ++kj) {
          int64_t xx = x + g.pw - kj * g.dw;
          if (xx < 0 || xx % g.sw || xx / g.sw >= g.ow) continue;
          int64_t r = (c * g.kh + ki) * g.kw + kj, l = (yy / g.sh) * g.ow + xx / g.sw;
          acc = acc + load(cols[n * g.col_s[0] + r * g.col_s[1] + l * g.col_s[2]]);
        }
      }
      out[n * g.in_s[0] + c * g.in_s[1] + y * g.in_s[2] + x * g.in_s[3]] = store<T>(acc);
    }
  }
};

static int conv_geom(ConvGeom& g, const cr_tensor* image, const cr_tensor* cols, const int64_t* k,
                     const int64_t* s, const int64_t* p, const int64_t* d, const char* op) {
  if (image->ndim != 4 || cols->ndim != 3)
    return fail("%s: expected a 4-D image (N, C, H, W) and 3-D columns, got %d-D and %d-D", op,
                image->ndim, cols->ndim);
  if (image->dtype != cols->dtype) return fail("%s: the image and the columns need one dtype", op);
  for (int i = 0; i < 2; ++i)
    if (k[i] <= 0 || s[i] <= 0 || d[i] <= 0 || p[i] < 0)
      return fail("%s: kernel, stride and dilation must be positive and padding non-negative", op);
  g = ConvGeom{image->shape[0], image->shape[1], image->shape[2], image->shape[3], k[0], k[1],
               s[0], s[1], p[0], p[1], d[0], d[1], 0, 0, {}, {}};
  g.oh = (g.H + 2 * g.ph - g.dh * (g.kh - 1) - 1) / g.sh + 1;
  g.ow = (g.W + 2 * g.pw - g.dw * (g.kw - 1) - 1) / g.sw + 1;
  if (g.oh <= 0 || g.ow <= 0)
    return fail("%s: the kernel (%lld, %lld) does not fit the padded input (%lld, %lld)", op,
                (long long)g.kh, (long long)g.kw, (long long)(g.H + 2 * g.ph), (long long)(g.W + 2 * g.pw));
  if (cols->shape[0] != g.N || cols->shape[1] != g.C * g.kh * g.kw || cols->shape[2] != g.oh * g.ow)
    return fail("%s: the columns should have shape (%lld, %lld, %lld)", op, (long long)g.N,
                (long long)(g.C * g.kh * g.kw), (long long)(g.oh * g.ow));
  for (int i = 0; i < 4; ++i) g.in_s[i] = image->strides[i];
  for (int i = 0; i < 3; ++i) g.col_s[i] = cols->strides[i];
  return 0;
}

}  // namespace cr

using namespace cr;

extern "C" int cr_gather(cr_tensor* out, const cr_tensor* in, int dim, const cr_tensor* index, void* stream) {
  return gather_scatter(false, out, index, in, dim, stream);
}

extern "C" int cr_scatter_add(cr_tensor* out, int dim, const cr_tensor* index, const cr_tensor* src,
                              void* stream) {
  return gather_scatter(true, src, index, out, dim, stream);
}

extern "C" int cr_index_select(cr_tensor* out, const cr_tensor* in, int dim, const cr_tensor* index,
                               void* stream) {
  return select_add(false, out, index, in, dim, stream);
}

extern "C" int cr_index_add(cr_tensor* out, int dim, const cr_tensor* index, const cr_tensor* src,
                            void* stream) {
  return select_add(true, src, index, out, dim, stream);
}

extern "C" int cr_masked_fill(cr_tensor* out, const cr_tensor* mask, double real, double imag, void* stream) {
  if (check_tensor(out, "masked_fill") || check_tensor(mask, "masked_fill")) return 1;
  if (mask->dtype != CR_BOOL)
    return fail("masked_fill_ only supports boolean masks, but got mask with dtype %s", dtype_name(mask->dtype));
  Geom<2> g;
  const cr_tensor* ts[2] = {out, mask};
  if (build_geom(g, ts)) return 1;
  CR_DISPATCH(out->dtype, {
    T v = store<T>(FromDouble<typename Compute<T>::type>::make(real, imag));
    if (out->dtype == CR_BOOL) memset(&v, real != 0 || imag != 0, 1);
    return launch(MaskedFillK<T>{g, (T*)out->data, (const crbool*)mask->data, v}, g.numel, stream);
  });
  return 0;
}

extern "C" int cr_im2col(cr_tensor* cols, const cr_tensor* in, const int64_t* kernel, const int64_t* stride,
                         const int64_t* padding, const int64_t* dilation, void* stream) {
  ConvGeom g;
  if (check_tensor(cols, "im2col") || check_tensor(in, "im2col") ||
      conv_geom(g, in, cols, kernel, stride, padding, dilation, "im2col"))
    return 1;
  CR_DISPATCH(in->dtype, return launch(Im2colK<T>{g, (const T*)in->data, (T*)cols->data},
                                       g.N * g.C * g.kh * g.kw * g.oh * g.ow, stream));
  return 0;
}

extern "C" int cr_col2im(cr_tensor* out, const cr_tensor* cols, const int64_t* kernel, const int64_t* stride,
                         const int64_t* padding, const int64_t* dilation, void* stream) {
  ConvGeom g;
  if (check_tensor(out, "col2im") || check_tensor(cols, "col2im") ||
      conv_geom(g, out, cols, kernel, stride, padding, dilation, "col2im"))
    return 1;
  CR_DISPATCH(out->dtype, return launch(Col2imK<T>{g, (const T*)cols->data, (T*)out->data},
                                        g.N * g.C * g.H * g.W, stream));
  return 0;
}
