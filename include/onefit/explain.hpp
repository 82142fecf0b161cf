// Explaining a fit: where its time went, how much arithmetic it did, what it would cost on each
// device, and what in its set-up is probably a mistake. Used by `onefit explain` and
// `onefit fit --profile`; docs/explain.md describes the output and the cost model.
//
// Cost model (one formula for every device, numbers per device):
//   time = fixed + program_calls * launch + dispatches * per_step_overhead + layer_calls * per_call_overhead
//          + small-layer flops / flops_per_second + BLAS-layer flops / blas_flops_per_second
//          + bytes / bytes_per_second
// where fixed = start-up + data_bytes / transfer_bytes_per_second. A GPU runs a fit whose state
// fits one block's shared memory as one persistent kernel (src/runtime/cuda): it pays a launch
// per program call, a block-wide step cost per dispatch instead of per-launch costs, and
// computes at one block's rate; larger fits run as CUDA graphs, paying per kernel node.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "onefit/callbacks.hpp"
#include "onefit/device.hpp"
#include "onefit/model.hpp"
#include "onefit/optimizers.hpp"
#include "onefit/sweep.hpp"
#include "onefit/tensor.hpp"

namespace onefit {

// ---- Work accounting ----

// Arithmetic and memory traffic of one optimizer step over a batch.
//   forward  = 2 * MACs per sample * batch            (a multiply-add is 2 flops)
//   backward = 2 * forward - 2 * first-layer MACs * batch
//              (dX and dW: one product each, but the first Dense layer needs no dX)
//   optimizer = 10 flops per parameter               (Adam's update is ~10; SGD fewer, same order)
//   bytes = 4 * (params * (3 + 3 + 2 * slots) + batch * (input + 3 * activations))
//           parameters read forward and backward and gradients written (3); the update reads
//           the parameter and its gradient, writes the parameter, and reads and writes each
//           state slot the optimizer keeps (Adam 2, amsgrad 3; SGD 0, with momentum 1);
//           activations written forward, read and their gradients written backward.
struct StepWork {
    int64_t batch_size = 0, params = 0, forward_macs_per_sample = 0, dense_layers = 0;
    int64_t input_width = 0, activation_width = 0;
    int64_t first_layer_macs_per_sample = 0;  // the first Dense layer's (no input gradient)
    int optimizer_slots = 0;                  // state floats per parameter
    double blas_fraction = 0;  // of the MACs, those in layers large enough for the BLAS library
    double forward_flops = 0, backward_flops = 0, optimizer_flops = 0, flops = 0;
    double bytes = 0;
    std::string gpu_unsupported;  // why the CUDA backend cannot run the model (empty: it can)
    // Values per sample that the ops other than the products move, forward and backward:
    // im2col/col2im, pooling windows, normalisation, dropout, reshapes. Their loops cost per value
    // (short spans, index arithmetic), not per flop or per byte of bandwidth.
    double moved_values_forward = 0, moved_values_backward = 0;
};

// The arithmetic core, from plain sizes; activation_width = the sum of every layer's output width.
StepWork step_work(int64_t forward_macs_per_sample, int64_t first_layer_macs_per_sample, int64_t params,
                   int64_t dense_layers, int64_t input_width, int64_t activation_width, int optimizer_slots,
                   int64_t batch_size);
StepWork step_work(const Sequential& model, int64_t batch_size);  // model must be compiled

// A whole fit: training steps plus forward-only validation passes each epoch.
struct FitWork {
    StepWork step;
    int64_t epochs = 0, steps = 0, validation_rows = 0, validation_batches = 0;
    double validation_flops = 0;  // 2 * MACs * validation rows * epochs
    double data_bytes = 0;        // the arrays packed (and uploaded) once: 4 * rows * (features + 1)
    double flops = 0, bytes = 0;  // totals
    double blas_flops = 0;        // the part of flops in BLAS-sized layers (a different rate on the CPU)
    double moved_values = 0;      // StepWork's moved values over every trained and validated row
    int64_t dispatches = 0;       // steps + validation batches: what pays the per-step overhead
    int64_t layer_calls = 0;      // kernel launches: 3 per dense layer per step, 1 per validation batch
    // Host -> program calls: 1 when nothing looks between epochs, one per epoch with epoch lines
    // or callbacks (set by the caller, which knows; fit_work assumes 1).
    int64_t program_calls = 1;
    // Bytes one GPU block would hold to run the whole fit as one persistent kernel: parameters,
    // gradients, optimizer slots and one batch's activations and their gradients (an estimate
    // of src/runtime/cuda's layout).
    double persistent_state_bytes = 0;
};
// steps_per_epoch -1: one pass over train_rows; validation_batch_size -1: as fit picks it.
FitWork fit_work(const StepWork& step, int64_t train_rows, int64_t validation_rows, int64_t input_width,
                 int64_t epochs, int64_t steps_per_epoch = -1, int64_t validation_batch_size = -1);

// The fit's work as `model` runs it: host_looks_each_epoch when epoch lines or callbacks make
// the host stop the program once per epoch (else the whole fit is one program call).
FitWork fit_work(const Sequential& model, int64_t train_rows, int64_t validation_rows, int64_t epochs,
                 int64_t batch_size, int64_t steps_per_epoch, bool host_looks_each_epoch);

// ---- Devices ----

// What one device costs, measured (the CPU) or from a datasheet (GPUs not present).
struct DeviceProfile {
    std::string name;                       // "cpu (AMD EPYC, 2 threads)", "NVIDIA H200"
    Device device = Device::cpu;
    bool present = false;                   // usable on this machine
    bool estimate = true;                   // datasheet figures, not measured here
    std::string source;                     // where the figures come from
    double startup_seconds = 0;             // program build, device context
    double transfer_bytes_per_second = 1e10;  // host -> device (CPU: packing copies)
    double step_overhead_seconds = 0;       // per dispatch (step or validation batch)
    double call_overhead_seconds = 0;       // per kernel call
    double flops_per_second = 1e10;         // achievable fp32, small layers (onefit's own kernels)
    double blas_flops_per_second = 1e10;    // achievable fp32, BLAS-sized layers
    double bytes_per_second = 1e10;         // achievable memory bandwidth
    double moved_values_per_second = 1e15;  // the non-product ops' loops (StepWork::moved_values_*)
    double launch_seconds = 0;              // per program call (GPU: a kernel or graph launch, sync, log read)
    // The persistent-kernel path (GPUs): a fit whose state fits block_memory_bytes runs in one
    // block at block_flops_per_second, paying block_step_seconds (its barriers) per dispatch.
    double block_memory_bytes = 0;          // 0: no such path (the CPU)
    double block_flops_per_second = 1e9;
    double block_step_seconds = 0;
    int64_t multiprocessors = 0;            // GPUs: persistent blocks that run at once (a sweep's members)
};

struct Projection {
    std::string device_name, source;
    Device device = Device::cpu;
    bool present = false, estimate = true;
    double fixed_seconds = 0, overhead_seconds = 0, compute_seconds = 0, total_seconds = 0;
    std::string path;  // how the device would run it: "step loop", "one persistent kernel", "CUDA graphs"
    bool supported = true;  // false: the device's backend cannot run this model (the figures are what it would take)
};

Projection project(const DeviceProfile& profile, const FitWork& work);

// The CPU's profile: from the cache file (calibration_cache_path()) when its key matches this
// CPU and onefit version, else measured by calibrate_cpu() (about 2 s) and cached.
DeviceProfile cpu_profile(bool recalibrate = false);
DeviceProfile calibrate_cpu();
// $XDG_CACHE_HOME/onefit/calibration.json, else ~/.cache/onefit/calibration.json.
std::string calibration_cache_path();
// The key a cached calibration must match: CPU model, thread count, onefit version.
std::string calibration_key();

// Datasheet estimates for GPUs (H200, H100), each with its source; present when this build
// has CUDA and cuda_device_description() names that GPU.
std::vector<DeviceProfile> datasheet_gpu_profiles();
// The CPU first, then every GPU profile.
std::vector<DeviceProfile> device_profiles(const DeviceProfile& cpu);

// The profile of `device` among `profiles` (a present one first; the CPU's when there is none).
const DeviceProfile& profile_for(Device device, const std::vector<DeviceProfile>& profiles);

// The present device that finishes the fit first (the CPU when no GPU is present).
Device pick_device(const FitWork& work, const std::vector<DeviceProfile>& profiles);
// One sentence: why the winner wins, e.g. "3.6 MFLOP in 120 steps: on the GPU the fixed start-up
// (~200 ms) and per-launch costs dominate; the CPU finishes in 0.1 ms".
std::string projection_reason(const FitWork& work, const std::vector<Projection>& projections);

// ---- Sweeps: when does the accelerator win? ----

// `members` fits of one shape (onefit::sweep), each costing `member` (its fit_work), projected on
// a device. The CPU runs them side by side, one per thread (ThreadPool's count; stacking in
// SIMD lanes is not counted, so the CPU side is conservative); a GPU on the persistent path runs
// one member per multiprocessor at once, all in one launch (one block each: an assumption, as
// sweeps do not run on a GPU yet), else one after another as CUDA graphs. The device's fixed
// start-up and transfer are paid once; each member is one program call (sweeps are silent).
struct SweepProjection {
    std::string device_name;
    Device device = Device::cpu;
    bool estimate = true;
    int64_t at_once = 1;         // members running at the same time
    double seconds = 0;          // all the members
    int64_t crossover = 0;       // members from which this device is projected faster than the CPU;
                                 // 0 for the CPU itself, -1 when it never is (up to 1e9 members)
};
double sweep_seconds(const DeviceProfile& device, const FitWork& member, int64_t members);
int64_t sweep_crossover(const DeviceProfile& cpu, const DeviceProfile& device, const FitWork& member);
// Every profile's projection for `members` members (the CPU's first, as in profiles).
std::vector<SweepProjection> project_sweep(const std::vector<DeviceProfile>& profiles, const FitWork& member,
                                           int64_t members);
// Text: a line per device, its time for `members` and its crossover.
std::string sweep_projection_text(const std::vector<SweepProjection>& projections, int64_t members);

// A sweep's members (onefit::sweep; best first, as ranked) as a self-contained HTML page: the
// first `curves` members' `key` per epoch, and the last `key` against every axis the members vary
// in (learning rate on a log scale, optimizers and losses as categories). `onefit sweep --report`.
std::string sweep_html(const std::vector<SweepMember>& members, const std::string& title, const std::string& key,
                       size_t curves = 10);

// ---- Lints ----

struct Lint {
    std::string id;        // "label_broadcast", "class_coverage", ...
    std::string severity;  // "warning" (the result is probably wrong) or "performance"
    std::string message;
    std::string fix;       // one line
};

struct LintInput {
    std::vector<std::string> warnings;  // model.warnings() after the fit
    const Tensor* x_train = nullptr;
    const Tensor* y_train = nullptr;
    const Tensor* y_validation = nullptr;
    const History* history = nullptr;
    int64_t output_width = 0;
    LossKind loss = LossKind::mean_squared_error;
    int64_t batch_size = 0, train_rows = 0, steps_per_epoch = -1;
    double step_compute_seconds = 0, step_overhead_seconds = 0;  // on the device that ran
    bool command_line = false;  // fixes as the CLI's flags, else as fit's and compile's arguments
};
std::vector<Lint> lint_fit(const LintInput& input);

// ---- The report ----

// How a phase's time was obtained: a clock around it; the cost model alone; or a measured
// interval minus an estimated part of it (e.g. compute = program time - estimated dispatch).
enum class PhaseBasis { measured, estimated, measured_minus_estimate };
const char* phase_basis_name(PhaseBasis basis);  // "measured", "estimated", "measured minus estimate"

struct Phase {
    std::string name;
    double seconds = 0;
    PhaseBasis basis = PhaseBasis::measured;
    std::string note;
};

// Times the command line measures around the library.
struct CommandTimes {
    double load_seconds = 0;          // reading and splitting the data
    double compile_seconds = 0;       // building the model and compile()
    double device_start_seconds = 0;  // e.g. creating the CUDA context before fit
    double fit_seconds = 0;           // the wall time of model.fit
    double load_bytes = 0;            // the size of the files read (0: built-in data)
    // Who explains: the onefit command line (which read the data and whose fixes are its flags,
    // --lr 0.01), or a program's call (Python, C++: the data came as arrays, fixes name fit's and
    // compile's arguments, learning_rate=0.01).
    bool command_line = false;
};

// The phase table: fit's FitProfile split with the calibration into transfer, dispatch overhead
// and compute; whatever is left of the fit's wall time is "other".
std::vector<Phase> fit_phases(const FitProfile& profile, const CommandTimes& times, const FitWork& work,
                              const DeviceProfile& ran_on);
std::string format_phase_table(const std::vector<Phase>& phases);

struct ExplainReport {
    std::string run;  // what ran, one line
    std::string device;
    std::vector<Phase> phases;
    FitWork work;
    double train_seconds = 0;  // measured, inside the program, without validation
    DeviceProfile ran_on;
    std::vector<Projection> projections;
    std::string picked_device, reason;
    std::vector<Lint> lints;
    History history;
    std::string kernels;  // FitProfile::kernels: the SIMD target and GEMM libraries that ran (CPU)
};

// Runs model.fit(x_train, y_train, options) once, timed and profiled (options.profile and the
// output are taken over: epoch lines are captured, not shown; warnings become lints), then
// calibrates the CPU (cached; ~2 s the first time on a machine) and explains it: phases, work,
// projections on every device, the device that would finish first and why, and lints. x_val and
// y_val, when given, are the validation data (options.validation_split must be 0). `times`
// carries what the caller measured before the fit; `run` describes what ran, one line. The model
// is left as it was: its parameters, optimizer state and step count are put back after the fit.
ExplainReport explain_fit(Sequential& model, const Tensor& x_train, const Tensor& y_train, const Tensor* x_val,
                          const Tensor* y_val, FitOptions options, CommandTimes times = {}, std::string run = "",
                          bool recalibrate = false);

std::string explain_text(const ExplainReport& report);
std::string explain_json(const ExplainReport& report);  // schema: docs/explain.md
std::string explain_html(const ExplainReport& report);  // self-contained, inline SVG charts

}  // namespace onefit
