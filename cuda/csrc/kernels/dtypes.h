/* Element types of enum cr_dtype as C++ types usable in kernel bodies (CR_HD), their
 * compute types, and conversions between them.
 *
 * Note [compute types]
 *   Every kernel loads its elements into a compute type, runs the op there and
 *   converts back when it stores: float16/bfloat16/float32 compute in float, float64
 *   in double, every integer type and bool in int64 (wrapping back on the store gives
 *   NumPy's fixed-width overflow), complex in cplx<float>/cplx<double>. So each op is
 *   written for five compute types, not twelve storage types. float16 and bfloat16 are
 *   plain bit containers converted with round-to-nearest-even, the same on the host and
 *   on the GPU (no cuda_fp16.h needed).
 */
#ifndef CHAINRULE_CUDA_KERNELS_DTYPES_H_
#define CHAINRULE_CUDA_KERNELS_DTYPES_H_

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../cr_cuda.h"
#include "../launch.h"

namespace cr {

struct crbool { uint8_t v; };
struct half { uint16_t bits; };
struct bfloat16 { uint16_t bits; };
template <class R> struct cplx { R re, im; };

CR_HD inline float bits_to_float(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
CR_HD inline uint32_t float_to_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

CR_HD inline float half_to_float(half h) {
  uint32_t sign = (uint32_t)(h.bits & 0x8000u) << 16, exp = (h.bits >> 10) & 0x1f,
           man = h.bits & 0x3ffu;
  if (exp == 0) {  /* zero or subnormal: man * 2^-24 */
    float f = (float)man * (1.0f / 16777216.0f);
    return sign ? -f : f;
  }
  if (exp == 31) return bits_to_float(sign | 0x7f800000u | (man << 13));
  return bits_to_float(sign | ((exp + 112) << 23) | (man << 13));
}

CR_HD inline half float_to_half(float f) {
  uint32_t x = float_to_bits(f);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
  x &= 0x7fffffffu;
  if (x >= 0x7f800000u) return half{(uint16_t)(sign | 0x7c00u | (x > 0x7f800000u ? 0x200u : 0u))};
  if (x >= 0x477ff000u) return half{(uint16_t)(sign | 0x7c00u)};  /* >= 65520: inf */
  if (x < 0x38800000u) {  /* below 2^-14: subnormal, in units of 2^-24 (exact product) */
    uint32_t m = (uint32_t)rintf(bits_to_float(x) * 16777216.0f);
    return half{(uint16_t)(sign | m)};
  }
  x -= 112u << 23;
  x += 0xfffu + ((x >> 13) & 1u);
  return half{(uint16_t)(sign | (x >> 13))};
}

CR_HD inline float bf16_to_float(bfloat16 b) { return bits_to_float((uint32_t)b.bits << 16); }
CR_HD inline bfloat16 float_to_bf16(float f) {
  uint32_t x = float_to_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return bfloat16{(uint16_t)((x >> 16) | 0x40u)};
  x += 0x7fffu + ((x >> 16) & 1u);
  return bfloat16{(uint16_t)(x >> 16)};
}

/* ---- compute types (Note [compute types]) ---- */
template <class T> struct Compute { typedef int64_t type; };
template <> struct Compute<half> { typedef float type; };
template <> struct Compute<bfloat16> { typedef float type; };
template <> struct Compute<float> { typedef float type; };
template <> struct Compute<double> { typedef double type; };
template <> struct Compute<cplx<float>> { typedef cplx<float> type; };
template <> struct Compute<cplx<double>> { typedef cplx<double> type; };

/* The real type matching a compute type (|z| of a complex, the type of a real). */
template <class C> struct Real { typedef C type; };
template <class R> struct Real<cplx<R>> { typedef R type; };

template <class C> struct IsComplex { static const bool value = false; };
template <class R> struct IsComplex<cplx<R>> { static const bool value = true; };
template <class C> struct IsFloat { static const bool value = false; };
template <> struct IsFloat<float> { static const bool value = true; };
template <> struct IsFloat<double> { static const bool value = true; };

/* load: storage -> compute type */
CR_HD inline int64_t load(crbool v) { return v.v != 0; }
CR_HD inline int64_t load(uint8_t v) { return v; }
CR_HD inline int64_t load(int8_t v) { return v; }
CR_HD inline int64_t load(int16_t v) { return v; }
CR_HD inline int64_t load(int32_t v) { return v; }
CR_HD inline int64_t load(int64_t v) { return v; }
CR_HD inline float load(half v) { return half_to_float(v); }
CR_HD inline float load(bfloat16 v) { return bf16_to_float(v); }
CR_HD inline float load(float v) { return v; }
CR_HD inline double load(double v) { return v; }
CR_HD inline cplx<float> load(cplx<float> v) { return v; }
CR_HD inline cplx<double> load(cplx<double> v) { return v; }

/* Scalar parts of any compute value, for conversions between compute types. */
CR_HD inline bool nonzero(int64_t v) { return v != 0; }
CR_HD inline bool nonzero(float v) { return v != 0; }
CR_HD inline bool nonzero(double v) { return v != 0; }
template <class R> CR_HD inline bool nonzero(cplx<R> v) { return v.re != 0 || v.im != 0; }
CR_HD inline double real_part(int64_t v) { return (double)v; }
CR_HD inline double real_part(float v) { return v; }
CR_HD inline double real_part(double v) { return v; }
template <class R> CR_HD inline double real_part(cplx<R> v) { return v.re; }
CR_HD inline double imag_part(int64_t) { return 0; }
CR_HD inline double imag_part(float) { return 0; }
CR_HD inline double imag_part(double) { return 0; }
template <class R> CR_HD inline double imag_part(cplx<R> v) { return v.im; }

/* Float to integer the way NumPy's casts do on x86 for finite values (truncation);
 * out-of-range and NaN give the type's minimum rather than undefined behaviour. */
CR_HD inline int64_t float_to_int(double v) {
  return (v == v && v > -9.3e18 && v < 9.3e18) ? (int64_t)v : INT64_MIN;
}
CR_HD inline int64_t as_int(int64_t v) { return v; }
CR_HD inline int64_t as_int(float v) { return float_to_int(v); }
CR_HD inline int64_t as_int(double v) { return float_to_int(v); }
template <class R> CR_HD inline int64_t as_int(cplx<R> v) { return float_to_int(v.re); }

/* store: any compute value -> storage type T */
template <class T> struct Store {
  template <class C> CR_HD static T from(C v) { return (T)as_int(v); }
};
template <> struct Store<crbool> {
  template <class C> CR_HD static crbool from(C v) { return crbool{(uint8_t)nonzero(v)}; }
};
template <> struct Store<half> {
  template <class C> CR_HD static half from(C v) { return float_to_half((float)real_part(v)); }
  CR_HD static half from(float v) { return float_to_half(v); }
};
template <> struct Store<bfloat16> {
  template <class C> CR_HD static bfloat16 from(C v) { return float_to_bf16((float)real_part(v)); }
  CR_HD static bfloat16 from(float v) { return float_to_bf16(v); }
};
template <> struct Store<float> {
  template <class C> CR_HD static float from(C v) { return (float)real_part(v); }
  CR_HD static float from(int64_t v) { return (float)v; }
};
template <> struct Store<double> {
  template <class C> CR_HD static double from(C v) { return real_part(v); }
  CR_HD static double from(int64_t v) { return (double)v; }
};
template <class R> struct Store<cplx<R>> {
  template <class C> CR_HD static cplx<R> from(C v) {
    return cplx<R>{(R)real_part(v), (R)imag_part(v)};
  }
};
template <class T, class C> CR_HD inline T store(C v) { return Store<T>::from(v); }

/* A compute value made from a double (scalars passed through the ABI). */
template <class C> struct FromDouble {
  CR_HD static C make(double re, double) { return (C)re; }
};
template <> struct FromDouble<int64_t> {
  CR_HD static int64_t make(double re, double) { return float_to_int(re); }
};
template <class R> struct FromDouble<cplx<R>> {
  CR_HD static cplx<R> make(double re, double im) { return cplx<R>{(R)re, (R)im}; }
};

inline int dtype_size(int dt) {
  static const int sizes[CR_NUM_DTYPES] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8, 8, 16};
  return (dt >= 0 && dt < CR_NUM_DTYPES) ? sizes[dt] : 0;
}
const char* dtype_name(int dt);

}  // namespace cr

