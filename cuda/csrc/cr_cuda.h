/* chainrule-cuda: the C ABI between the CUDA library and its Python side.
 *
 * Note [one C ABI, two builds]
 *   The same sources build twice: with nvcc into libchainrule_cuda.so (the GPU), and
 *   with the host compiler into libchainrule_cuda_host.so, where device memory is host
 *   memory and a host launcher runs every kernel body over the same grid and block
 *   indexing (CI has no GPU; this is how every kernel is proven there). Python loads
 *   either one with ctypes (a plain C ABI does not depend on the Python version), so
 *   everything above this header is the same code in both.
 *
 * Conventions: every function returns 0 on success or a nonzero error code, and then
 * cr_last_error() holds the message (per thread). Streams and events are opaque
 * handles; NULL is the default stream. Strides are in elements, not bytes. Work is
 * queued on `stream` and returns before it finishes (the host build runs it at once).
 */
#ifndef CHAINRULE_CUDA_CR_CUDA_H_
#define CHAINRULE_CUDA_CR_CUDA_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CR_EXPORT __attribute__((visibility("default")))
#define CR_MAX_DIMS 16

/* dtype codes; the Python side maps NumPy / ml_dtypes dtypes onto these. */
enum cr_dtype {
  CR_BOOL = 0, CR_UINT8, CR_INT8, CR_INT16, CR_INT32, CR_INT64,
  CR_FLOAT16, CR_BFLOAT16, CR_FLOAT32, CR_FLOAT64, CR_COMPLEX64, CR_COMPLEX128,
  CR_NUM_DTYPES
};

/* A strided view of device memory: any layout, broadcasting by stride 0. */
typedef struct cr_tensor {
  void* data;                     /* address of element [0, ..., 0] */
  int32_t dtype;                  /* enum cr_dtype */
  int32_t ndim;                   /* 0 ... CR_MAX_DIMS */
  int64_t shape[CR_MAX_DIMS];
  int64_t strides[CR_MAX_DIMS];   /* in elements; may be 0 or negative */
} cr_tensor;

/* ---- errors and availability (runtime) ---------------------------------------- */
CR_EXPORT const char* cr_last_error(void);
CR_EXPORT int cr_is_emulated(void);              /* 1 in the host build */
/* Why no GPU can be used ("no NVIDIA driver ...", "no CUDA device ..."), or NULL. */
CR_EXPORT const char* cr_unavailable_reason(void);
CR_EXPORT int cr_device_count(int* count);
CR_EXPORT int cr_set_device(int device);
CR_EXPORT int cr_get_device(int* device);
CR_EXPORT int cr_device_synchronize(void);
CR_EXPORT int cr_device_name(int device, char* buf, size_t len);

/* ---- streams and events (runtime) -------------------------------------------- */
CR_EXPORT int cr_stream_create(void** stream, int priority);
CR_EXPORT int cr_stream_destroy(void* stream);
CR_EXPORT int cr_stream_synchronize(void* stream);
CR_EXPORT int cr_stream_query(void* stream, int* done);
CR_EXPORT int cr_stream_wait_event(void* stream, void* event);
CR_EXPORT int cr_event_create(void** event, int enable_timing);
CR_EXPORT int cr_event_destroy(void* event);
CR_EXPORT int cr_event_record(void* event, void* stream);
CR_EXPORT int cr_event_synchronize(void* event);
CR_EXPORT int cr_event_query(void* event, int* done);
CR_EXPORT int cr_event_elapsed_ms(void* start, void* end, float* ms);

/* ---- memory (runtime; the caching allocator) ---------------------------------- */
CR_EXPORT int cr_alloc(int device, size_t nbytes, void* stream, void** ptr);
CR_EXPORT int cr_free(void* ptr);
CR_EXPORT int cr_record_stream(void* ptr, void* stream);
/* out[0..5]: allocated, max_allocated, reserved, max_reserved, alloc_count, free_count */
CR_EXPORT int cr_memory_stats(int device, int64_t* out);
CR_EXPORT int cr_reset_peak_memory_stats(int device);
CR_EXPORT int cr_empty_cache(void);
/* kind: 0 host->device, 1 device->host, 2 device->device, 3 host->host */
CR_EXPORT int cr_memcpy(void* dst, const void* src, size_t nbytes, int kind, void* stream);
CR_EXPORT int cr_host_alloc_pinned(void** ptr, size_t nbytes);
CR_EXPORT int cr_host_free_pinned(void* ptr);

/* ---- runtime additions (cuda-runtime) ----------------------------------------- */
/* Status codes (every nonzero return is one of these; the message is cr_last_error()). */
enum cr_status {
  CR_SUCCESS = 0,
  CR_ERROR_INVALID_VALUE = 1,   /* bad argument: Python raises ValueError/RuntimeError */
  CR_ERROR_OUT_OF_MEMORY = 2,   /* the allocator's "CUDA out of memory" (OutOfMemoryError) */
  CR_ERROR_CUDA = 3,            /* a CUDA runtime call failed; the message names it */
  CR_ERROR_UNAVAILABLE = 4,     /* no usable GPU (see cr_unavailable_reason) */
  CR_ERROR_NOT_SUPPORTED = 5    /* not in this build (e.g. a testing hook on the GPU) */
};
CR_EXPORT int cr_device_capability(int device, int* major, int* minor);
CR_EXPORT int cr_mem_get_info(int device, size_t* free_bytes, size_t* total_bytes);
/* The allocator's counters as torch.cuda.memory_stats names them: cr_memory_stat_names()
 * is their names, comma separated, in the order cr_memory_stats_all writes them. */
