// Libraries the GPU build opens at run time instead of linking (cuBLAS): where to
// find them (cr_set_cublas_path in cr_cuda.h).
#ifndef CHAINRULE_CUDA_RUNTIME_LIBRARIES_H_
#define CHAINRULE_CUDA_RUNTIME_LIBRARIES_H_

namespace cr {

// The cuBLAS library to dlopen: the path the Python loader set (the nvidia-cublas
// wheel's), else "libcublas.so.13" (the system's, by the dynamic loader's search).
const char* cublas_path();

}  // namespace cr

#endif  // CHAINRULE_CUDA_RUNTIME_LIBRARIES_H_
