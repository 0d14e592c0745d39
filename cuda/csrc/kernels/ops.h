/* The op lists of every kernel family, in code order (cr_op_names returns them, so
 * the Python side never hard-codes a number). X(name, kinds, out):
 *   kinds: the dtype kinds the kernel takes (K_INT: bool and integers, K_FLOAT:
 *          float16/bfloat16/float32/float64, K_CPLX: complex64/complex128);
 *   out:   O_SAME (the input dtype), O_BOOL (bool), O_REAL (the real dtype of a
 *          complex input, else the input dtype).
 * A dtype kind an op does not list is an error naming the op and dtype (the Python
 * side casts first, e.g. int -> float for exp, as NumPy's type resolution does). */
#ifndef CHAINRULE_CUDA_KERNELS_OPS_H_
#define CHAINRULE_CUDA_KERNELS_OPS_H_

namespace cr {

enum { K_INT = 1, K_FLOAT = 2, K_CPLX = 4, K_ALL = 7, K_REAL = 3, K_FC = 6 };
enum { O_SAME = 0, O_BOOL = 1, O_REAL = 2 };

/* x = the input, s = arg (a double). */
#define CR_UNARY_OPS(X)                                                               \
  X(neg, K_ALL, O_SAME) X(abs, K_ALL, O_REAL) X(sign, K_ALL, O_SAME)                  \
  X(exp, K_FC, O_SAME) X(exp2, K_FC, O_SAME) X(expm1, K_FC, O_SAME)                   \
  X(log, K_FC, O_SAME) X(log2, K_FC, O_SAME) X(log10, K_FC, O_SAME)                   \
  X(log1p, K_FC, O_SAME) X(sqrt, K_FC, O_SAME) X(rsqrt, K_FC, O_SAME)                 \
  X(square, K_ALL, O_SAME) X(reciprocal, K_FC, O_SAME)                                \
  X(sin, K_FC, O_SAME) X(cos, K_FC, O_SAME) X(tan, K_FC, O_SAME)                      \
  X(asin, K_FLOAT, O_SAME) X(acos, K_FLOAT, O_SAME) X(atan, K_FLOAT, O_SAME)          \
  X(sinh, K_FC, O_SAME) X(cosh, K_FC, O_SAME) X(tanh, K_FC, O_SAME)                   \
  X(asinh, K_FLOAT, O_SAME) X(acosh, K_FLOAT, O_SAME) X(atanh, K_FLOAT, O_SAME)       \
  X(sigmoid, K_FC, O_SAME) X(erf, K_FLOAT, O_SAME) X(erfc, K_FLOAT, O_SAME)           \
  X(erfinv, K_FLOAT, O_SAME) X(lgamma, K_FLOAT, O_SAME) X(digamma, K_FLOAT, O_SAME)   \
  X(floor, K_REAL, O_SAME) X(ceil, K_REAL, O_SAME) X(round, K_REAL, O_SAME)           \
  X(trunc, K_REAL, O_SAME) X(isnan, K_ALL, O_BOOL) X(isinf, K_ALL, O_BOOL)            \
  X(isfinite, K_ALL, O_BOOL) X(isposinf, K_REAL, O_BOOL) X(isneginf, K_REAL, O_BOOL)  \
  X(signbit, K_REAL, O_BOOL) X(logical_not, K_ALL, O_BOOL)                            \
  X(bitwise_not, K_INT, O_SAME) X(conj, K_ALL, O_SAME) X(real, K_ALL, O_REAL)         \
  X(imag, K_FC, O_REAL) X(angle, K_FC, O_REAL)                                        \
  X(pow_scalar, K_ALL, O_SAME) X(rpow_scalar, K_FC, O_SAME)                           \
  X(add_scalar, K_ALL, O_SAME) X(mul_scalar, K_ALL, O_SAME)                           \
  X(rsub_scalar, K_ALL, O_SAME) X(rdiv_scalar, K_FC, O_SAME)                          \
  X(clamp_min, K_REAL, O_SAME) X(clamp_max, K_REAL, O_SAME) X(relu, K_REAL, O_SAME)   \
  X(silu, K_FLOAT, O_SAME) X(gelu, K_FLOAT, O_SAME) X(gelu_tanh, K_FLOAT, O_SAME)     \
  X(softplus, K_FLOAT, O_SAME) X(log_sigmoid, K_FLOAT, O_SAME)                        \
  X(leaky_relu, K_FLOAT, O_SAME) X(elu, K_FLOAT, O_SAME)

#define CR_BINARY_OPS(X)                                                              \
  X(add, K_ALL, O_SAME) X(sub, K_ALL, O_SAME) X(mul, K_ALL, O_SAME)                   \
  X(div, K_FC, O_SAME) X(floor_divide, K_REAL, O_SAME) X(remainder, K_REAL, O_SAME)   \
  X(fmod, K_REAL, O_SAME) X(pow, K_ALL, O_SAME) X(maximum, K_REAL, O_SAME)            \
  X(minimum, K_REAL, O_SAME) X(fmax, K_REAL, O_SAME) X(fmin, K_REAL, O_SAME)          \
  X(atan2, K_FLOAT, O_SAME) X(hypot, K_FLOAT, O_SAME) X(copysign, K_FLOAT, O_SAME)    \
  X(nextafter, K_FLOAT, O_SAME) X(logaddexp, K_FLOAT, O_SAME)                         \
  X(logaddexp2, K_FLOAT, O_SAME) X(xlogy, K_FLOAT, O_SAME)                            \
  X(eq, K_ALL, O_BOOL) X(ne, K_ALL, O_BOOL) X(lt, K_REAL, O_BOOL)                     \
  X(le, K_REAL, O_BOOL) X(gt, K_REAL, O_BOOL) X(ge, K_REAL, O_BOOL)                   \
  X(logical_and, K_ALL, O_BOOL) X(logical_or, K_ALL, O_BOOL)                          \
  X(logical_xor, K_ALL, O_BOOL) X(bitwise_and, K_INT, O_SAME)                         \
  X(bitwise_or, K_INT, O_SAME) X(bitwise_xor, K_INT, O_SAME)                          \
  X(left_shift, K_INT, O_SAME) X(right_shift, K_INT, O_SAME)

/* where(cond, a, b): cond is bool, a and b (and out) one dtype. clamp(x, lo, hi);
 * lerp(a, b, w); addcmul(a, b, c) = a + b * c; addcdiv(a, b, c) = a + b / c. */
#define CR_TERNARY_OPS(X)                                                             \
  X(where, K_ALL, O_SAME) X(clamp, K_REAL, O_SAME) X(lerp, K_FC, O_SAME)              \
  X(addcmul, K_ALL, O_SAME) X(addcdiv, K_FC, O_SAME)

/* Reductions over the dims of a mask; arg: correction for var/std, p for norm. */
#define CR_REDUCE_OPS(X)                                                              \
  X(sum, K_ALL, O_SAME) X(prod, K_ALL, O_SAME) X(amax, K_REAL, O_SAME)                \
  X(amin, K_REAL, O_SAME) X(mean, K_FC, O_SAME) X(nansum, K_REAL, O_SAME)             \
  X(nanmean, K_FLOAT, O_SAME) X(all, K_ALL, O_BOOL) X(any, K_ALL, O_BOOL)             \
  X(var, K_FC, O_REAL) X(std, K_FC, O_REAL) X(norm, K_FC, O_REAL)                     \
  X(logsumexp, K_FLOAT, O_SAME) X(count_nonzero, K_ALL, O_SAME)

#define CR_ARG_REDUCE_OPS(X) X(argmax, K_REAL, O_SAME) X(argmin, K_REAL, O_SAME)

/* cummax/cummin go through cr_scan_with_indices (values and int64 indices). */
#define CR_SCAN_OPS(X)                                                                \
  X(cumsum, K_ALL, O_SAME) X(cumprod, K_ALL, O_SAME) X(cummax, K_REAL, O_SAME)        \
  X(cummin, K_REAL, O_SAME) X(logcumsumexp, K_FLOAT, O_SAME)

#define CR_SOFTMAX_OPS(X) X(softmax, K_FLOAT, O_SAME) X(log_softmax, K_FLOAT, O_SAME)

/* uniform(low, high), normal(mean, std), bernoulli(p), randint(low, high). */
#define CR_RNG_OPS(X)                                                                 \
  X(uniform, K_FC, O_SAME) X(normal, K_FC, O_SAME) X(bernoulli, K_ALL, O_SAME)        \
  X(randint, K_ALL, O_SAME)

#define CR_ENUM_OP(name, kinds, out) OP_##name,
namespace unary { enum { CR_UNARY_OPS(CR_ENUM_OP) COUNT }; }
namespace binary { enum { CR_BINARY_OPS(CR_ENUM_OP) COUNT }; }
namespace ternary { enum { CR_TERNARY_OPS(CR_ENUM_OP) COUNT }; }
namespace reduce { enum { CR_REDUCE_OPS(CR_ENUM_OP) COUNT }; }
namespace arg_reduce { enum { CR_ARG_REDUCE_OPS(CR_ENUM_OP) COUNT }; }
namespace scan { enum { CR_SCAN_OPS(CR_ENUM_OP) COUNT }; }
namespace softmax { enum { CR_SOFTMAX_OPS(CR_ENUM_OP) COUNT }; }
namespace rng { enum { CR_RNG_OPS(CR_ENUM_OP) COUNT }; }
#undef CR_ENUM_OP

/* One family's table: names, dtype kinds and output rule per op code. */
struct OpFamily {
  const char* family;
  int count;
  const char* const* names;
  const unsigned char* kinds;
  const unsigned char* outs;
};
const OpFamily* op_family(const char* family);
/* 0, or the error for an op code out of range or a dtype kind the op does not take;
 * *out_dtype gets the dtype the output must have. */
int check_op(const char* family, int op, int in_dtype, int* out_dtype);
int dtype_kind(int dt);

}  // namespace cr

#endif  /* CHAINRULE_CUDA_KERNELS_OPS_H_ */
