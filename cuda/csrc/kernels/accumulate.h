/* Accumulator types of reductions, scans, sorts and matmul: float types accumulate in
 * double, complex in cplx<double>, integers and bool in int64 (wrapping). */
#ifndef CHAINRULE_CUDA_KERNELS_ACCUMULATE_H_
#define CHAINRULE_CUDA_KERNELS_ACCUMULATE_H_

#include "scalar_ops.h"

namespace cr {

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

CR_HD inline int64_t scale_acc(int64_t a, double s) { return wrap_mul(a, float_to_int(s)); }

}  // namespace cr

#endif  /* CHAINRULE_CUDA_KERNELS_ACCUMULATE_H_ */