CR_EXPORT const char* cr_memory_stat_names(void);
CR_EXPORT int cr_memory_stats_all(int device, int64_t* out, int capacity);
CR_EXPORT int cr_reset_accumulated_memory_stats(int device);
/* The caching allocator of `device` reserves at most fraction x total memory (the
 * reference's set_per_process_memory_fraction; 1.0 by default). */
CR_EXPORT int cr_set_memory_fraction(int device, double fraction);
CR_EXPORT int cr_get_memory_fraction(int device, double* fraction);
CR_EXPORT int cr_host_is_pinned(const void* ptr, int* pinned);
/* Frees the cached pinned host blocks nobody uses (cr_host_free_pinned caches them). */
CR_EXPORT int cr_host_empty_cache(void);
/* Testing hooks (CI's proof of the allocator without a GPU):
 * cr_testing_set_fake_capacity gives `device` a fresh caching allocator over a fake
 * device memory of `bytes` (host memory with that capacity; a fake device in place must
 * be empty, its cache is freed); bytes < 0 restores the real one. Allocations made
 * before stay valid and go back to the allocator they came from.
 * cr_testing_hold_stream (host build only): while held, work "queued" on the stream is
 * not done (events recorded on it stay pending; queries say not ready); releasing it,
 * or synchronizing it, the event or the device, completes that work. */
CR_EXPORT int cr_testing_set_fake_capacity(int device, int64_t bytes);
CR_EXPORT int cr_testing_hold_stream(void* stream, int hold);

/* ---- stream log (cuda-streams; Note [stream log] in runtime/stream_log.h) -------- *
 * Host build only (the GPU build: CR_ERROR_NOT_SUPPORTED). cr_testing_stream_log(1)
 * clears the log and starts it, (0) stops it. While on, every kernel launch, memcpy,
 * event record and stream wait appends (kind, device, stream, event): kind 0 kernel,
 * 1 event record, 2 stream waits for event, 3 memcpy; stream as passed (NULL: the
 * default stream of `device`, the current device then); event 0 for kernels and
 * copies. cr_testing_stream_log_read writes min(capacity, count) rows of 4 int64 and
 * sets *count to the number of entries. */
CR_EXPORT int cr_testing_stream_log(int on);
CR_EXPORT int cr_testing_stream_log_read(int64_t* out, int capacity, int* count);

/* ---- kernels (cuda-kernels: kernels/, launch.h) --------------------------------- *
 * Operands align to out's shape from the right; a dim of size 1 (or a missing leading
 * dim) broadcasts, like NumPy; any strides (0, negative, non-contiguous), size 0, 0-d.
 * Each op takes the dtype kinds kernels/ops.h lists for it; another kind is the error
 * '"<op>" not implemented for '<dtype>'' — type promotion is the caller's (cast first,
 * e.g. int -> float for exp, as NumPy's type resolution does). Kernels run on `stream`
 * and do not synchronize, except the checked-index ones (Note [index errors]).
 *
 * Op names per family, comma separated, in code order: Python maps name -> code
 * from these, so the numbering lives only in the C++ sources. family: "unary",
 * "binary", "ternary", "reduce", "arg_reduce", "scan", "softmax", "rng". */
CR_EXPORT const char* cr_op_names(const char* family);

/* out = real + imag*i converted to out's dtype (bool: nonzero). */
CR_EXPORT int cr_fill(cr_tensor* out, double real, double imag, void* stream);
/* Strided copy with dtype conversion; `in` broadcasts to out's shape by stride 0. */
CR_EXPORT int cr_copy(cr_tensor* out, const cr_tensor* in, void* stream);
/* Element-wise. Inputs broadcast to out's shape and have one common dtype; out has
 * that dtype, or bool for predicates and comparisons, or the real dtype for abs/real/
 * imag/angle of complex. unary arg: the scalar of *_scalar ops and clamp_min/max,
 * decimals of round, slope of leaky_relu, alpha of elu. ternary: where(cond: bool,
 * a, b), clamp(x, lo, hi), lerp(a, b, w), addcmul/addcdiv(a, b, c) = a + b*c, a + b/c. */
CR_EXPORT int cr_unary(int op, cr_tensor* out, const cr_tensor* in, double arg, void* stream);
CR_EXPORT int cr_binary(int op, cr_tensor* out, const cr_tensor* a, const cr_tensor* b, void* stream);
CR_EXPORT int cr_ternary(int op, cr_tensor* out, const cr_tensor* a, const cr_tensor* b,
                         const cr_tensor* c, void* stream);
