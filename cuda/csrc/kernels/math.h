/* Scalar math for kernel bodies (CR_HD): float/double wrappers over the C library
 * (which nvcc also provides on the device), the special functions the C library lacks
 * (erfinv, digamma) written once for both builds, and complex arithmetic. */
#ifndef CHAINRULE_CUDA_KERNELS_MATH_H_
#define CHAINRULE_CUDA_KERNELS_MATH_H_

#include "dtypes.h"

namespace cr {

#define CR_MATH1(name)                                            \
  CR_HD inline float m_##name(float x) { return name##f(x); }     \
  CR_HD inline double m_##name(double x) { return name(x); }
#define CR_MATH2(name)                                                        \
  CR_HD inline float m_##name(float x, float y) { return name##f(x, y); }     \
  CR_HD inline double m_##name(double x, double y) { return name(x, y); }
CR_MATH1(exp) CR_MATH1(exp2) CR_MATH1(expm1) CR_MATH1(log) CR_MATH1(log2)
CR_MATH1(log10) CR_MATH1(log1p) CR_MATH1(sqrt) CR_MATH1(sin) CR_MATH1(cos)
CR_MATH1(tan) CR_MATH1(asin) CR_MATH1(acos) CR_MATH1(atan) CR_MATH1(sinh)
CR_MATH1(cosh) CR_MATH1(tanh) CR_MATH1(asinh) CR_MATH1(acosh) CR_MATH1(atanh)
CR_MATH1(erf) CR_MATH1(erfc) CR_MATH1(lgamma) CR_MATH1(floor) CR_MATH1(ceil)
CR_MATH1(trunc) CR_MATH1(rint) CR_MATH1(fabs)
CR_MATH2(atan2) CR_MATH2(hypot) CR_MATH2(copysign) CR_MATH2(fmod) CR_MATH2(pow)
CR_MATH2(nextafter)
#undef CR_MATH1
#undef CR_MATH2

template <class R> CR_HD inline bool m_isnan(R x) { return x != x; }
template <class R> CR_HD inline bool m_isinf(R x) { return x == (R)INFINITY || x == -(R)INFINITY; }

/* Inverse error function: Giles' single-precision approximation ("Approximating the
 * erfinv function", 2010), then Newton steps on erf to the type's precision. */
template <class R> CR_HD inline R m_erfinv(R y) {
  if (!(y > -1 && y < 1)) return y == 1 ? (R)INFINITY : y == -1 ? -(R)INFINITY : (R)NAN;
  double x = y, w = -log((1.0 - x) * (1.0 + x)), p;
  if (w < 5.0) {
    w -= 2.5;
    p = 2.81022636e-08; p = 3.43273939e-07 + p * w; p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w; p = 0.00021858087 + p * w; p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w; p = 0.246640727 + p * w; p = 1.50140941 + p * w;
  } else {
    w = sqrt(w) - 3.0;
    p = -0.000200214257; p = 0.000100950558 + p * w; p = 0.00134934322 + p * w;
    p = -0.00367342844 + p * w; p = 0.00573950773 + p * w; p = -0.0076224613 + p * w;
    p = 0.00943887047 + p * w; p = 1.00167406 + p * w; p = 2.83297682 + p * w;
  }
  double r = p * x;
  for (int k = 0; k < 2; ++k)  /* Newton: erf'(r) = 2/sqrt(pi) exp(-r^2) */
    r -= (erf(r) - x) / (1.1283791670955126 * exp(-r * r));
  return (R)r;
}

/* Digamma: reflection for x < 0, recurrence up to x >= 6, then the asymptotic series. */
template <class R> CR_HD inline R m_digamma(R xr) {
  double x = xr, acc = 0;
  if (x == 0) return xr == 0 && m_copysign(1.0, (double)xr) < 0 ? (R)INFINITY : -(R)INFINITY;
  if (x < 0) {
    if (x == floor(x)) return (R)NAN;
    const double pi = 3.141592653589793;
    acc = -pi / tan(pi * x);  /* psi(x) = psi(1 - x) - pi / tan(pi x) */
    x = 1 - x;
  }
  while (x < 6) { acc -= 1 / x; x += 1; }
  double z = 1 / (x * x);
  double series = z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240 - z * (1.0 / 132)))));
  return (R)(acc + log(x) - 0.5 / x - series);
}

