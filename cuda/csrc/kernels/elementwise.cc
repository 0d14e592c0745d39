/* Element-wise kernels: fill, copy (any dtype to any dtype), unary, binary, ternary
 * and where, over strided operands (Note [element-wise geometry]). */
#include "common.h"
#include "any_value.h"
#include "scalar_ops.h"

namespace cr {

/* Offsets of element i in N operands: flat launches index directly. */
template <int N>
CR_HD inline void element_offsets(const Geom<N>& g, int64_t i, int64_t* off) {
  if (g.flat) {
    for (int k = 0; k < N; ++k) off[k] = i;
  } else if (g.ndim == 1) {
    for (int k = 0; k < N; ++k) off[k] = i * g.strides[k][0];
  } else {
    g.offsets(i, off);
  }
}

template <class T>
struct FillK {
  Geom<1> g;
  T* out;
  T value;
  CR_HD void operator()(const cr_launch_idx& li) const {
    for (int64_t i = li.global(); i < g.numel; i += li.stride()) {
      int64_t o[1];
      element_offsets(g, i, o);
      out[o[0]] = value;
    }
  }
};

/* Same dtype: a move of W-byte words. */
template <class W>
struct CopyK {
  Geom<2> g;
  W* out;
  const W* in;
  CR_HD void operator()(const cr_launch_idx& li) const {
    for (int64_t i = li.global(); i < g.numel; i += li.stride()) {
      int64_t o[2];
      element_offsets(g, i, o);
      out[o[0]] = in[o[1]];
    }
  }
};
struct Bytes16 { uint64_t lo, hi; };

template <class Tout>
struct ConvertK {
  Geom<2> g;
  Tout* out;
  const char* in;
  int in_dtype;
  CR_HD void operator()(const cr_launch_idx& li) const {
    for (int64_t i = li.global(); i < g.numel; i += li.stride()) {
      int64_t o[2];
      element_offsets(g, i, o);
      out[o[0]] = store<Tout>(load_any(in_dtype, in, o[1]));
    }
  }
};

template <class Tin, class Tout>
struct UnaryK {
  Geom<2> g;
  Tout* out;
  const Tin* in;
  int op;
  double arg;
  CR_HD void operator()(const cr_launch_idx& li) const {
    for (int64_t i = li.global(); i < g.numel; i += li.stride()) {
      int64_t o[2];
      element_offsets(g, i, o);
      out[o[0]] = store<Tout>(unary_op(op, load(in[o[1]]), arg));
    }
  }
};

template <class Tin, class Tout>
struct BinaryK {
  Geom<3> g;
  Tout* out;
  const Tin* a;
  const Tin* b;
  int op;
  CR_HD void operator()(const cr_launch_idx& li) const {
    for (int64_t i = li.global(); i < g.numel; i += li.stride()) {
      int64_t o[3];
      element_offsets(g, i, o);
      out[o[0]] = store<Tout>(binary_op(op, load(a[o[1]]), load(b[o[2]])));
    }
  }
};

template <class T>
struct TernaryK {
  Geom<4> g;
  T* out;
  const T* a;
  const T* b;
  const T* c;
  int op;
  CR_HD void operator()(const cr_launch_idx& li) const {
    for (int64_t i = li.global(); i < g.numel; i += li.stride()) {
      int64_t o[4];
      element_offsets(g, i, o);
      out[o[0]] = store<T>(ternary_op(op, load(a[o[1]]), load(b[o[2]]), load(c[o[3]])));
    }
  }
};

template <class T>
struct WhereK {
  Geom<4> g;
  T* out;
  const crbool* cond;
  const T* a;
  const T* b;
  CR_HD void operator()(const cr_launch_idx& li) const {
    for (int64_t i = li.global(); i < g.numel; i += li.stride()) {
      int64_t o[4];
      element_offsets(g, i, o);
      out[o[0]] = cond[o[1]].v ? a[o[2]] : b[o[3]];
    }
  }
};

/* The storage type of the real part (float for complex64), else T itself. */
template <class T> struct RealStorage { typedef T type; };
template <class R> struct RealStorage<cplx<R>> { typedef R type; };

template <class Tin, class Tout>
int run_unary(const Geom<2>& g, cr_tensor* out, const cr_tensor* in, int op, double arg, void* s) {
  return launch(UnaryK<Tin, Tout>{g, (Tout*)out->data, (const Tin*)in->data, op, arg}, g.numel, s);
}
template <class Tin, class Tout>
int run_binary(const Geom<3>& g, cr_tensor* out, const cr_tensor* a, const cr_tensor* b, int op,
               void* s) {
  return launch(BinaryK<Tin, Tout>{g, (Tout*)out->data, (const Tin*)a->data, (const Tin*)b->data, op},
                g.numel, s);
}

/* Output dtype is the input's, bool, or the real dtype of a complex input (ops.h). */
template <class Tin>
int unary_by_out(const Geom<2>& g, cr_tensor* out, const cr_tensor* in, int op, double arg, void* s) {
  if (out->dtype == in->dtype) return run_unary<Tin, Tin>(g, out, in, op, arg, s);
  if (out->dtype == CR_BOOL) return run_unary<Tin, crbool>(g, out, in, op, arg, s);
  return run_unary<Tin, typename RealStorage<Tin>::type>(g, out, in, op, arg, s);
}
template <class Tin>
int binary_by_out(const Geom<3>& g, cr_tensor* out, const cr_tensor* a, const cr_tensor* b, int op,
                  void* s) {
  if (out->dtype == a->dtype) return run_binary<Tin, Tin>(g, out, a, b, op, s);
  return run_binary<Tin, crbool>(g, out, a, b, op, s);
}

static int check_out_dtype(const char* op, const cr_tensor* out, int want) {
  if (out->dtype == want) return 0;
  return fail("%s: the output must have dtype %s, not %s", op, dtype_name(want),
              dtype_name(out->dtype));
}

static int check_same_dtype(const char* op, const cr_tensor* a, const cr_tensor* b) {
  if (a->dtype == b->dtype) return 0;
  return fail("%s: expected operands of one dtype, got %s and %s", op, dtype_name(a->dtype),
              dtype_name(b->dtype));
}

}  // namespace cr

