/* Reductions along any set of dims (Note [reduction geometry]), arg reductions,
 * scans and softmax along one dim. Results are stored through AnyValue, so the output
 * may have another dtype than the input (int64 sums of int8, bool for all/any). */
#include <type_traits>

#include "accumulate.h"
#include "any_value.h"
#include "reduce_geom.h"
#include "scalar_ops.h"

namespace cr {

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
  bool m_fastest;         /* neighbouring items take neighbouring outputs (kept dim contiguous) */
  CR_HD void operator()(const cr_launch_idx& li) const {
    for (int64_t t = li.global(); t < g.M * P; t += li.stride()) {
      int64_t m = m_fastest ? t % g.M : t / P, c = m_fastest ? t / g.M : t % P, in_off, out_off;
      g.kept(m, &in_off, &out_off);
      RState<A> s = red.init();
      for (int64_t r = c; r < g.R; r += P) red.update(s, to_acc(load(in[in_off + g.reduced_in(r)])));
      if (P == 1) store_any(out_dtype, out, out_off, red.finish(s, g.R));
      else partial[m * P + c] = s;
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
  /* Which of (output, split) varies fastest across neighbouring threads: the one whose
   * input dim is contiguous, so a warp reads consecutive elements. */
  bool m_fastest = g.kd >= 1 && g.kin[g.kd - 1] == 1;
  ReduceK<T> k{g, (const T*)in->data, (char*)out->data, out->dtype, red, P, (RState<A>*)scratch.ptr,
               m_fastest};
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

/* ---- arg reductions: first index wins ties, first NaN wins (NumPy and the reference
 * agree). Like the reductions, few long rows split into P interleaved work items whose
 * (value, index) states a second launch combines by the same rule. ---- */
template <class A> struct ArgState {
  A best;
  int64_t at;  /* -1: empty */
};

/* a goes before b: NaN first, then the better value, then the smaller index. */
template <class A> CR_HD inline bool arg_before(const ArgState<A>& a, const ArgState<A>& b, bool is_max) {
  if (b.at < 0) return a.at >= 0;
  if (a.at < 0) return false;
  bool an = nan_acc(a.best), bn = nan_acc(b.best);
  if (an || bn) return an && (!bn || a.at < b.at);
  if (a.best != b.best) return is_max ? a.best > b.best : a.best < b.best;
  return a.at < b.at;
}

template <class T>
struct ArgReduceK {
  typedef typename Acc<typename Compute<T>::type>::type A;
  RGeom g;  /* over `values` (or indices) */
  RGeom gi; /* the same walk with the indices tensor's strides */
  const T* in;
  char* values;
  int values_dtype;
  int64_t* indices;
  bool is_max;
  int64_t P;
  ArgState<A>* partial;  /* M * P when P > 1 */
  bool combine;          /* the second launch: fold each output's P states */

  CR_HD void finish(int64_t m, const ArgState<A>& s) const {
    int64_t in_off, out_off, idx_in, idx_off;
    g.kept(m, &in_off, &out_off);
    gi.kept(m, &idx_in, &idx_off);
    if (values) store_any(values_dtype, values, out_off, any_of(s.best));
    indices[idx_off] = s.at;
  }
  CR_HD void operator()(const cr_launch_idx& li) const {
    if (combine) {
      for (int64_t m = li.global(); m < g.M; m += li.stride()) {
        ArgState<A> s = partial[m * P];
        for (int64_t c = 1; c < P; ++c)
          if (arg_before(partial[m * P + c], s, is_max)) s = partial[m * P + c];
        finish(m, s);
      }
      return;
    }
    for (int64_t t = li.global(); t < g.M * P; t += li.stride()) {
      int64_t m = t / P, c = t - m * P, in_off, out_off;
      g.kept(m, &in_off, &out_off);
      ArgState<A> s{A(0), -1};
      for (int64_t r = c; r < g.R && !(s.at >= 0 && nan_acc(s.best)); r += P) {
        ArgState<A> x{to_acc(load(in[in_off + g.reduced_in(r)])), r};
        if (arg_before(x, s, is_max)) s = x;
      }
      if (P == 1) finish(m, s);
      else partial[t] = s;
    }
  }
};

/* ---- scans along one dim ----
 * Note [chunked scans]
 *   A line is scanned by one work item, or, when there are few lines and they are
 *   long, split into C chunks: pass 1 folds each chunk into a state, pass 2 turns each
 *   line's chunk states into exclusive prefixes, pass 3 rescans each chunk from its
 *   prefix and writes it. Every op's state combines associatively: sums, products,
 *   (max, sum of exp), and (extreme, index) with the same NaN/tie rule as the
 *   element step, so the chunked result is the sequential one (up to rounding). */
template <class A> struct ScanState {
  A acc;
  double lse_max, lse_sum;
  int64_t at;
  bool started;
};

template <class A> struct Scanner {
  int op;
  CR_HD ScanState<A> init() const {
    return ScanState<A>{FromDouble<A>::make(op == scan::OP_cumprod ? 1 : 0, 0), -(double)INFINITY, 0, 0,
                        false};
  }
  /* cummax/cummin: b's extreme replaces a's when NaN, or not worse (ties: the later). */
  CR_HD bool takes(const ScanState<A>& a, A x) const {
    double xr = real_part(x), best = real_part(a.acc);
    return !a.started || xr != xr || (best == best && (op == scan::OP_cummax ? xr >= best : xr <= best));
  }
  CR_HD void step(ScanState<A>& s, A x, int64_t r) const {
    switch (op) {
      case scan::OP_cumsum: s.acc = add_acc(s.acc, x); break;
      case scan::OP_cumprod: s.acc = mul_acc(s.acc, x); break;
      case scan::OP_logcumsumexp: lse_merge(&s.lse_max, &s.lse_sum, real_part(x), 1); break;
      default:
        if (takes(s, x)) { s.acc = x; s.at = r; }
    }
    s.started = true;
  }
  CR_HD void combine(ScanState<A>& s, const ScanState<A>& t) const {
    if (!t.started) return;
    switch (op) {
      case scan::OP_cumsum: s.acc = add_acc(s.acc, t.acc); break;
      case scan::OP_cumprod: s.acc = mul_acc(s.acc, t.acc); break;
      case scan::OP_logcumsumexp: lse_merge(&s.lse_max, &s.lse_sum, t.lse_max, t.lse_sum); break;
      default:
        if (takes(s, t.acc)) { s.acc = t.acc; s.at = t.at; }
    }
    s.started = true;
  }
  CR_HD AnyValue value(const ScanState<A>& s) const {
    if (op != scan::OP_logcumsumexp) return any_of(s.acc);
    if (s.lse_sum == 0) return any_of(-(double)INFINITY);
    return any_of((s.lse_max != s.lse_max || m_isinf(s.lse_max)) ? s.lse_max : s.lse_max + log(s.lse_sum));
  }
};

/* phase 0: whole lines; 1: chunk states; 3: chunks rescanned from their prefixes. */
template <class T>
struct ScanK {
  typedef typename Acc<typename Compute<T>::type>::type A;
  RGeom g;
  const T* in;
  char* out;
  int out_dtype;
  Scanner<A> sc;
  int64_t* indices;  /* cummax/cummin */
  RGeom gi;
  int64_t C;         /* chunks per line */
  int phase;
  ScanState<A>* states;  /* M * C */
  CR_HD void operator()(const cr_launch_idx& li) const {
    const int64_t len = (g.R + C - 1) / C;
    for (int64_t t = li.global(); t < g.M * C; t += li.stride()) {
      int64_t m = t / C, c = t - m * C, in_off, out_off, idx_in = 0, idx_off = 0;
      g.kept(m, &in_off, &out_off);
      if (indices) gi.kept(m, &idx_in, &idx_off);
      ScanState<A> s = phase == 3 ? states[t] : sc.init();
      const int64_t end = (c + 1) * len < g.R ? (c + 1) * len : g.R;
      for (int64_t r = c * len; r < end; ++r) {
        sc.step(s, to_acc(load(in[in_off + r * g.rin[0]])), r);
        if (phase == 1) continue;
        store_any(out_dtype, out, out_off + r * g.rout[0], sc.value(s));
        if (indices) indices[idx_off + r * gi.rout[0]] = s.at;
      }
      if (phase == 1) states[t] = s;
    }
  }
};

/* Pass 2: each line's chunk states become exclusive prefixes. */
template <class A>
struct ScanPrefixK {
  Scanner<A> sc;
  ScanState<A>* states;
  int64_t M, C;
  CR_HD void operator()(const cr_launch_idx& li) const {
    for (int64_t m = li.global(); m < M; m += li.stride()) {
      ScanState<A> run = sc.init();
      for (int64_t c = 0; c < C; ++c) {
        ScanState<A> chunk = states[m * C + c];
        states[m * C + c] = run;
        sc.combine(run, chunk);
      }
    }
  }
};

template <class T>
int run_scan(const RGeom& g, const RGeom& gi, const cr_tensor* in, cr_tensor* out, int op,
             int64_t* indices, void* stream) {
  typedef typename ScanK<T>::A A;
  Scanner<A> sc{op};
  int64_t C = (g.M >= 4096 || g.R < 2048) ? 1 : (g.R + 255) / 256;
  if (C > 1 && C * g.M > 16384) C = 16384 / g.M > 1 ? 16384 / g.M : 1;
  ScanK<T> k{g, (const T*)in->data, (char*)out->data, out->dtype, sc, indices, gi, C, 0, nullptr};
  if (C == 1) return launch(k, g.M, stream);
  Scratch scratch;
  if (scratch.alloc(sizeof(ScanState<A>) * g.M * C, stream)) return 1;
  k.states = (ScanState<A>*)scratch.ptr;
  k.phase = 1;
  if (launch(k, g.M * C, stream) || launch(ScanPrefixK<A>{sc, k.states, g.M, C}, g.M, stream)) return 1;
  k.phase = 3;
  return launch(k, g.M * C, stream);
}

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

namespace cr {

template <class T>
int run_arg_reduce(const RGeom& g, const RGeom& gi, const cr_tensor* in, cr_tensor* values,
                   cr_tensor* indices, bool is_max, void* stream) {
  typedef typename ArgReduceK<T>::A A;
  int64_t P = split_for(g);
  Scratch scratch;
  if (P > 1 && scratch.alloc(sizeof(ArgState<A>) * g.M * P, stream)) return 1;
  ArgReduceK<T> k{g, gi, (const T*)in->data, values ? (char*)values->data : nullptr,
                  values ? values->dtype : 0, (int64_t*)indices->data, is_max, P,
                  (ArgState<A>*)scratch.ptr, false};
  if (launch(k, g.M * P, stream)) return 1;
  if (P == 1) return 0;
  k.combine = true;
  return launch(k, g.M, stream);
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
  CR_DISPATCH_REAL(in->dtype, return run_arg_reduce<T>(g, gi, in, values, indices,
                                                      op == arg_reduce::OP_argmax, stream));
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
  CR_DISPATCH(in->dtype, return run_scan<T>(g, gi, in, out, op,
                                            extreme ? (int64_t*)indices->data : nullptr, stream));
  return 0;
}

extern "C" int cr_scan(int op, cr_tensor* out, const cr_tensor* in, int dim, void* stream) {
  return scan_impl(op, out, nullptr, in, dim, stream);
}

extern "C" int cr_scan_with_indices(int op, cr_tensor* values, cr_tensor* indices,
                                    const cr_tensor* in, int dim, void* stream) {
  return scan_impl(op, values, indices, in, dim, stream);
}

namespace cr {

/* Long rows: the row logsumexps by the (split, coalesced) reduction into float64
 * scratch, then one element-wise pass out = exp(x - lse) or x - lse, so every element
 * gets its own thread instead of each row one thread. */
template <class T>
struct SoftmaxWriteK {
  Geom<3> g;  /* out, in, lse (stride 0 along dim) */
  T* out;
  const T* in;
  const double* lse;
  bool log_out;
  CR_HD void operator()(const cr_launch_idx& li) const {
    for (int64_t i = li.global(); i < g.numel; i += li.stride()) {
      int64_t o[3];
      g.offsets(i, o);
      double z = real_part(load(in[o[1]])) - lse[o[2]];
      out[o[0]] = store<T>(log_out ? z : exp(z));
    }
  }
};

static int long_softmax(bool log_out, cr_tensor* out, const cr_tensor* in, int dim, void* stream) {
  cr_tensor lse = *in;  /* contiguous float64, size 1 along dim */
  lse.dtype = CR_FLOAT64;
  lse.shape[dim] = 1;
  int64_t stride = 1;
  for (int d = in->ndim - 1; d >= 0; --d) { lse.strides[d] = stride; stride *= lse.shape[d]; }
  Scratch scratch;
  if (scratch.alloc(sizeof(double) * stride, stream)) return 1;
  lse.data = scratch.ptr;
  if (cr_reduce(reduce::OP_logsumexp, &lse, in, 1ull << dim, 0, stream)) return 1;
  Geom<3> g;
  const cr_tensor* ts[3] = {out, in, &lse};
  if (build_geom(g, ts)) return 1;
  CR_DISPATCH_FLOAT(in->dtype, return launch(SoftmaxWriteK<T>{g, (T*)out->data, (const T*)in->data,
                                                              (const double*)lse.data, log_out},
                                             g.numel, stream));
  return 0;
}

}  // namespace cr

extern "C" int cr_softmax(int op, cr_tensor* out, const cr_tensor* in, int dim, void* stream) {
  int want;
  if (check_tensor(out, "softmax") || check_tensor(in, "softmax") ||
      check_op("softmax", op, in->dtype, &want))
    return 1;
  const char* name = op_family("softmax")->names[op];
  if (out->dtype != in->dtype) return fail("%s: the output must have the input's dtype", name);
  RGeom g;
  if (line_geom(g, in, out, dim, true, name)) return 1;
  if (g.R >= 512 && in->ndim) return long_softmax(op == softmax::OP_log_softmax, out, in, dim, stream);
  CR_DISPATCH_FLOAT(in->dtype, return launch(SoftmaxK<T>{g, (const T*)in->data, (T*)out->data,
                                                          op == softmax::OP_log_softmax}, g.M, stream));
  return 0;
}
