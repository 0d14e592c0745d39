/* Batched matmul: out = alpha * a @ b + beta * out over broadcast batch dims.
 *
 * Note [matmul paths]
 *   The GPU build calls cuBLAS (cublasGemmStridedBatchedEx) for float16, bfloat16,
 *   float32, float64 and complex when every matrix has a unit stride in one of its two
 *   dims (row- or column-major with any leading dimension) and out is row-major;
 *   cuBLAS is loaded with dlopen at first use (the nvidia-cublas wheel's
 *   nvidia/cu13/lib beside site-packages, then the system), so linking needs no cuBLAS.
 *   Everything else (integer dtypes, layouts cuBLAS cannot take, no cuBLAS found, and
 *   the host build always) runs the kernel below: one work item per output element,
 *   accumulating in the reduction accumulator type (double for floats).
 */
#include "accumulate.h"
#include "any_value.h"
#include "common.h"
#include "scalar_ops.h"

namespace cr {

struct MatGeom {
  Geom<3> batch;  /* batch dims of out, a, b (collapsed) */
  int64_t m, n, k;
  int64_t as0, as1, bs0, bs1, os0, os1;
};

template <class T>
struct MatmulK {
  MatGeom g;
  T* out;
  const T* a;
  const T* b;
  double alpha, beta;
  CR_HD void operator()(const cr_launch_idx& li) const {
    typedef typename Acc<typename Compute<T>::type>::type A;
    const int64_t per = g.m * g.n;
    for (int64_t t = li.global(); t < g.batch.numel * per; t += li.stride()) {
      int64_t bi = t / per, e = t - bi * per, i = e / g.n, j = e - i * g.n, off[3];
      if (g.batch.ndim == 0) off[0] = off[1] = off[2] = 0;
      else g.batch.offsets(bi, off);
      const T* ar = a + off[1] + i * g.as0;
      const T* bc = b + off[2] + j * g.bs1;
      A acc = FromDouble<A>::make(0, 0);
      for (int64_t p = 0; p < g.k; ++p)
        acc = acc + to_acc(load(ar[p * g.as1])) * to_acc(load(bc[p * g.bs0]));
      T* o = out + off[0] + i * g.os0 + j * g.os1;
      A r = scale_acc(acc, alpha);
      if (beta != 0) r = r + scale_acc(to_acc(load(*o)), beta);
      *o = store<T>(r);
    }
  }
};

/* Shapes: a (..., m, k), b (..., k, n), out (..., m, n); batch dims broadcast. */
static int matmul_geom(MatGeom& g, const cr_tensor* out, const cr_tensor* a, const cr_tensor* b) {
  if (out->ndim < 2 || a->ndim < 2 || b->ndim < 2)
    return fail("matmul: operands need at least 2 dims (got out %d, a %d, b %d)", out->ndim,
                a->ndim, b->ndim);
  const int on = out->ndim, an = a->ndim, bn = b->ndim;
  g.m = a->shape[an - 2];
  g.k = a->shape[an - 1];
  g.n = b->shape[bn - 1];
  if (b->shape[bn - 2] != g.k)
    return fail("mat1 and mat2 shapes cannot be multiplied (%lldx%lld and %lldx%lld)",
                (long long)g.m, (long long)g.k, (long long)b->shape[bn - 2], (long long)g.n);
  if (out->shape[on - 2] != g.m || out->shape[on - 1] != g.n)
    return fail("matmul: the output's matrix shape (%lld, %lld) should be (%lld, %lld)",
                (long long)out->shape[on - 2], (long long)out->shape[on - 1], (long long)g.m,
                (long long)g.n);
  g.as0 = a->strides[an - 2]; g.as1 = a->strides[an - 1];
  g.bs0 = b->strides[bn - 2]; g.bs1 = b->strides[bn - 1];
  g.os0 = out->strides[on - 2]; g.os1 = out->strides[on - 1];
  cr_tensor bt[3] = {*out, *a, *b};  /* the batch dims alone */
  for (cr_tensor& t : bt) t.ndim -= 2;
  const cr_tensor* ts[3] = {&bt[0], &bt[1], &bt[2]};
  return build_geom(g.batch, ts);
}

#if CR_DEVICE_BUILD
int cublas_gemm(const MatGeom& g, int dtype, void* out, const void* a, const void* b, double alpha,
                double beta, void* stream);  /* matmul_cublas (below): 0 done, -1 not taken */
#endif

}  // namespace cr