/* Runs the statement list with T bound to dtype `dt`'s storage type. */
#define CR_CASE(code, ctype, ...) case code: { typedef ctype T; __VA_ARGS__; } break;
#define CR_DISPATCH(dt, ...)                                     \
  switch (dt) {                                                  \
    CR_CASE(CR_BOOL, ::cr::crbool, __VA_ARGS__)                  \
    CR_CASE(CR_UINT8, uint8_t, __VA_ARGS__)                      \
    CR_CASE(CR_INT8, int8_t, __VA_ARGS__)                        \
    CR_CASE(CR_INT16, int16_t, __VA_ARGS__)                      \
    CR_CASE(CR_INT32, int32_t, __VA_ARGS__)                      \
    CR_CASE(CR_INT64, int64_t, __VA_ARGS__)                      \
    CR_CASE(CR_FLOAT16, ::cr::half, __VA_ARGS__)                 \
    CR_CASE(CR_BFLOAT16, ::cr::bfloat16, __VA_ARGS__)            \
    CR_CASE(CR_FLOAT32, float, __VA_ARGS__)                      \
    CR_CASE(CR_FLOAT64, double, __VA_ARGS__)                     \
    CR_CASE(CR_COMPLEX64, ::cr::cplx<float>, __VA_ARGS__)        \
    CR_CASE(CR_COMPLEX128, ::cr::cplx<double>, __VA_ARGS__)      \
    default: return ::cr::fail("unknown dtype code %d", (int)(dt)); \
  }

