/* Reductions along any set of dims (Note [reduction geometry]), arg reductions,
 * scans and softmax along one dim. Results are stored through AnyValue, so the output
 * may have another dtype than the input (int64 sums of int8, bool for all/any). */
#include <type_traits>

#include "any_value.h"
#include "reduce_geom.h"
#include "scalar_ops.h"

namespace cr {

/* Accumulator types: float types accumulate in double, complex in cplx<double>. */
template <class C> struct Acc { typedef double type; };
template <> struct Acc<int64_t> { typedef int64_t type; };
template <class R> struct Acc<cplx<R>> { typedef cplx<double> type; };

CR_HD inline int64_t to_acc(int64_t x) { return x; }
CR_HD inline double to_acc(float x) { return x; }
CR_HD inline double to_acc(double x) { return x; }
template <class R> CR_HD inline cplx<double> to_acc(cplx<R> x) { return {x.re, x.im}; }

CR_HD inline int64_t add_acc(int64_t a, int64_t b) { return wrap_add(a, b); }
CR_HD inline double add_acc(double a, double b) { return a + b; }
CR_HD inline cplx<double> add_acc(cplx<double> a, cplx<double> b) { return a + b; }
CR_HD inline int64_t mul_acc(int64_t a, int64_t b) { return wrap_mul(a, b); }
CR_HD inline double mul_acc(double a, double b) { return a * b; }
CR_HD inline cplx<double> mul_acc(cplx<double> a, cplx<double> b) { return a * b; }
CR_HD inline double abs_acc(int64_t a) { return a < 0 ? -(double)a : (double)a; }
CR_HD inline double abs_acc(double a) { return fabs(a); }
CR_HD inline double abs_acc(cplx<double> a) { return c_abs(a); }
CR_HD inline bool nan_acc(int64_t) { return false; }
CR_HD inline bool nan_acc(double a) { return a != a; }
CR_HD inline bool nan_acc(cplx<double> a) { return a.re != a.re || a.im != a.im; }
/* Re(d1 * conj(d2)): the Welford update of the sum of squared deviations. */
CR_HD inline double dot_acc(double a, double b) { return a * b; }
CR_HD inline double dot_acc(cplx<double> a, cplx<double> b) { return a.re * b.re + a.im * b.im; }
CR_HD inline cplx<double> scale_acc(cplx<double> a, double s) { return a * s; }
CR_HD inline double scale_acc(double a, double s) { return a * s; }

template <class A> struct RState {
  A a;
  double r, n, m2;
};

/* logsumexp state (max, sum of exp(x - max)), merged with another (max, sum). */
CR_HD inline void lse_merge(double* a, double* r, double b, double s) {
  if (s == 0) return;
  if (*r == 0 || b != b) { *a = b; *r = s; return; }
  if (*a != *a) return;
  if (b == *a) { *r += s; return; }
  if (b > *a) { *r = *r * exp(*a - b) + s; *a = b; }
  else *r += s * exp(b - *a);
}

template <class A> struct Reducer {
  int op;
  double p;  /* arg: correction (var/std), order (norm) */
  typedef std::integral_constant<bool, std::is_same<A, int64_t>::value> is_int;
  typedef std::integral_constant<bool, std::is_same<A, double>::value> is_real_float;

  CR_HD RState<A> init() const {
    using namespace reduce;
    RState<A> s;
    s.a = FromDouble<A>::make(op == OP_prod ? 1 : 0, 0);
    s.r = (op == OP_norm && p == -(double)INFINITY) ? (double)INFINITY : 0;
    s.n = s.m2 = 0;
    if constexpr (!IsComplex<A>::value) {
      if (op == OP_amax) s.a = is_int::value ? (A)INT64_MIN : (A)-INFINITY;
      if (op == OP_amin) s.a = is_int::value ? (A)INT64_MAX : (A)INFINITY;
      if (op == OP_logsumexp) s.a = (A)-INFINITY;
    }
    return s;
  }

  CR_HD void extreme(RState<A>& s, A x) const {
    if constexpr (!IsComplex<A>::value) {
      bool better = op == reduce::OP_amax ? x > s.a : x < s.a;
      if (!nan_acc(s.a) && (nan_acc(x) || better)) s.a = x;
    }
  }

  CR_HD void norm_add(RState<A>& s, double v) const {
    if (p == (double)INFINITY) s.r = v > s.r || v != v ? v : s.r;
    else if (p == -(double)INFINITY) s.r = v < s.r || v != v ? v : s.r;
    else if (p == 0) s.r += v != 0;
    else if (p == 1) s.r += v;
    else if (p == 2) s.r += v * v;
    else s.r += pow(v, p);
  }

  CR_HD void update(RState<A>& s, A x) const {
    using namespace reduce;
    switch (op) {
      case OP_sum: case OP_mean: s.a = add_acc(s.a, x); break;
      case OP_prod: s.a = mul_acc(s.a, x); break;
      case OP_amax: case OP_amin: extreme(s, x); break;
      case OP_nansum: case OP_nanmean:
        if (!nan_acc(x)) { s.a = add_acc(s.a, x); s.n += 1; }
        break;
      case OP_all: s.r += !nonzero(x); break;
      case OP_any: case OP_count_nonzero: s.r += nonzero(x); break;
      case OP_norm: norm_add(s, abs_acc(x)); break;
      default:
        if constexpr (!is_int::value) {
          if (op == OP_logsumexp) {
            if constexpr (is_real_float::value) lse_merge(&s.a, &s.r, x, 1);
          } else {  /* var, std: Welford */
            s.n += 1;
            A delta = x - s.a;
            s.a = s.a + scale_acc(delta, 1 / s.n);
            s.m2 += dot_acc(delta, x - s.a);
          }
        }
    }
  }

  CR_HD void combine(RState<A>& s, const RState<A>& t) const {
    using namespace reduce;
    switch (op) {
      case OP_sum: case OP_mean: s.a = add_acc(s.a, t.a); break;
      case OP_nansum: case OP_nanmean: s.a = add_acc(s.a, t.a); s.n += t.n; break;
      case OP_prod: s.a = mul_acc(s.a, t.a); break;
      case OP_amax: case OP_amin: extreme(s, t.a); break;
      case OP_norm:
        if (p == (double)INFINITY || p == -(double)INFINITY) norm_add(s, t.r);
        else s.r += t.r;
        break;
      case OP_all: case OP_any: case OP_count_nonzero: s.r += t.r; break;
      default:
        if constexpr (!is_int::value) {
          if (op == OP_logsumexp) {
            if constexpr (is_real_float::value) lse_merge(&s.a, &s.r, t.a, t.r);
          } else if (t.n > 0) {  /* var, std: Chan et al.'s merge */
            double n = s.n + t.n;
            A delta = t.a - s.a;
            s.m2 += t.m2 + dot_acc(delta, delta) * s.n * t.n / n;
            s.a = s.a + scale_acc(delta, t.n / n);
            s.n = n;
          }
        }
    }
  }

  CR_HD AnyValue finish(const RState<A>& s, int64_t R) const {
    using namespace reduce;
    switch (op) {
      case OP_all: return any_of((int64_t)(s.r == 0));
      case OP_any: return any_of((int64_t)(s.r > 0));
      case OP_count_nonzero: return any_of((int64_t)s.r);
      case OP_norm:
        if (p == 2) return any_of(sqrt(s.r));
        if (p == 0 || p == 1 || p == (double)INFINITY || p == -(double)INFINITY) return any_of(s.r);
        return any_of(pow(s.r, 1 / p));
      default: break;
    }
    if constexpr (!is_int::value) {
      if (op == OP_mean) return any_of(scale_acc(s.a, 1.0 / (double)R));
      if (op == OP_nanmean) return any_of(scale_acc(s.a, 1.0 / s.n));
      if (op == OP_var || op == OP_std) {
        double dof = s.n - p > 0 ? s.n - p : 0, v = s.m2 / dof;
        return any_of(op == OP_std ? sqrt(v) : v);
      }
      if constexpr (is_real_float::value) {
        if (op == OP_logsumexp) return any_of(s.r == 0 ? -(double)INFINITY
                                              : (s.a != s.a || m_isinf(s.a)) ? s.a : s.a + log(s.r));
      }
    }
    return any_of(s.a);
  }
};

template <class T>
struct ReduceK {
  typedef typename Acc<typename Compute<T>::type>::type A;
  RGeom g;
  const T* in;
  char* out;
  int out_dtype;
  Reducer<A> red;
  int64_t P;              /* work items per output */
  RState<A>* partial;     /* M * P states when P > 1 */
  CR_HD void operator()(const cr_launch_idx& li) const {
    for (int64_t t = li.global(); t < g.M * P; t += li.stride()) {
      int64_t m = t / P, c = t - m * P, in_off, out_off;
      g.kept(m, &in_off, &out_off);
      RState<A> s = red.init();
      for (int64_t r = c; r < g.R; r += P) red.update(s, to_acc(load(in[in_off + g.reduced_in(r)])));
      if (P == 1) store_any(out_dtype, out, out_off, red.finish(s, g.R));
      else partial[t] = s;
    }
  }
};

template <class A>
struct CombineK {
  RGeom g;
  char* out;
  int out_dtype;
  Reducer<A> red;
  int64_t P;
  const RState<A>* partial;
  CR_HD void operator()(const cr_launch_idx& li) const {
    for (int64_t m = li.global(); m < g.M; m += li.stride()) {
      int64_t in_off, out_off;
      g.kept(m, &in_off, &out_off);
      RState<A> s = partial[m * P];
      for (int64_t c = 1; c < P; ++c) red.combine(s, partial[m * P + c]);
      store_any(out_dtype, out, out_off, red.finish(s, g.R));
    }
  }
};

/* Work items per output: enough items in all to fill the GPU, each reading >= 64.
 * When the reduced dims are the contiguous ones (rows summed along their length), one
 * item per output would have each GPU thread walk its own row; up to 32 interleaved
 * items per output make a warp read consecutive elements instead. */
static int64_t split_for(const RGeom& g) {
  int64_t want = 16384 / (g.M > 0 ? g.M : 1), most = (g.R + 63) / 64;
  int64_t P = want < most ? want : most;
  bool rows = g.rd >= 1 && g.rin[g.rd - 1] == 1 && !(g.kd >= 1 && g.kin[g.kd - 1] == 1);
  if (rows && g.R >= 64) {
    int64_t coalesce = g.R / 16 < 32 ? g.R / 16 : 32;
    P = P > coalesce ? P : coalesce;
  }
  return P < 1 ? 1 : P;
}

template <class T>
int run_reduce(const RGeom& g, const cr_tensor* in, cr_tensor* out, Reducer<typename ReduceK<T>::A> red,
               void* stream) {
  typedef typename ReduceK<T>::A A;
  int64_t P = split_for(g);
  Scratch scratch;
  if (P > 1 && scratch.alloc(sizeof(RState<A>) * g.M * P, stream)) return 1;
  ReduceK<T> k{g, (const T*)in->data, (char*)out->data, out->dtype, red, P, (RState<A>*)scratch.ptr};
  if (launch(k, g.M * P, stream)) return 1;
  if (P == 1) return 0;
  return launch(CombineK<A>{g, (char*)out->data, out->dtype, red, P, (const RState<A>*)scratch.ptr},
                g.M, stream);
}

}  // namespace cr