using namespace cr;

extern "C" int cr_matmul(cr_tensor* out, const cr_tensor* a, const cr_tensor* b, double alpha,
                         double beta, void* stream) {
  if (check_tensor(out, "matmul") || check_tensor(a, "matmul") || check_tensor(b, "matmul")) return 1;
  if (a->dtype != b->dtype || out->dtype != a->dtype)
    return fail("expected m1 and m2 to have the same dtype, but got: %s != %s",
                dtype_name(a->dtype), dtype_name(a->dtype != b->dtype ? b->dtype : out->dtype));
  MatGeom g;
  if (matmul_geom(g, out, a, b)) return 1;
  int64_t total = g.batch.numel * g.m * g.n;
  if (total == 0) return 0;
  if (g.k == 0 && beta == 0) return cr_fill(out, 0, 0, stream);
#if CR_DEVICE_BUILD
  int rc = cublas_gemm(g, a->dtype, out->data, a->data, b->data, alpha, beta, stream);
  if (rc >= 0) return rc;
#endif
  CR_DISPATCH(a->dtype, return launch(MatmulK<T>{g, (T*)out->data, (const T*)a->data,
                                                 (const T*)b->data, alpha, beta}, total, stream));
  return 0;
}

#if CR_DEVICE_BUILD
#include <dlfcn.h>

#include <mutex>
#include <string>

#include "runtime/errors.h"

namespace cr {

/* The few cuBLAS declarations used (cublas_api.h is not needed to build). */
typedef void* cublasHandle_t;
typedef int (*CreateFn)(cublasHandle_t*);
typedef int (*SetStreamFn)(cublasHandle_t, cudaStream_t);
typedef int (*GemmStridedBatchedExFn)(cublasHandle_t, int transa, int transb, int m, int n, int k,
                                      const void* alpha, const void* A, int Atype, int lda,
                                      long long strideA, const void* B, int Btype, int ldb,
                                      long long strideB, const void* beta, void* C, int Ctype, int ldc,
                                      long long strideC, int batchCount, int computeType, int algo);
enum { OP_N = 0, OP_T = 1, R_16F = 2, R_16BF = 14, R_32F = 0, R_64F = 1, C_32F = 4, C_64F = 5,
       COMPUTE_32F = 68, COMPUTE_64F = 70, GEMM_DEFAULT = -1 };

struct Cublas {
  std::mutex mu;
  bool tried = false;
  std::string path;
  CreateFn create = nullptr;
  SetStreamFn set_stream = nullptr;
  GemmStridedBatchedExFn gemm = nullptr;
  cublasHandle_t handles[64] = {};
};
static Cublas cublas;

/* Candidate paths: $CHAINRULE_CUDA_CUBLAS, the wheels beside this library's package
 * (site-packages/nvidia/cu13/lib, nvidia/cublas/lib), then the loader's search. */
static void* open_cublas() {
  std::string site;
  Dl_info info;
  if (dladdr((void*)&open_cublas, &info) && info.dli_fname) {
    site = info.dli_fname;
    for (int up = 0; up < 2 && site.rfind('/') != std::string::npos; ++up) site.erase(site.rfind('/'));
  }
  const char* env = getenv("CHAINRULE_CUDA_CUBLAS");
  std::string candidates[] = {env ? env : "", site + "/nvidia/cu13/lib/libcublas.so.13",
                              "libcublas.so.13", "/usr/local/cuda/lib64/libcublas.so.13",
                              site + "/nvidia/cublas/lib/libcublas.so.12", "libcublas.so.12"};
  for (const std::string& c : candidates) {
    if (c.empty()) continue;
    if (void* h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL)) { cublas.path = c; return h; }
  }
  return nullptr;
}

