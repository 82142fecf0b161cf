// Kernel and graph launches as CUPTI sees them, for the CUDA tests and bench/gpu_fit: "one
// launch" is observed from the CUDA runtime and driver, not counted by the library itself.
// Subscribes to the launch calls of both APIs (cudaLaunchKernel, the <<<>>> entry point,
// cuLaunchKernel(Ex) as cuBLASLt calls it, cudaGraphLaunch/cuGraphLaunch). A runtime launch that
// calls the driver's counts once, and a launch made while its thread is capturing a stream into
// a graph does not count: it runs inside that graph's launch, which does.
//
// Header-only, linked with CUPTI (CUDA::cupti) into the test and bench executables only.
#pragma once
#include <cupti.h>

#include <atomic>
#include <stdexcept>
#include <string>

namespace onefit::test_support {

struct LaunchCounts {
    long long kernels = 0, graphs = 0;
    LaunchCounts operator-(const LaunchCounts& o) const { return {kernels - o.kernels, graphs - o.graphs}; }
};

class CuptiLaunches {
public:
    // CUPTI takes one subscriber per process: the first call subscribes, for the process's life.
    static CuptiLaunches& instance() {
        static CuptiLaunches counter;
        return counter;
    }
    LaunchCounts counts() const { return {kernels_.load(), graphs_.load()}; }

private:
    enum class Call { kernel_launch, graph_launch, begin_capture, end_capture };

    CuptiLaunches() {
        check(cuptiSubscribe(&subscriber_, &on_call, this), "cuptiSubscribe");
        for (const auto& [domain, cbid, call] : kCalls) {
            (void)call;
            check(cuptiEnableCallback(1, subscriber_, domain, cbid), "cuptiEnableCallback");
        }
    }

    static void check(CUptiResult r, const char* what) {
        if (r == CUPTI_SUCCESS) return;
        const char* text = "?";
        cuptiGetResultString(r, &text);
        throw std::runtime_error(std::string("CUPTI: ") + what + " failed: " + text);
    }

    struct Watched {
        CUpti_CallbackDomain domain;
        CUpti_CallbackId cbid;
        Call call;
    };
    static constexpr CUpti_CallbackDomain kRt = CUPTI_CB_DOMAIN_RUNTIME_API, kDrv = CUPTI_CB_DOMAIN_DRIVER_API;
    static constexpr Watched kCalls[] = {
        {kRt, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, Call::kernel_launch},
        {kRt, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000, Call::kernel_launch},
        {kRt, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, Call::kernel_launch},
        {kRt, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000, Call::kernel_launch},
        {kRt, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060, Call::kernel_launch},
        {kRt, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060, Call::kernel_launch},
        {kRt, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000, Call::kernel_launch},
        {kRt, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000, Call::kernel_launch},
        {kRt, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, Call::graph_launch},
        {kRt, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000, Call::graph_launch},
        {kRt, CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000, Call::begin_capture},
        {kRt, CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_ptsz_v10000, Call::begin_capture},
        {kRt, CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_v10000, Call::end_capture},
        {kRt, CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_ptsz_v10000, Call::end_capture},
        {kDrv, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, Call::kernel_launch},
        {kDrv, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz, Call::kernel_launch},
        {kDrv, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, Call::kernel_launch},
        {kDrv, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz, Call::kernel_launch},
        {kDrv, CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel, Call::kernel_launch},
        {kDrv, CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz, Call::kernel_launch},
        {kDrv, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, Call::graph_launch},
        {kDrv, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz, Call::graph_launch},
        {kDrv, CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture, Call::begin_capture},
        {kDrv, CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2, Call::begin_capture},
        {kDrv, CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_ptsz, Call::begin_capture},
        {kDrv, CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2_ptsz, Call::begin_capture},
        {kDrv, CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture, Call::end_capture},
        {kDrv, CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture_ptsz, Call::end_capture},
    };

    static void CUPTIAPI on_call(void* self, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
        thread_local int launch_depth = 0;   // inside a counted launch call (the runtime's calls the driver's)
        thread_local bool capturing = false;  // this thread is capturing (onefit captures thread-locally)
        const auto* cb = static_cast<const CUpti_CallbackData*>(data);
        const bool enter = cb->callbackSite == CUPTI_API_ENTER;
        for (const Watched& w : kCalls) {
            if (w.domain != domain || w.cbid != cbid) continue;
            auto& counter = *static_cast<CuptiLaunches*>(self);
            switch (w.call) {
                case Call::begin_capture:  // cudaError_t and CUresult both use 0 for success
                    if (!enter && *static_cast<const int*>(cb->functionReturnValue) == 0) capturing = true;
                    break;
                case Call::end_capture:
                    if (enter) capturing = false;
                    break;
                case Call::kernel_launch:
                case Call::graph_launch:
                    if (!enter) {
                        --launch_depth;
                    } else if (launch_depth++ == 0 && !capturing) {
                        ++(w.call == Call::kernel_launch ? counter.kernels_ : counter.graphs_);
                    }
                    break;
            }
            return;
        }
    }

    CUpti_SubscriberHandle subscriber_{};
    std::atomic<long long> kernels_{0}, graphs_{0};
};

}  // namespace onefit::test_support
