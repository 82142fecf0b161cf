// Every CUDA and cuBLAS call is checked; a failure becomes onefit::Error naming the call, the
// file and the line, caught at the CLI boundary like any other error.
#pragma once
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <memory>
#include <string>

#include "onefit/error.hpp"

namespace onefit::cuda {

inline void check_cuda(cudaError_t status, const char* call, const char* file, int line) {
    if (status == cudaSuccess) return;
    throw Error(std::string("CUDA error in ") + call + " at " + file + ":" + std::to_string(line) + ": " +
                cudaGetErrorString(status));
}

inline void check_cublas(cublasStatus_t status, const char* call, const char* file, int line) {
    if (status == CUBLAS_STATUS_SUCCESS) return;
    throw Error(std::string("cuBLAS error in ") + call + " at " + file + ":" + std::to_string(line) + ": status " +
                std::to_string(static_cast<int>(status)));
}

// Device memory freed with its owner, also when a constructor throws half-way.
struct CudaFree {
    void operator()(void* p) const { cudaFree(p); }
};
template <class T>
using DeviceMemory = std::unique_ptr<T, CudaFree>;

}  // namespace onefit::cuda

#define ONEFIT_CUDA_CHECK(call) ::onefit::cuda::check_cuda((call), #call, __FILE__, __LINE__)
#define ONEFIT_CUBLAS_CHECK(call) ::onefit::cuda::check_cublas((call), #call, __FILE__, __LINE__)
// After every <<<...>>>: a launch reports a bad configuration only through cudaGetLastError.
#define ONEFIT_CUDA_CHECK_LAUNCH() ONEFIT_CUDA_CHECK(cudaGetLastError())