using namespace cr;

extern "C" int cr_fill(cr_tensor* out, double real, double imag, void* stream) {
  if (check_tensor(out, "fill")) return 1;
  Geom<1> g;
  const cr_tensor* ts[1] = {out};
  if (build_geom(g, ts)) return 1;
  CR_DISPATCH(out->dtype, {
    T v = store<T>(FromDouble<typename Compute<T>::type>::make(real, imag));
    if (out->dtype == CR_BOOL) memset(&v, real != 0 || imag != 0, 1);
    return launch(FillK<T>{g, (T*)out->data, v}, g.numel, stream);
  });
  return 0;
}

extern "C" int cr_copy(cr_tensor* out, const cr_tensor* in, void* stream) {
  if (check_tensor(out, "copy") || check_tensor(in, "copy")) return 1;
  Geom<2> g;
  const cr_tensor* ts[2] = {out, in};
  if (build_geom(g, ts)) return 1;
  if (out->dtype == in->dtype) {
    switch (dtype_size(out->dtype)) {
      case 1: return launch(CopyK<uint8_t>{g, (uint8_t*)out->data, (const uint8_t*)in->data}, g.numel, stream);
      case 2: return launch(CopyK<uint16_t>{g, (uint16_t*)out->data, (const uint16_t*)in->data}, g.numel, stream);
      case 4: return launch(CopyK<uint32_t>{g, (uint32_t*)out->data, (const uint32_t*)in->data}, g.numel, stream);
      case 8: return launch(CopyK<uint64_t>{g, (uint64_t*)out->data, (const uint64_t*)in->data}, g.numel, stream);
      default: return launch(CopyK<Bytes16>{g, (Bytes16*)out->data, (const Bytes16*)in->data}, g.numel, stream);
    }
  }
  CR_DISPATCH(out->dtype,
              return launch(ConvertK<T>{g, (T*)out->data, (const char*)in->data, in->dtype},
                            g.numel, stream));
  return 0;
}

extern "C" int cr_unary(int op, cr_tensor* out, const cr_tensor* in, double arg, void* stream) {
  int want;
  if (check_tensor(out, "unary") || check_tensor(in, "unary") ||
      check_op("unary", op, in->dtype, &want) ||
      check_out_dtype(op_family("unary")->names[op], out, want))
    return 1;
  if (in->dtype == CR_BOOL && op == unary::OP_bitwise_not) op = unary::OP_logical_not;
  Geom<2> g;
  const cr_tensor* ts[2] = {out, in};
  if (build_geom(g, ts)) return 1;
  CR_DISPATCH(in->dtype, return unary_by_out<T>(g, out, in, op, arg, stream));
  return 0;
}

extern "C" int cr_binary(int op, cr_tensor* out, const cr_tensor* a, const cr_tensor* b, void* stream) {
  int want;
  if (check_tensor(out, "binary") || check_tensor(a, "binary") || check_tensor(b, "binary") ||
      check_op("binary", op, a->dtype, &want) ||
      check_same_dtype(op_family("binary")->names[op], a, b) ||
      check_out_dtype(op_family("binary")->names[op], out, want))
    return 1;
  Geom<3> g;
  const cr_tensor* ts[3] = {out, a, b};
  if (build_geom(g, ts)) return 1;
  CR_DISPATCH(a->dtype, return binary_by_out<T>(g, out, a, b, op, stream));
  return 0;
}

extern "C" int cr_ternary(int op, cr_tensor* out, const cr_tensor* a, const cr_tensor* b,
                          const cr_tensor* c, void* stream) {
  int want;
  if (check_tensor(out, "ternary") || check_tensor(a, "ternary") || check_tensor(b, "ternary") ||
      check_tensor(c, "ternary") || check_op("ternary", op, b->dtype, &want))
    return 1;
  const char* name = op_family("ternary")->names[op];
  bool is_where = op == ternary::OP_where;
  if (is_where && a->dtype != CR_BOOL)
    return fail("where expected condition to be a boolean tensor, but got a tensor with dtype %s",
                dtype_name(a->dtype));
  if ((!is_where && check_same_dtype(name, a, b)) || check_same_dtype(name, b, c) ||
      check_out_dtype(name, out, want))
    return 1;
  Geom<4> g;
  const cr_tensor* ts[4] = {out, a, b, c};
  if (build_geom(g, ts)) return 1;
  CR_DISPATCH(out->dtype, {
    if (is_where)
      return launch(WhereK<T>{g, (T*)out->data, (const crbool*)a->data, (const T*)b->data,
                              (const T*)c->data}, g.numel, stream);
    return launch(TernaryK<T>{g, (T*)out->data, (const T*)a->data, (const T*)b->data,
                              (const T*)c->data, op}, g.numel, stream);
  });
  return 0;
}