/* Reductions: out has in's ndim with the reduced dims (bits of dims_mask) of size 1;
 * mask 0 reduces nothing (a converting copy). arg: correction of var/std, p of norm
 * (0, 1, 2, inf, -inf, any). The result is converted to out's dtype, which may differ
 * from in's (int64 sums of ints, bool for all/any, real for var/std/norm of complex).
 * amax/amin of an empty dim is an error; sum 0, prod 1, mean NaN, logsumexp -inf.
 * arg_reduce: values (NULL or any dtype) and int64 indices have in's ndim with size 1
 * at dim; first index wins ties, NaN wins. scan: out (any dtype) has in's shape. */
CR_EXPORT int cr_reduce(int op, cr_tensor* out, const cr_tensor* in, uint64_t dims_mask,
                        double arg, void* stream);
CR_EXPORT int cr_arg_reduce(int op, cr_tensor* values, cr_tensor* indices,
                            const cr_tensor* in, int dim, void* stream);
CR_EXPORT int cr_scan(int op, cr_tensor* out, const cr_tensor* in, int dim, void* stream);
/* cummax/cummin: values (out) and the int64 index of each running extreme. */
CR_EXPORT int cr_scan_with_indices(int op, cr_tensor* values, cr_tensor* indices,
                                   const cr_tensor* in, int dim, void* stream);
/* Stable sort along dim (NaN last, first when descending): values (in's dtype) and/or
 * int64 indices (either may be NULL), both of in's shape; real dtypes. */
CR_EXPORT int cr_sort(cr_tensor* values, cr_tensor* indices, const cr_tensor* in, int dim,
                      int descending, void* stream);
/* The coordinates of in's nonzero elements in C order (np.argwhere): out is int64
 * (n, in.ndim) with n from a count_nonzero reduction (rows beyond n are not written). */
CR_EXPORT int cr_nonzero(cr_tensor* out, const cr_tensor* in, void* stream);
/* softmax / log_softmax along dim: float dtypes, out of in's shape and dtype. */
CR_EXPORT int cr_softmax(int op, cr_tensor* out, const cr_tensor* in, int dim, void* stream);
/* out = alpha * a @ b + beta * out over broadcast batch dims ((..., m, k) @ (..., k, n)),
 * one dtype (any); beta = 0 ignores out's contents. cuBLAS on the GPU for float and
 * complex dtypes (loaded at run time), else the kernel's own loop (Note [matmul paths]). */
CR_EXPORT int cr_matmul(cr_tensor* out, const cr_tensor* a, const cr_tensor* b,
                        double alpha, double beta, void* stream);
/* The cuBLAS library cr_matmul loaded (Note [matmul paths]), or "" (none found, or the
 * host build: then matmul runs its own kernel). */
CR_EXPORT const char* cr_blas_library(void);
/* Indexing; index tensors are int64 and are checked: an index outside [0, size) is the
 * error "index I is out of bounds for dimension D with size S" (index_select: "index
 * out of range in self"); wrap negative indices first. gather: out and index have one
 * shape, in covers it apart from dim. scatter_add / index_add accumulate into out.
 * index_select / index_add: index is 1-D (or 0-d), its length is the walked tensor's
 * size along dim. masked_fill: mask is bool and broadcasts. im2col: in is (N, C, H, W),
 * cols (N, C*kh*kw, oh*ow); kernel/stride/padding/dilation are 2 int64 each (h, w).
 * col2im writes out (N, C, H, W) = the sum of the columns that read each pixel. */
CR_EXPORT int cr_gather(cr_tensor* out, const cr_tensor* in, int dim, const cr_tensor* index, void* stream);
CR_EXPORT int cr_scatter_add(cr_tensor* out, int dim, const cr_tensor* index, const cr_tensor* src, void* stream);
CR_EXPORT int cr_index_select(cr_tensor* out, const cr_tensor* in, int dim, const cr_tensor* index, void* stream);
CR_EXPORT int cr_index_add(cr_tensor* out, int dim, const cr_tensor* index, const cr_tensor* src, void* stream);
CR_EXPORT int cr_masked_fill(cr_tensor* out, const cr_tensor* mask, double real, double imag, void* stream);
CR_EXPORT int cr_im2col(cr_tensor* cols, const cr_tensor* in, const int64_t* kernel, const int64_t* stride,
                        const int64_t* padding, const int64_t* dilation, void* stream);
CR_EXPORT int cr_col2im(cr_tensor* out, const cr_tensor* cols, const int64_t* kernel, const int64_t* stride,
                        const int64_t* padding, const int64_t* dilation, void* stream);
/* Counter-based random numbers (Philox; Note [random streams]): the same (seed, offset)
 * gives the same values on the GPU and in the host build, whatever out's strides.
 * Element e uses counter (e, offset): advance offset by one per call. arg0/arg1:
 * uniform low/high, normal mean/std (complex: std split over re/im), bernoulli p,
 * randint low/high ([low, high)). */
CR_EXPORT int cr_random(int op, cr_tensor* out, uint64_t seed, uint64_t offset,
                        double arg0, double arg1, void* stream);

#ifdef __cplusplus
}
#endif
#endif  /* CHAINRULE_CUDA_CR_CUDA_H_ */
