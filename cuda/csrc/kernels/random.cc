/* Counter-based random numbers: Philox 4x32-10 (Salmon et al., "Parallel random
 * numbers: as easy as 1, 2, 3", SC 2011).
 *
 * Note [random streams]
 *   Element e (its C-order index in out, whatever out's strides) of a call with
 *   (seed, offset) takes the Philox block of key (seed) and counter (e, offset): four
 *   32-bit words that depend on nothing else, so the GPU and the host build produce the
 *   same numbers (up to the last bit of log/cos in normal), any launch shape gives the
 *   same result, and a call with a new offset draws a fresh stream (the Python side
 *   advances offset by one per call).
 */
#include "common.h"
#include "scalar_ops.h"

namespace cr {

struct Philox4 { uint32_t x[4]; };

CR_HD inline uint32_t mulhilo(uint32_t a, uint32_t b, uint32_t* hi) {
  uint64_t p = (uint64_t)a * b;
  *hi = (uint32_t)(p >> 32);
  return (uint32_t)p;
}

CR_HD inline Philox4 philox(uint64_t seed, uint64_t c_lo, uint64_t c_hi) {
  uint32_t c[4] = {(uint32_t)c_lo, (uint32_t)(c_lo >> 32), (uint32_t)c_hi, (uint32_t)(c_hi >> 32)};
  uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    uint32_t hi0, hi1;
    uint32_t lo0 = mulhilo(0xD2511F53u, c[0], &hi0), lo1 = mulhilo(0xCD9E8D57u, c[2], &hi1);
    uint32_t n0 = hi1 ^ c[1] ^ k0, n2 = hi0 ^ c[3] ^ k1;
    c[0] = n0; c[1] = lo1; c[2] = n2; c[3] = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return Philox4{{c[0], c[1], c[2], c[3]}};
}

/* A double in [0, 1) from 53 random bits of two words. */
CR_HD inline double unit(uint32_t a, uint32_t b) {
  return ((double)(a >> 5) * 67108864.0 + (double)(b >> 6)) * (1.0 / 9007199254740992.0);
}

/* a + b * c rounded twice, never fused into one FMA (nvcc contracts by default), so
 * uniform numbers are bit-identical on the GPU and the host. */
CR_HD inline double add_mul_unfused(double a, double b, double c) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, __dmul_rn(b, c));
#else
  return a + b * c;
#endif
}

template <class T>
struct RandomK {
  Geom<1> g;
  T* out;
  uint64_t seed, offset;
  int op;
  double a0, a1;
  CR_HD void operator()(const cr_launch_idx& li) const {
    typedef typename Compute<T>::type C;
    for (int64_t i = li.global(); i < g.numel; i += li.stride()) {
      int64_t o;
      g.offsets(i, &o);
      Philox4 r = philox(seed, (uint64_t)i, offset);
      double re = 0, im = 0;
      switch (op) {
        case rng::OP_uniform:
          re = add_mul_unfused(a0, a1 - a0, unit(r.x[0], r.x[1]));
          im = add_mul_unfused(a0, a1 - a0, unit(r.x[2], r.x[3]));
          break;
        case rng::OP_normal: {
          double rad = sqrt(-2.0 * log(1.0 - unit(r.x[0], r.x[1]))),
                 ang = 6.283185307179586 * unit(r.x[2], r.x[3]);
          double s = IsComplex<C>::value ? a1 * 0.7071067811865476 : a1;
          re = a0 + s * rad * cos(ang);
          im = s * rad * sin(ang);
          break;
        }
        case rng::OP_bernoulli: re = unit(r.x[0], r.x[1]) < a0 ? 1 : 0; break;
        default: {  /* randint in [low, high) */
          uint64_t range = (uint64_t)(float_to_int(a1) - float_to_int(a0));
          uint64_t bits = ((uint64_t)r.x[0] << 32) | r.x[1];
          int64_t v = float_to_int(a0) + (int64_t)(range ? bits % range : 0);
          out[o] = store<T>(v);
          continue;
        }
      }
      out[o] = store<T>(FromDouble<C>::make(re, IsComplex<C>::value ? im : 0));
    }
  }
};

}  // namespace cr

using namespace cr;

extern "C" int cr_random(int op, cr_tensor* out, uint64_t seed, uint64_t offset, double arg0,
                         double arg1, void* stream) {
  int want;
  if (check_tensor(out, "random") || check_op("rng", op, out->dtype, &want)) return 1;
  if (op == rng::OP_randint && !(arg1 > arg0))
    return fail("random_ expects 'from' to be less than 'to', but got from=%g >= to=%g", arg0, arg1);
  if (op == rng::OP_bernoulli && !(arg0 >= 0 && arg0 <= 1))
    return fail("bernoulli_ expects p to be in [0, 1], but got p=%g", arg0);
  if (op == rng::OP_normal && !(arg1 >= 0)) return fail("normal expects std >= 0.0, but found std %g", arg1);
  Geom<1> g;
  const cr_tensor* ts[1] = {out};
  if (build_geom(g, ts)) return 1;
  CR_DISPATCH(out->dtype, return launch(RandomK<T>{g, (T*)out->data, seed, offset, op, arg0, arg1},
                                        g.numel, stream));
  return 0;
}
