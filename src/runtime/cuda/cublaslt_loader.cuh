// cuBLASLt, loaded with dlopen the first time a model needs it. Linking it would map its 600 MB
// into every onefit process at start-up (measured: 80 ms added to `onefit fit` on the CPU);
// only the graph path for larger models uses it.
#pragma once
#include <cublasLt.h>
#include <cublas_api.h>
#include <dlfcn.h>

#include <string>

#include "onefit/error.hpp"

namespace onefit::cuda {

struct CublasLtApi {
#define ONEFIT_LT_FUNCTION(name) decltype(&::name) name = nullptr;
    ONEFIT_LT_FUNCTION(cublasLtCreate)
    ONEFIT_LT_FUNCTION(cublasLtDestroy)
    ONEFIT_LT_FUNCTION(cublasLtMatmul)
    ONEFIT_LT_FUNCTION(cublasLtMatmulAlgoGetHeuristic)
    ONEFIT_LT_FUNCTION(cublasLtMatmulDescCreate)
    ONEFIT_LT_FUNCTION(cublasLtMatmulDescDestroy)
    ONEFIT_LT_FUNCTION(cublasLtMatmulDescSetAttribute)
    ONEFIT_LT_FUNCTION(cublasLtMatmulPreferenceCreate)
    ONEFIT_LT_FUNCTION(cublasLtMatmulPreferenceDestroy)
    ONEFIT_LT_FUNCTION(cublasLtMatmulPreferenceSetAttribute)
    ONEFIT_LT_FUNCTION(cublasLtMatrixLayoutCreate)
    ONEFIT_LT_FUNCTION(cublasLtMatrixLayoutDestroy)
#undef ONEFIT_LT_FUNCTION
};

inline const CublasLtApi& cublaslt() {
    static const CublasLtApi api = [] {
        const std::string versioned = "libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR);
        void* lib = dlopen(versioned.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!lib) lib = dlopen("libcublasLt.so", RTLD_NOW | RTLD_LOCAL);
        if (!lib)
            throw Error("device 'cuda': cannot load " + versioned + " (" + dlerror() +
                        "); install the CUDA toolkit's cuBLAS or use --device cpu");
        CublasLtApi a;
        auto bind = [&](auto& fn, const char* name) {
            fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
            if (!fn) throw Error(std::string("device 'cuda': ") + versioned + " lacks " + name);
        };
#define ONEFIT_LT_BIND(name) bind(a.name, #name);
        ONEFIT_LT_BIND(cublasLtCreate)
        ONEFIT_LT_BIND(cublasLtDestroy)
        ONEFIT_LT_BIND(cublasLtMatmul)
        ONEFIT_LT_BIND(cublasLtMatmulAlgoGetHeuristic)
        ONEFIT_LT_BIND(cublasLtMatmulDescCreate)
        ONEFIT_LT_BIND(cublasLtMatmulDescDestroy)
        ONEFIT_LT_BIND(cublasLtMatmulDescSetAttribute)
        ONEFIT_LT_BIND(cublasLtMatmulPreferenceCreate)
        ONEFIT_LT_BIND(cublasLtMatmulPreferenceDestroy)
        ONEFIT_LT_BIND(cublasLtMatmulPreferenceSetAttribute)
        ONEFIT_LT_BIND(cublasLtMatrixLayoutCreate)
        ONEFIT_LT_BIND(cublasLtMatrixLayoutDestroy)
#undef ONEFIT_LT_BIND
        return a;
    }();
    return api;
}

}  // namespace onefit::cuda
