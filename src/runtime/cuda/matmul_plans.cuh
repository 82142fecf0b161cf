// The graph path's cuBLASLt products: row-major C[M,N] = op(A) op(B) (+ a bias per column of C in
// the epilogue), beta 0. The operation descriptor, the three layouts and the heuristic's
// algorithm are built once per distinct product (shape, leading dimensions, bias pointer,
// operand alignments) and kept: the first capture of a graph builds them, every later capture
// only calls cublasLtMatmul.
#pragma once
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <compare>
#include <cstdint>
#include <map>
#include <string>

#include "runtime/cuda/cublaslt_loader.cuh"
#include "runtime/cuda/cuda_check.cuh"
#include "runtime/cuda/device_layout.hpp"

namespace onefit::cuda {

class MatmulPlans {
public:
    explicit MatmulPlans(cudaStream_t stream) : stream_(stream) {
        ONEFIT_CUBLAS_CHECK(cublaslt().cublasLtCreate(&lt_));
        ONEFIT_CUDA_CHECK(cudaMalloc(&workspace_, workspace_bytes_));
    }
    MatmulPlans(const MatmulPlans&) = delete;
    MatmulPlans& operator=(const MatmulPlans&) = delete;
    ~MatmulPlans() {
        for (auto& [key, plan] : plans_) destroy(plan);
        if (workspace_) cudaFree(workspace_);
        if (lt_) cublaslt().cublasLtDestroy(lt_);
    }

    // Enqueues C = op(A) op(B) (+ bias) on the stream. Returns whether the bias was added: false
    // when cuBLASLt has no epilogue for this bias pointer's alignment (the caller adds it).
    bool run(bool trans_a, bool trans_b, int m, int n, int k, const float* a, int lda, const float* b, int ldb,
             float* c, int ldc, const float* bias) {
        const Key key{trans_a, trans_b, m, n, k, lda, ldb, ldc, reinterpret_cast<uintptr_t>(bias),
                      address_alignment(a), address_alignment(b), address_alignment(c)};
        auto it = plans_.find(key);
        if (it == plans_.end()) it = plans_.emplace(key, build(key, bias)).first;
        const Plan& p = it->second;
        const float one = 1.0f, zero = 0.0f;
        // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: the operands swap.
        ONEFIT_CUBLAS_CHECK(cublaslt().cublasLtMatmul(lt_, p.op, &one, b, p.la, a, p.lb, &zero, c, p.lc, c, p.lc,
                                                      &p.algo, workspace_, workspace_bytes_, stream_));
        return bias == nullptr || p.bias_fused;
    }

private:
    struct Key {
        bool trans_a, trans_b;
        int m, n, k, lda, ldb, ldc;
        uintptr_t bias;
        uint32_t align_a, align_b, align_c;
        auto operator<=>(const Key&) const = default;
    };
    struct Plan {
        cublasLtMatmulDesc_t op = nullptr;
        cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
        cublasLtMatmulAlgo_t algo{};
        bool bias_fused = false;
    };

    static void destroy(Plan& p) {
        if (p.lc) cublaslt().cublasLtMatrixLayoutDestroy(p.lc);
        if (p.lb) cublaslt().cublasLtMatrixLayoutDestroy(p.lb);
        if (p.la) cublaslt().cublasLtMatrixLayoutDestroy(p.la);
        if (p.op) cublaslt().cublasLtMatmulDescDestroy(p.op);
        p = Plan{};
    }

    Plan build(const Key& key, const float* bias) {
        Plan p;
        try {
            if (bias && try_build(key, bias, p)) return p;
            destroy(p);
            if (!try_build(key, nullptr, p))
                throw Error("cuBLASLt found no algorithm for a " + std::to_string(key.m) + "x" + std::to_string(key.n) +
                            "x" + std::to_string(key.k) + " product (operand alignments " +
                            std::to_string(key.align_a) + ", " + std::to_string(key.align_b) + ", " +
                            std::to_string(key.align_c) + " bytes)");
            return p;
        } catch (...) {
            destroy(p);
            throw;
        }
    }

    // Descriptors for the product (the bias in the epilogue when given); false when the
    // heuristic has no algorithm for them.
    bool try_build(const Key& key, const float* bias, Plan& p) {
        ONEFIT_CUBLAS_CHECK(cublaslt().cublasLtMatmulDescCreate(&p.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
        const cublasOperation_t ta = key.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, tb = key.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
        ONEFIT_CUBLAS_CHECK(cublaslt().cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
        ONEFIT_CUBLAS_CHECK(cublaslt().cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
        if (bias) {
            const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
            ONEFIT_CUBLAS_CHECK(cublaslt().cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                                                          sizeof epilogue));
            // The heuristic reads the bias pointer's alignment from here.
            ONEFIT_CUBLAS_CHECK(cublaslt().cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                                                          sizeof bias));
        }
        // Column-major shapes: A' = op(B)^T (n x k), B' = op(A)^T (k x m), C' = C^T (n x m).
        const int m = key.m, n = key.n, k = key.k;
        ONEFIT_CUBLAS_CHECK(cublaslt().cublasLtMatrixLayoutCreate(&p.la, CUDA_R_32F, key.trans_b ? k : n,
                                                                  key.trans_b ? n : k, key.ldb));
        ONEFIT_CUBLAS_CHECK(cublaslt().cublasLtMatrixLayoutCreate(&p.lb, CUDA_R_32F, key.trans_a ? m : k,
                                                                  key.trans_a ? k : m, key.lda));
        ONEFIT_CUBLAS_CHECK(cublaslt().cublasLtMatrixLayoutCreate(&p.lc, CUDA_R_32F, n, m, key.ldc));
        cublasLtMatmulPreference_t pref = nullptr;
        ONEFIT_CUBLAS_CHECK(cublaslt().cublasLtMatmulPreferenceCreate(&pref));
        // cuBLASLt assumes 256-byte aligned operands unless told: a layer's weights inside the
        // parameters (and their gradients) are only as aligned as their offset.
        const uint32_t align[4] = {key.align_b, key.align_a, key.align_c, key.align_c};  // A', B', C, D
        const cublasLtMatmulPreferenceAttributes_t which[4] = {
            CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
            CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
        cublasLtMatmulHeuristicResult_t heuristic{};
        int found = 0;
        cublasStatus_t status = cublaslt().cublasLtMatmulPreferenceSetAttribute(
            pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes_, sizeof workspace_bytes_);
        for (int i = 0; i < 4 && status == CUBLAS_STATUS_SUCCESS; ++i)
            status = cublaslt().cublasLtMatmulPreferenceSetAttribute(pref, which[i], &align[i], sizeof align[i]);
        if (status == CUBLAS_STATUS_SUCCESS)
            status = cublaslt().cublasLtMatmulAlgoGetHeuristic(lt_, p.op, p.la, p.lb, p.lc, p.lc, pref, 1, &heuristic,
                                                               &found);
        cublaslt().cublasLtMatmulPreferenceDestroy(pref);
        // NOT_SUPPORTED: no algorithm for these descriptors (e.g. the bias's alignment).
        if (status == CUBLAS_STATUS_NOT_SUPPORTED) return false;
        ONEFIT_CUBLAS_CHECK(status);
        p.algo = heuristic.algo;
        p.bias_fused = bias != nullptr;
        return found > 0;
    }

    cudaStream_t stream_;
    cublasLtHandle_t lt_ = nullptr;
    void* workspace_ = nullptr;
    size_t workspace_bytes_ = 32u << 20;
    std::map<Key, Plan> plans_;
};

}  // namespace onefit::cuda
