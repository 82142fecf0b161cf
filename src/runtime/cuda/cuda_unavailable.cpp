// Stand-ins used when onefit is built without nvcc: the CUDA device is reported unavailable.
#ifndef ONEFIT_HAVE_CUDA
#include "onefit/error.hpp"
#include "runtime/cuda/cuda_fit.hpp"

namespace onefit::cuda {

bool available(std::string* why) {
    if (why) *why = "onefit was built without the CUDA backend (nvcc not found at configure time)";
    return false;
}
std::string describe() { return "no CUDA backend in this build"; }
std::unique_ptr<DeviceProgram> make_cuda_fit(TrainingProgram&, const FitPlan&, const std::vector<nn::Metric>&) {
    throw Error("device 'cuda' is not available: onefit was built without the CUDA backend; use --device cpu");
}
std::vector<MemberResult> fit_members(const std::vector<TrainingProgram*>&, const std::vector<FitPlan>&,
                                      const std::vector<nn::Metric>&, int64_t, int64_t) {
    throw Error("device 'cuda' is not available: onefit was built without the CUDA backend; use --device cpu");
}
double device_milliseconds() { return 0.0; }

}  // namespace onefit::cuda
#endif
