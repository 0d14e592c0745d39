/* Element-wise kernels: fill, copy (any dtype to any dtype), unary, binary, ternary
 * and where, over strided operands (Note [element-wise geometry]). */
#include <initializer_list>

#include "any_value.h"
#include "common.h"
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

/* Note [vectorized flat path]
 *   When every operand of an element-wise launch is contiguous (Geom::flat) and
 *   aligned, each work item moves a Pack of 16 bytes of input (4 floats, 8 halves) per
 *   load, so the GPU keeps more bytes in flight per thread; the tail past the last
 *   whole Pack takes the element loop. The host build runs the same code. */
template <class T, int V> struct alignas(sizeof(T) * V) Pack { T v[V]; };
template <class T> struct VecWidth { static const int value = sizeof(T) >= 16 ? 1 : 16 / sizeof(T); };

inline bool aligned_to(const void* p, size_t bytes) { return ((uintptr_t)p % bytes) == 0; }

template <class Tin, class Tout>
bool packable(const void* out, std::initializer_list<const void*> ins, bool flat) {
  const int V = VecWidth<Tin>::value;
  if (!flat || V == 1 || !aligned_to(out, V * sizeof(Tout))) return false;
  for (const void* p : ins)
    if (!aligned_to(p, V * sizeof(Tin))) return false;
  return true;
}

/* OP >= 0 fixes the op at compile time (the hot binary ops), -1 reads `op`. */
template <class Tin, class Tout, int OP = -1>
struct UnaryK {
  Geom<2> g;
  Tout* out;
  const Tin* in;
  int op;
  double arg;
  bool packed;
  CR_HD Tout at(Tin x) const { return store<Tout>(unary_op(OP >= 0 ? OP : op, load(x), arg)); }
  CR_HD void operator()(const cr_launch_idx& li) const {
    const int V = VecWidth<Tin>::value;
    int64_t start = 0;
    if (packed) {
      const int64_t np = g.numel / V;
      for (int64_t j = li.global(); j < np; j += li.stride()) {
        Pack<Tin, V> x = ((const Pack<Tin, V>*)in)[j];
        Pack<Tout, V> r;
        for (int k = 0; k < V; ++k) r.v[k] = at(x.v[k]);
        ((Pack<Tout, V>*)out)[j] = r;
      }
      start = np * V;
    }
    for (int64_t i = start + li.global(); i < g.numel; i += li.stride()) {
      int64_t o[2];
      element_offsets(g, i, o);
      out[o[0]] = at(in[o[1]]);
    }
  }
};

template <class Tin, class Tout, int OP = -1>
struct BinaryK {
  Geom<3> g;
  Tout* out;
  const Tin* a;
  const Tin* b;
  int op;
  bool packed;
  bool a_scalar, b_scalar;  /* packed with a broadcast scalar operand (stride 0) */
  CR_HD Tout at(Tin x, Tin y) const { return store<Tout>(binary_op(OP >= 0 ? OP : op, load(x), load(y))); }
  CR_HD void operator()(const cr_launch_idx& li) const {
    const int V = VecWidth<Tin>::value;
    int64_t start = 0;
    if (packed) {
      const int64_t np = g.numel / V;
      Pack<Tin, V> sa, sb;
      for (int k = 0; k < V; ++k) { sa.v[k] = a[0]; sb.v[k] = b[0]; }
      for (int64_t j = li.global(); j < np; j += li.stride()) {
        Pack<Tin, V> x = a_scalar ? sa : ((const Pack<Tin, V>*)a)[j];
        Pack<Tin, V> y = b_scalar ? sb : ((const Pack<Tin, V>*)b)[j];
        Pack<Tout, V> r;
        for (int k = 0; k < V; ++k) r.v[k] = at(x.v[k], y.v[k]);
        ((Pack<Tout, V>*)out)[j] = r;
      }
      start = np * V;
    }
    for (int64_t i = start + li.global(); i < g.numel; i += li.stride()) {
      int64_t o[3];
      element_offsets(g, i, o);
      out[o[0]] = at(a[o[1]], b[o[2]]);
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
  bool packed = packable<Tin, Tout>(out->data, {in->data}, g.flat);
  return launch(UnaryK<Tin, Tout>{g, (Tout*)out->data, (const Tin*)in->data, op, arg, packed}, g.numel, s);
}
template <class Tin, class Tout, int OP>
int run_binary(const Geom<3>& g, cr_tensor* out, const cr_tensor* a, const cr_tensor* b, int op,
               void* s) {
  /* One dim, out contiguous, each input contiguous or a broadcast scalar (x * 2). */
  const int V = VecWidth<Tin>::value;
  bool line = g.ndim == 1 && g.strides[0][0] == 1 && V > 1 && aligned_to(out->data, V * sizeof(Tout));
  bool a_scalar = line && g.strides[1][0] == 0, b_scalar = line && g.strides[2][0] == 0;
  bool packed = line && (a_scalar || (g.strides[1][0] == 1 && aligned_to(a->data, V * sizeof(Tin)))) &&
                (b_scalar || (g.strides[2][0] == 1 && aligned_to(b->data, V * sizeof(Tin))));
  return launch(BinaryK<Tin, Tout, OP>{g, (Tout*)out->data, (const Tin*)a->data, (const Tin*)b->data,
                                       op, packed, a_scalar, b_scalar}, g.numel, s);
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
  if (out->dtype != a->dtype) return run_binary<Tin, crbool, -1>(g, out, a, b, op, s);
  if constexpr (IsFloat<typename Compute<Tin>::type>::value) {
    using namespace binary;
    switch (op) {  /* the hot ops of training steps, with the op fixed at compile time */
      case OP_add: return run_binary<Tin, Tin, OP_add>(g, out, a, b, op, s);
      case OP_sub: return run_binary<Tin, Tin, OP_sub>(g, out, a, b, op, s);
      case OP_mul: return run_binary<Tin, Tin, OP_mul>(g, out, a, b, op, s);
      case OP_div: return run_binary<Tin, Tin, OP_div>(g, out, a, b, op, s);
      default: break;
    }
  }
  return run_binary<Tin, Tin, -1>(g, out, a, b, op, s);
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
    if (g.flat)  /* contiguous: the runtime's memcpy (cudaMemcpyAsync, at copy bandwidth) */
      return cr_memcpy(out->data, in->data, (size_t)g.numel * dtype_size(out->dtype), 2, stream);
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