static cublasHandle_t cublas_handle() {
  std::lock_guard<std::mutex> lock(cublas.mu);
  if (!cublas.tried) {
    cublas.tried = true;
    if (void* h = open_cublas()) {
      cublas.create = (CreateFn)dlsym(h, "cublasCreate_v2");
      cublas.set_stream = (SetStreamFn)dlsym(h, "cublasSetStream_v2");
      cublas.gemm = (GemmStridedBatchedExFn)dlsym(h, "cublasGemmStridedBatchedEx");
      if (!cublas.create || !cublas.set_stream || !cublas.gemm) cublas.gemm = nullptr;
    }
  }
  int dev = 0;
  if (!cublas.gemm || cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= 64) return nullptr;
  if (!cublas.handles[dev] && cublas.create(&cublas.handles[dev]) != 0) return nullptr;
  return cublas.handles[dev];
}

/* A matrix (rows x cols, strides s0, s1) as cuBLAS sees it: column-major storage of
 * either the matrix (trans: its transpose is row-major) with leading dimension ld. */
static bool blas_layout(int64_t rows, int64_t cols, int64_t s0, int64_t s1, bool* row_major,
                        int64_t* ld) {
  if ((s1 == 1 || cols == 1) && s0 >= (cols > 1 ? cols : 1)) { *row_major = true; *ld = s0; return true; }
  if ((s0 == 1 || rows == 1) && s1 >= (rows > 1 ? rows : 1)) { *row_major = false; *ld = s1; return true; }
  if (rows == 1) { *row_major = true; *ld = cols > 1 ? cols : 1; return s1 == 1; }
  return false;
}

int cublas_gemm(const MatGeom& g, int dtype, void* out, const void* a, const void* b, double alpha,
                double beta, void* stream) {
  int type, compute;
  switch (dtype) {
    case CR_FLOAT16: type = R_16F; compute = COMPUTE_32F; break;
    case CR_BFLOAT16: type = R_16BF; compute = COMPUTE_32F; break;
    case CR_FLOAT32: type = R_32F; compute = COMPUTE_32F; break;
    case CR_FLOAT64: type = R_64F; compute = COMPUTE_64F; break;
    case CR_COMPLEX64: type = C_32F; compute = COMPUTE_32F; break;
    case CR_COMPLEX128: type = C_64F; compute = COMPUTE_64F; break;
    default: return -1;
  }
  bool a_rm, b_rm, o_rm;
  int64_t lda, ldb, ldo;
  if (!blas_layout(g.m, g.k, g.as0, g.as1, &a_rm, &lda) || !blas_layout(g.k, g.n, g.bs0, g.bs1, &b_rm, &ldb) ||
      !blas_layout(g.m, g.n, g.os0, g.os1, &o_rm, &ldo) || !o_rm || g.batch.ndim > 1)
    return -1;
  const int64_t lim = 2147483647;
  if (g.m > lim || g.n > lim || g.k > lim || lda > lim || ldb > lim || ldo > lim || g.batch.numel > lim)
    return -1;
  int64_t sa = 0, sb = 0, so = 0;
  if (g.batch.ndim == 1) { so = g.batch.strides[0][0]; sa = g.batch.strides[1][0]; sb = g.batch.strides[2][0]; }
  cublasHandle_t h = cublas_handle();
  if (!h) return -1;
  /* Row-major out = a @ b is column-major out^T = b^T @ a^T: cuBLAS's A is b, its B is a. */
  double alpha2[2] = {alpha, 0}, beta2[2] = {beta, 0};
  float alphaf[2] = {(float)alpha, 0}, betaf[2] = {(float)beta, 0};
  const void* al = compute == COMPUTE_64F ? (const void*)alpha2 : (const void*)alphaf;
  const void* be = compute == COMPUTE_64F ? (const void*)beta2 : (const void*)betaf;
  if (cublas.set_stream(h, (cudaStream_t)stream) != 0) return -1;
  int st = cublas.gemm(h, b_rm ? OP_N : OP_T, a_rm ? OP_N : OP_T, (int)g.n, (int)g.m, (int)g.k, al, b, type,
                       (int)ldb, sb, a, type, (int)lda, sa, be, out, type, (int)ldo, so,
                       (int)g.batch.numel, compute, GEMM_DEFAULT);
  if (st != 0) return set_error(CR_ERROR_CUDA, "cuBLAS error %d in cublasGemmStridedBatchedEx", st);
  return 0;
}

}  // namespace cr

extern "C" const char* cr_blas_library(void) {
  cr::cublas_handle();
  return cr::cublas.path.c_str();
}
#else
extern "C" const char* cr_blas_library(void) { return ""; }
#endif