using namespace cr;

extern "C" int cr_reduce(int op, cr_tensor* out, const cr_tensor* in, uint64_t dims_mask,
                         double arg, void* stream) {
  int want;
  if (check_tensor(out, "reduce") || check_tensor(in, "reduce") ||
      check_op("reduce", op, in->dtype, &want))
    return 1;
  const char* name = op_family("reduce")->names[op];
  RGeom g;
  if (make_rgeom(g, in, out, dims_mask, false, name)) return 1;
  if (g.R == 0 && (op == reduce::OP_amax || op == reduce::OP_amin) && g.M > 0)
    return fail("%s(): Expected reduction dim to have non-zero size", name);
  if (g.M == 0) return 0;
  CR_DISPATCH(in->dtype, {
    typedef typename ReduceK<T>::A A;
    return run_reduce<T>(g, in, out, Reducer<A>{op, arg}, stream);
  });
  return 0;
}

namespace cr {

/* ---- arg reductions: one work item per output, first index wins ties, first NaN
 * wins (NumPy and the reference agree). ---- */
template <class T>
struct ArgReduceK {
  RGeom g;  /* reduced group: the one dim; rout = stride of `indices` is in kout */
  const T* in;
  char* values;
  int values_dtype;
  int64_t* indices;
  RGeom gi;  /* the same walk with the indices tensor's strides */
  bool is_max;
  CR_HD void operator()(const cr_launch_idx& li) const {
    typedef typename Acc<typename Compute<T>::type>::type A;
    for (int64_t m = li.global(); m < g.M; m += li.stride()) {
      int64_t in_off, out_off, idx_in, idx_off;
      g.kept(m, &in_off, &out_off);
      gi.kept(m, &idx_in, &idx_off);
      A best = to_acc(load(in[in_off]));
      int64_t at = 0;
      for (int64_t r = 1; r < g.R && !nan_acc(best); ++r) {
        A x = to_acc(load(in[in_off + g.reduced_in(r)]));
        if (nan_acc(x) || (is_max ? x > best : x < best)) { best = x; at = r; }
      }
      if (values) store_any(values_dtype, values, out_off, any_of(best));
      indices[idx_off] = at;
    }
  }
};

/* ---- scans along one dim: one work item per line ---- */
template <class T>
struct ScanK {
  RGeom g;
  const T* in;
  char* out;
  int out_dtype;
  int op;
  int64_t* indices;  /* cummax/cummin */
  RGeom gi;
  CR_HD void operator()(const cr_launch_idx& li) const {
    typedef typename Acc<typename Compute<T>::type>::type A;
    for (int64_t m = li.global(); m < g.M; m += li.stride()) {
      int64_t in_off, out_off, idx_in = 0, idx_off = 0;
      g.kept(m, &in_off, &out_off);
      if (indices) gi.kept(m, &idx_in, &idx_off);
      A acc = FromDouble<A>::make(op == scan::OP_cumprod ? 1 : 0, 0);
      double lse_max = -(double)INFINITY, lse_sum = 0;
      int64_t at = 0;
      for (int64_t r = 0; r < g.R; ++r) {
        A x = to_acc(load(in[in_off + r * g.rin[0]]));
        AnyValue v;
        switch (op) {
          case scan::OP_cumsum: acc = add_acc(acc, x); v = any_of(acc); break;
          case scan::OP_cumprod: acc = mul_acc(acc, x); v = any_of(acc); break;
          case scan::OP_logcumsumexp:
            lse_merge(&lse_max, &lse_sum, real_part(x), 1);
            v = any_of(lse_sum == 0 ? -(double)INFINITY
                       : (lse_max != lse_max || m_isinf(lse_max)) ? lse_max : lse_max + log(lse_sum));
            break;
          default: {  /* cummax, cummin: NaN sticks; ties take the later index */
            double xr = real_part(x), best = real_part(acc);
            bool take = r == 0 || xr != xr ||
                        (best == best && (op == scan::OP_cummax ? xr >= best : xr <= best));
            if (take) { acc = x; at = r; }
            v = any_of(acc);
            if (indices) indices[idx_off + r * gi.rout[0]] = at;
          }
        }
        store_any(out_dtype, out, out_off + r * g.rout[0], v);
      }
    }
  }
};

/* ---- softmax / log_softmax along one dim: one work item per line, three passes
 * over the line (max, sum of exp, write) in double. ---- */
template <class T>
struct SoftmaxK {
  RGeom g;
  const T* in;
  T* out;
  bool log_out;
  CR_HD void operator()(const cr_launch_idx& li) const {
    for (int64_t m = li.global(); m < g.M; m += li.stride()) {
      int64_t in_off, out_off;
      g.kept(m, &in_off, &out_off);
      const int64_t si = g.rin[0], so = g.rout[0];
      double mx = -(double)INFINITY, sum = 0;
      for (int64_t r = 0; r < g.R; ++r) {
        double x = real_part(load(in[in_off + r * si]));
        mx = (x > mx || x != x) ? x : mx;
      }
      if (m_isinf(mx)) mx = 0;  /* all -inf: exp(-inf - 0) = 0; +inf gives NaN, as exp does */
      for (int64_t r = 0; r < g.R; ++r) sum += exp(real_part(load(in[in_off + r * si])) - mx);
      double lse = log(sum);
      for (int64_t r = 0; r < g.R; ++r) {
        double z = real_part(load(in[in_off + r * si])) - mx;
        out[out_off + r * so] = store<T>(log_out ? z - lse : exp(z) / sum);
      }
    }
  }
};

/* The walk over `in` along `dim` and, with an indices tensor, the same walk over it. */
static int line_geom(RGeom& g, const cr_tensor* in, const cr_tensor* out, int dim, bool same_shape,
                     const char* op) {
  if (dim < 0 || dim >= (in->ndim ? in->ndim : 1))
    return fail("%s: dim %d is out of range for a tensor of %d dims", op, dim, in->ndim);
  if (in->ndim == 0) return make_rgeom(g, in, out, 0, same_shape, op);
  if (make_rgeom(g, in, out, 1ull << dim, same_shape, op)) return 1;
  if (g.rd == 0) { g.rd = 1; g.rs[0] = 1; g.rin[0] = g.rout[0] = 0; }  /* a dim of size 1 */
  return 0;
}

}  // namespace cr

