/* The element-wise ops on one compute value each (Note [compute types]): unary_op,
 * binary_op and ternary_op for real floats, int64 and complex. Predicates return 0/1
 * in the compute type (the bool store turns them into bool); ops with O_REAL output
 * on complex return the value in the real part (the real store takes it). An op a
 * kind does not support (ops.h) is rejected before launching and never reaches here. */
#ifndef CHAINRULE_CUDA_KERNELS_SCALAR_OPS_H_
#define CHAINRULE_CUDA_KERNELS_SCALAR_OPS_H_

#include "math.h"
#include "ops.h"

namespace cr {

const double kPi = 3.14159265358979323846, kLn2 = 0.69314718055994530942;

/* ---- int64 (wrapping arithmetic through uint64, like fixed-width NumPy ints) ---- */
CR_HD inline int64_t wrap_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
CR_HD inline int64_t wrap_sub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
CR_HD inline int64_t wrap_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }
CR_HD inline int64_t int_pow(int64_t a, int64_t b) {
  if (b < 0) return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;
  int64_t r = 1;
  for (; b; b >>= 1, a = wrap_mul(a, a)) if (b & 1) r = wrap_mul(r, a);
  return r;
}
/* Python's floor division and modulo; division by zero gives 0 (no trap). */
CR_HD inline int64_t int_floordiv(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return wrap_sub(0, a);
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
CR_HD inline int64_t int_mod(int64_t a, int64_t b) {
  if (b == 0 || b == -1) return 0;
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

CR_HD inline int64_t unary_op(int op, int64_t x, double s) {
  using namespace unary;
  int64_t si = float_to_int(s);
  switch (op) {
    case OP_neg: return wrap_sub(0, x);
    case OP_abs: return x < 0 ? wrap_sub(0, x) : x;
    case OP_sign: return x > 0 ? 1 : x < 0 ? -1 : 0;
    case OP_square: return wrap_mul(x, x);
    case OP_isfinite: return 1;
    case OP_signbit: return x < 0;
    case OP_logical_not: return x == 0;
    case OP_bitwise_not: return ~x;
    case OP_pow_scalar: return int_pow(x, si);
    case OP_add_scalar: return wrap_add(x, si);
    case OP_mul_scalar: return wrap_mul(x, si);
    case OP_rsub_scalar: return wrap_sub(si, x);
    case OP_clamp_min: return x < si ? si : x;
    case OP_clamp_max: return x > si ? si : x;
    case OP_relu: return x < 0 ? 0 : x;
    case OP_isnan: case OP_isinf: case OP_isposinf: case OP_isneginf: return 0;
    default: return x;  /* floor, ceil, round, trunc, conj, real */
  }
}

CR_HD inline int64_t binary_op(int op, int64_t a, int64_t b) {
  using namespace binary;
  switch (op) {
    case OP_add: return wrap_add(a, b);
    case OP_sub: return wrap_sub(a, b);
    case OP_mul: return wrap_mul(a, b);
    case OP_floor_divide: return int_floordiv(a, b);
    case OP_remainder: return int_mod(a, b);
    case OP_fmod: return (b == 0 || b == -1) ? 0 : a % b;
    case OP_pow: return int_pow(a, b);
    case OP_maximum: case OP_fmax: return a > b ? a : b;
    case OP_minimum: case OP_fmin: return a < b ? a : b;
    case OP_eq: return a == b;
    case OP_ne: return a != b;
    case OP_lt: return a < b;
    case OP_le: return a <= b;
    case OP_gt: return a > b;
    case OP_ge: return a >= b;
    case OP_logical_and: return a && b;
    case OP_logical_or: return a || b;
    case OP_logical_xor: return (a != 0) != (b != 0);
    case OP_bitwise_and: return a & b;
    case OP_bitwise_or: return a | b;
    case OP_bitwise_xor: return a ^ b;
    case OP_left_shift: return (b < 0 || b > 63) ? 0 : (int64_t)((uint64_t)a << b);
    case OP_right_shift: return (b < 0 || b > 63) ? (a < 0 ? -1 : 0) : a >> b;
    default: return 0;
  }
}

/* ---- real floats ---- */
template <class R> CR_HD R round_decimals(R x, double d) {
  if (d == 0) return m_rint(x);
  if (d > 0) { R p = (R)pow(10.0, d); return m_rint(x * p) / p; }
  R p = (R)pow(10.0, -d);
  return m_rint(x / p) * p;
}

template <class R> CR_HD R unary_op(int op, R x, double sd) {
  using namespace unary;
  const R s = (R)sd, one = 1, zero = 0;
  switch (op) {
    case OP_neg: return -x;
    case OP_abs: return m_fabs(x);
    case OP_sign: return x > 0 ? one : x < 0 ? -one : x;
    case OP_exp: return m_exp(x);
    case OP_exp2: return m_exp2(x);
    case OP_expm1: return m_expm1(x);
    case OP_log: return m_log(x);
    case OP_log2: return m_log2(x);
    case OP_log10: return m_log10(x);
    case OP_log1p: return m_log1p(x);
    case OP_sqrt: return m_sqrt(x);
    case OP_rsqrt: return one / m_sqrt(x);
    case OP_square: return x * x;
    case OP_reciprocal: return one / x;
    case OP_sin: return m_sin(x);
    case OP_cos: return m_cos(x);
    case OP_tan: return m_tan(x);
    case OP_asin: return m_asin(x);
    case OP_acos: return m_acos(x);
    case OP_atan: return m_atan(x);
    case OP_sinh: return m_sinh(x);
    case OP_cosh: return m_cosh(x);
    case OP_tanh: return m_tanh(x);
    case OP_asinh: return m_asinh(x);
    case OP_acosh: return m_acosh(x);
    case OP_atanh: return m_atanh(x);
    case OP_sigmoid: return one / (one + m_exp(-x));
    case OP_erf: return m_erf(x);
    case OP_erfc: return m_erfc(x);
    case OP_erfinv: return m_erfinv(x);
    case OP_lgamma: return m_lgamma(x);
    case OP_digamma: return m_digamma(x);
    case OP_floor: return m_floor(x);
    case OP_ceil: return m_ceil(x);
    case OP_round: return round_decimals(x, sd);
    case OP_trunc: return m_trunc(x);
    case OP_isnan: return m_isnan(x);
    case OP_isinf: return m_isinf(x);
    case OP_isfinite: return !m_isnan(x) && !m_isinf(x);
    case OP_isposinf: return x == (R)INFINITY;
    case OP_isneginf: return x == -(R)INFINITY;
    case OP_signbit: return m_copysign(one, x) < 0;
    case OP_logical_not: return x == 0;
    case OP_imag: return zero;
    case OP_angle: return m_isnan(x) ? x : m_atan2(zero, x);
    case OP_pow_scalar: return m_pow(x, s);
    case OP_rpow_scalar: return m_pow(s, x);
    case OP_add_scalar: return x + s;
    case OP_mul_scalar: return x * s;
    case OP_rsub_scalar: return s - x;
    case OP_rdiv_scalar: return s / x;
    case OP_clamp_min: return (m_isnan(x) || x >= s) ? x : s;
    case OP_clamp_max: return (m_isnan(x) || x <= s) ? x : s;
    case OP_relu: return (m_isnan(x) || x > 0) ? x : zero;
    case OP_silu: return x / (one + m_exp(-x));
    case OP_gelu: return (R)0.5 * x * (one + m_erf(x * (R)0.70710678118654752440));
    case OP_gelu_tanh:
      return (R)0.5 * x * (one + m_tanh((R)0.79788456080286535588 * (x + (R)0.044715 * x * x * x)));
    case OP_softplus: return x > 20 ? x : m_log1p(m_exp(x));
    case OP_log_sigmoid: return (x < 0 ? x : zero) - m_log1p(m_exp(-m_fabs(x)));
    case OP_leaky_relu: return x > 0 ? x : x * s;
    case OP_elu: return x > 0 ? x : s * m_expm1(x);
    default: return x;  /* conj, real */
  }
}

/* NumPy's npy_divmod: floor division and the modulo with the divisor's sign. */
template <class R> CR_HD void float_divmod(R a, R b, R* floordiv, R* mod) {
  R m = m_fmod(a, b);
  if (b == 0) { *mod = m; *floordiv = a / b; return; }
  R div = (a - m) / b;
  if (m != 0) {
    if ((b < 0) != (m < 0)) { m += b; div -= 1; }
  } else {
    m = m_copysign((R)0, b);
  }
  R fd;
  if (div != 0) { fd = m_floor(div); if (div - fd > (R)0.5) fd += 1; }
  else fd = m_copysign((R)0, a / b);
  *floordiv = fd;
  *mod = m;
}

template <class R> CR_HD R logaddexp(R a, R b, bool base2) {
  if (a == b && m_isinf(a)) return a;  /* both +inf or both -inf */
  R m = a > b ? a : b, d = -m_fabs(a - b);
  if (m_isnan(d)) return a + b;
  return base2 ? m + m_log1p(m_exp2(d)) / (R)kLn2 : m + m_log1p(m_exp(d));
}

template <class R> CR_HD R binary_op(int op, R a, R b) {
  using namespace binary;
  R q, m;
  switch (op) {
    case OP_add: return a + b;
    case OP_sub: return a - b;
    case OP_mul: return a * b;
    case OP_div: return a / b;
    case OP_floor_divide: float_divmod(a, b, &q, &m); return q;
    case OP_remainder: float_divmod(a, b, &q, &m); return m;
    case OP_fmod: return m_fmod(a, b);
    case OP_pow: return m_pow(a, b);
    case OP_maximum: return m_isnan(a) ? a : m_isnan(b) ? b : (a > b ? a : b);
    case OP_minimum: return m_isnan(a) ? a : m_isnan(b) ? b : (a < b ? a : b);
    case OP_fmax: return m_isnan(b) ? a : m_isnan(a) ? b : (a > b ? a : b);
    case OP_fmin: return m_isnan(b) ? a : m_isnan(a) ? b : (a < b ? a : b);
    case OP_atan2: return m_atan2(a, b);
    case OP_hypot: return m_hypot(a, b);
    case OP_copysign: return m_copysign(a, b);
    case OP_nextafter: return m_nextafter(a, b);
    case OP_logaddexp: return logaddexp(a, b, false);
    case OP_logaddexp2: return logaddexp(a, b, true);
    case OP_xlogy: return (a == 0 && !m_isnan(b)) ? (R)0 : a * m_log(b);
    case OP_eq: return a == b;
    case OP_ne: return a != b;
    case OP_lt: return a < b;
    case OP_le: return a <= b;
    case OP_gt: return a > b;
    case OP_ge: return a >= b;
    case OP_logical_and: return a != 0 && b != 0;
    case OP_logical_or: return a != 0 || b != 0;
    case OP_logical_xor: return (a != 0) != (b != 0);
    default: return 0;
  }
}

/* ---- complex ---- */
template <class R> CR_HD cplx<R> unary_op(int op, cplx<R> z, double sd) {
  using namespace unary;
  typedef cplx<R> Z;
  const Z one = {1, 0}, zero = {0, 0}, s = {(R)sd, 0};
  const R ln2 = (R)kLn2, ln10 = (R)2.30258509299404568402;
  switch (op) {
    case OP_neg: return -z;
    case OP_abs: return Z{c_abs(z), 0};
    case OP_sign: {
      if (m_isinf(z.re) || m_isinf(z.im))  /* the direction of the infinite part */
        z = Z{m_isinf(z.re) ? m_copysign((R)1, z.re) : 0, m_isinf(z.im) ? m_copysign((R)1, z.im) : 0};
      return (z.re == 0 && z.im == 0) ? zero : z * (1 / c_abs(z));
    }
    case OP_exp: return c_exp(z);
    case OP_exp2: return c_exp(z * ln2);
    case OP_expm1: {
      R e = m_expm1(z.re), sh = m_sin(z.im / 2);
      return Z{e * m_cos(z.im) - 2 * sh * sh, (e + 1) * m_sin(z.im)};
    }
    case OP_log: return c_log(z);
    case OP_log2: return c_log(z) * (1 / ln2);
    case OP_log10: return c_log(z) * (1 / ln10);
    case OP_log1p: return c_log(z + one);
    case OP_sqrt: return c_sqrt(z);
    case OP_rsqrt: return one / c_sqrt(z);
    case OP_square: return z * z;
    case OP_reciprocal: return one / z;
    case OP_sin: return c_sin(z);
    case OP_cos: return c_cos(z);
    case OP_tan: return c_sin(z) / c_cos(z);
    case OP_sinh: return c_sinh(z);
    case OP_cosh: return c_cosh(z);
    case OP_tanh: return c_sinh(z) / c_cosh(z);
    case OP_sigmoid: return one / (one + c_exp(-z));
    case OP_isnan: return Z{(R)(m_isnan(z.re) || m_isnan(z.im)), 0};
    case OP_isinf: return Z{(R)(m_isinf(z.re) || m_isinf(z.im)), 0};
    case OP_isfinite:
      return Z{(R)!(m_isnan(z.re) || m_isnan(z.im) || m_isinf(z.re) || m_isinf(z.im)), 0};
    case OP_logical_not: return Z{(R)(z.re == 0 && z.im == 0), 0};
    case OP_conj: return Z{z.re, -z.im};
    case OP_real: return Z{z.re, 0};
    case OP_imag: return Z{z.im, 0};
    case OP_angle: return Z{m_atan2(z.im, z.re), 0};
    case OP_pow_scalar: return c_pow(z, s);
    case OP_rpow_scalar: return c_pow(s, z);
    case OP_add_scalar: return z + s;
    case OP_mul_scalar: return z * s.re;
    case OP_rsub_scalar: return s - z;
    case OP_rdiv_scalar: return s / z;
    default: return z;
  }
}

template <class R> CR_HD cplx<R> binary_op(int op, cplx<R> a, cplx<R> b) {
  using namespace binary;
  typedef cplx<R> Z;
  bool an = a.re != 0 || a.im != 0, bn = b.re != 0 || b.im != 0;
  switch (op) {
    case OP_add: return a + b;
    case OP_sub: return a - b;
    case OP_mul: return a * b;
    case OP_div: return a / b;
    case OP_pow: return c_pow(a, b);
    case OP_eq: return Z{(R)(a == b), 0};
    case OP_ne: return Z{(R)(a != b), 0};
    case OP_logical_and: return Z{(R)(an && bn), 0};
    case OP_logical_or: return Z{(R)(an || bn), 0};
    case OP_logical_xor: return Z{(R)(an != bn), 0};
    default: return Z{0, 0};
  }
}

/* ---- ternary (where is its own kernel) ---- */
template <class C> CR_HD C clamp_op(C x, C lo, C hi) {
  if (x != x) return x;
  C r = (lo != lo) ? lo : (x < lo ? lo : x);
  return (hi != hi) ? hi : (r > hi ? hi : r);
}
template <class R> CR_HD cplx<R> clamp_op(cplx<R> x, cplx<R>, cplx<R>) { return x; }

template <class C> CR_HD bool small_weight(C w) { return real_part(w) * real_part(w) + imag_part(w) * imag_part(w) < 0.25; }

template <class C> CR_HD C ternary_op(int op, C a, C b, C c) {
  using namespace ternary;
  switch (op) {
    case OP_clamp: return clamp_op(a, b, c);
    case OP_lerp: return small_weight(c) ? a + c * (b - a) : b - (b - a) * (FromDouble<C>::make(1, 0) - c);
    case OP_addcmul: return a + b * c;
    case OP_addcdiv: return a + b / c;
    default: return a;
  }
}
template <> CR_HD inline int64_t ternary_op(int op, int64_t a, int64_t b, int64_t c) {
  using namespace ternary;
  switch (op) {
    case OP_clamp: { int64_t r = a < b ? b : a; return r > c ? c : r; }
    case OP_addcmul: return wrap_add(a, wrap_mul(b, c));
    default: return a;
  }
}

}  // namespace cr

#endif  /* CHAINRULE_CUDA_KERNELS_SCALAR_OPS_H_ */