/* ---- complex ---- */
template <class R> CR_HD inline cplx<R> operator+(cplx<R> a, cplx<R> b) { return {a.re + b.re, a.im + b.im}; }
template <class R> CR_HD inline cplx<R> operator-(cplx<R> a, cplx<R> b) { return {a.re - b.re, a.im - b.im}; }
template <class R> CR_HD inline cplx<R> operator-(cplx<R> a) { return {-a.re, -a.im}; }
template <class R> CR_HD inline cplx<R> operator*(cplx<R> a, cplx<R> b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
template <class R> CR_HD inline cplx<R> operator*(cplx<R> a, R s) { return {a.re * s, a.im * s}; }
/* Smith's algorithm: no overflow from squaring the divisor. */
template <class R> CR_HD inline cplx<R> operator/(cplx<R> a, cplx<R> b) {
  if (m_fabs(b.re) >= m_fabs(b.im)) {
    if (b.re == 0 && b.im == 0) return {a.re / m_fabs(b.re), a.im / m_fabs(b.im)};
    R r = b.im / b.re, d = b.re + b.im * r;
    return {(a.re + a.im * r) / d, (a.im - a.re * r) / d};
  }
  R r = b.re / b.im, d = b.re * r + b.im;
  return {(a.re * r + a.im) / d, (a.im * r - a.re) / d};
}
template <class R> CR_HD inline bool operator==(cplx<R> a, cplx<R> b) { return a.re == b.re && a.im == b.im; }
template <class R> CR_HD inline bool operator!=(cplx<R> a, cplx<R> b) { return !(a == b); }

template <class R> CR_HD inline R c_abs(cplx<R> z) { return m_hypot(z.re, z.im); }
template <class R> CR_HD inline cplx<R> c_exp(cplx<R> z) {
  R e = m_exp(z.re);
  if (z.im == 0) return {e, z.im};
  return {e * m_cos(z.im), e * m_sin(z.im)};
}
template <class R> CR_HD inline cplx<R> c_log(cplx<R> z) {
  return {m_log(c_abs(z)), m_atan2(z.im, z.re)};
}
template <class R> CR_HD inline cplx<R> c_sqrt(cplx<R> z) {
  if (z.re == 0 && z.im == 0) return {(R)0, z.im};
  R t = m_sqrt((m_fabs(z.re) + c_abs(z)) / 2);
  if (z.re >= 0) return {t, z.im / (2 * t)};
  return {m_fabs(z.im) / (2 * t), m_copysign(t, z.im)};
}
template <class R> CR_HD inline cplx<R> c_sin(cplx<R> z) {
  return {m_sin(z.re) * m_cosh(z.im), m_cos(z.re) * m_sinh(z.im)};
}
template <class R> CR_HD inline cplx<R> c_cos(cplx<R> z) {
  return {m_cos(z.re) * m_cosh(z.im), -m_sin(z.re) * m_sinh(z.im)};
}
template <class R> CR_HD inline cplx<R> c_sinh(cplx<R> z) {
  return {m_sinh(z.re) * m_cos(z.im), m_cosh(z.re) * m_sin(z.im)};
}
template <class R> CR_HD inline cplx<R> c_cosh(cplx<R> z) {
  return {m_cosh(z.re) * m_cos(z.im), m_sinh(z.re) * m_sin(z.im)};
}
template <class R> CR_HD inline cplx<R> c_pow(cplx<R> a, cplx<R> b) {
  if (a.re == 0 && a.im == 0) {
    if (b.re == 0 && b.im == 0) return {(R)1, (R)0};
    if (b.im == 0 && b.re > 0) return {(R)0, (R)0};
  }
  return c_exp(b * c_log(a));
}

}  // namespace cr

#endif  /* CHAINRULE_CUDA_KERNELS_MATH_H_ */
