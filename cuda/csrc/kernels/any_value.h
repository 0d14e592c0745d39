/* AnyValue: one element of any dtype, for kernels whose input or output dtype is only
 * known at run time (conversions in copies, reduction results). int64 stays exact. */
#ifndef CHAINRULE_CUDA_KERNELS_ANY_VALUE_H_
#define CHAINRULE_CUDA_KERNELS_ANY_VALUE_H_

#include "dtypes.h"

namespace cr {

struct AnyValue {
  int64_t i;
  double re, im;
  bool is_int;
};
CR_HD inline bool nonzero(AnyValue v) { return v.is_int ? v.i != 0 : (v.re != 0 || v.im != 0); }
CR_HD inline double real_part(AnyValue v) { return v.is_int ? (double)v.i : v.re; }
CR_HD inline double imag_part(AnyValue v) { return v.im; }
CR_HD inline int64_t as_int(AnyValue v) { return v.is_int ? v.i : float_to_int(v.re); }

template <class C> CR_HD inline AnyValue any_of(C v) {
  return AnyValue{0, real_part(v), imag_part(v), false};
}
CR_HD inline AnyValue any_of(int64_t v) { return AnyValue{v, (double)v, 0, true}; }

CR_HD inline AnyValue load_any(int dt, const char* base, int64_t off) {
  switch (dt) {
    case CR_BOOL: return any_of(load(((const crbool*)base)[off]));
    case CR_UINT8: return any_of(load(((const uint8_t*)base)[off]));
    case CR_INT8: return any_of(load(((const int8_t*)base)[off]));
    case CR_INT16: return any_of(load(((const int16_t*)base)[off]));
    case CR_INT32: return any_of(load(((const int32_t*)base)[off]));
    case CR_INT64: return any_of(load(((const int64_t*)base)[off]));
    case CR_FLOAT16: return any_of(load(((const half*)base)[off]));
    case CR_BFLOAT16: return any_of(load(((const bfloat16*)base)[off]));
    case CR_FLOAT32: return any_of(load(((const float*)base)[off]));
    case CR_FLOAT64: return any_of(load(((const double*)base)[off]));
    case CR_COMPLEX64: return any_of(load(((const cplx<float>*)base)[off]));
    default: return any_of(load(((const cplx<double>*)base)[off]));
  }
}

CR_HD inline void store_any(int dt, char* base, int64_t off, AnyValue v) {
  switch (dt) {
    case CR_BOOL: ((crbool*)base)[off] = store<crbool>(v); break;
    case CR_UINT8: ((uint8_t*)base)[off] = store<uint8_t>(v); break;
    case CR_INT8: ((int8_t*)base)[off] = store<int8_t>(v); break;
    case CR_INT16: ((int16_t*)base)[off] = store<int16_t>(v); break;
    case CR_INT32: ((int32_t*)base)[off] = store<int32_t>(v); break;
    case CR_INT64: ((int64_t*)base)[off] = store<int64_t>(v); break;
    case CR_FLOAT16: ((half*)base)[off] = store<half>(v); break;
    case CR_BFLOAT16: ((bfloat16*)base)[off] = store<bfloat16>(v); break;
    case CR_FLOAT32: ((float*)base)[off] = store<float>(v); break;
    case CR_FLOAT64: ((double*)base)[off] = store<double>(v); break;
    case CR_COMPLEX64: ((cplx<float>*)base)[off] = store<cplx<float>>(v); break;
    default: ((cplx<double>*)base)[off] = store<cplx<double>>(v); break;
  }
}

}  // namespace cr

#endif  /* CHAINRULE_CUDA_KERNELS_ANY_VALUE_H_ */