/* The same over the floating dtypes only, and over bool, integers and floats. */
#define CR_DISPATCH_FLOAT(dt, ...)                               \
  switch (dt) {                                                  \
    CR_CASE(CR_FLOAT16, ::cr::half, __VA_ARGS__)                 \
    CR_CASE(CR_BFLOAT16, ::cr::bfloat16, __VA_ARGS__)            \
    CR_CASE(CR_FLOAT32, float, __VA_ARGS__)                      \
    CR_CASE(CR_FLOAT64, double, __VA_ARGS__)                     \
    default: return ::cr::fail("unsupported dtype %s", ::cr::dtype_name(dt)); \
  }
#define CR_DISPATCH_REAL(dt, ...)                                \
  switch (dt) {                                                  \
    CR_CASE(CR_BOOL, ::cr::crbool, __VA_ARGS__)                  \
    CR_CASE(CR_UINT8, uint8_t, __VA_ARGS__)                      \
    CR_CASE(CR_INT8, int8_t, __VA_ARGS__)                        \
    CR_CASE(CR_INT16, int16_t, __VA_ARGS__)                      \
    CR_CASE(CR_INT32, int32_t, __VA_ARGS__)                      \
    CR_CASE(CR_INT64, int64_t, __VA_ARGS__)                      \
    CR_CASE(CR_FLOAT16, ::cr::half, __VA_ARGS__)                 \
    CR_CASE(CR_BFLOAT16, ::cr::bfloat16, __VA_ARGS__)            \
    CR_CASE(CR_FLOAT32, float, __VA_ARGS__)                      \
    CR_CASE(CR_FLOAT64, double, __VA_ARGS__)                     \
    default: return ::cr::fail("unsupported dtype %s", ::cr::dtype_name(dt)); \
  }

#endif  /* CHAINRULE_CUDA_KERNELS_DTYPES_H_ */