extern "C" int cr_arg_reduce(int op, cr_tensor* values, cr_tensor* indices, const cr_tensor* in,
                             int dim, void* stream) {
  int want;
  if (check_tensor(in, "arg_reduce") || check_tensor(indices, "arg_reduce") ||
      (values && check_tensor(values, "arg_reduce")) || check_op("arg_reduce", op, in->dtype, &want))
    return 1;
  const char* name = op_family("arg_reduce")->names[op];
  if (indices->dtype != CR_INT64) return fail("%s: indices must be int64", name);
  RGeom g, gi;
  if (line_geom(g, in, values ? values : indices, dim, false, name) ||
      line_geom(gi, in, indices, dim, false, name))
    return 1;
  if (g.R == 0 && g.M > 0)
    return fail("%s(): Expected reduction dim %d to have non-zero size.", name, dim);
  CR_DISPATCH_REAL(in->dtype,
              return launch(ArgReduceK<T>{g, (const T*)in->data, values ? (char*)values->data : nullptr,
                                          values ? values->dtype : 0, (int64_t*)indices->data, gi,
                                          op == arg_reduce::OP_argmax},
                            g.M, stream));
  return 0;
}

static int scan_impl(int op, cr_tensor* out, cr_tensor* indices, const cr_tensor* in, int dim,
                     void* stream) {
  int want;
  if (check_tensor(out, "scan") || check_tensor(in, "scan") || check_op("scan", op, in->dtype, &want))
    return 1;
  const char* name = op_family("scan")->names[op];
  bool extreme = op == scan::OP_cummax || op == scan::OP_cummin;
  if (extreme && (!indices || check_tensor(indices, name) || indices->dtype != CR_INT64))
    return fail("%s: needs an int64 indices tensor (cr_scan_with_indices)", name);
  RGeom g, gi = RGeom();
  if (line_geom(g, in, out, dim, true, name) || (extreme && line_geom(gi, in, indices, dim, true, name)))
    return 1;
  CR_DISPATCH(in->dtype,
              return launch(ScanK<T>{g, (const T*)in->data, (char*)out->data, out->dtype, op,
                                     extreme ? (int64_t*)indices->data : nullptr, gi},
                            g.M, stream));
  return 0;
}

extern "C" int cr_scan(int op, cr_tensor* out, const cr_tensor* in, int dim, void* stream) {
  return scan_impl(op, out, nullptr, in, dim, stream);
}

extern "C" int cr_scan_with_indices(int op, cr_tensor* values, cr_tensor* indices,
                                    const cr_tensor* in, int dim, void* stream) {
  return scan_impl(op, values, indices, in, dim, stream);
}

extern "C" int cr_softmax(int op, cr_tensor* out, const cr_tensor* in, int dim, void* stream) {
  int want;
  if (check_tensor(out, "softmax") || check_tensor(in, "softmax") ||
      check_op("softmax", op, in->dtype, &want))
    return 1;
  const char* name = op_family("softmax")->names[op];
  if (out->dtype != in->dtype) return fail("%s: the output must have the input's dtype", name);
  RGeom g;
  if (line_geom(g, in, out, dim, true, name)) return 1;
  CR_DISPATCH_FLOAT(in->dtype, return launch(SoftmaxK<T>{g, (const T*)in->data, (T*)out->data,
                                                          op == softmax::OP_log_softmax}, g.M, stream));
  return 0;
}
