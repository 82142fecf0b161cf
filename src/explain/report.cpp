// The explain report as a phase table, text and JSON (docs/explain.md has the schema).
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "explain/format.hpp"
#include "onefit/explain.hpp"

namespace onefit {
namespace {

using explain_format::seconds;
using explain_format::si;

std::string pad(std::string s, size_t width) {
    if (s.size() < width) s.append(width - s.size(), ' ');
    return s;
}

double total(const std::vector<Phase>& phases) {
    double t = 0;
    for (const Phase& p : phases) t += p.seconds;
    return t;
}

// Training dispatch overhead of the measured fit, by the same model as the projections
// (validation batches are in their own phase).
double train_overhead(const FitWork& w, const DeviceProfile& p) {
    FitWork training = w;
    training.validation_batches = 0;
    training.dispatches = w.steps;
    training.layer_calls = 3 * w.step.dense_layers * w.steps;
    return project(p, training).overhead_seconds;
}

// "reading and splitting 192 MB of files at 510 MB/s (command line)".
std::string load_note(const CommandTimes& t) {
    if (!t.command_line) return "none here: the data came as arrays, read before the call";
    if (t.load_bytes <= 0) return "reading and splitting the data (command line)";
    std::string note = "reading and splitting " + si(t.load_bytes, "B") + " of files";
    if (t.load_seconds > 0) note += " at " + si(t.load_bytes / t.load_seconds, "B/s");
    return note + " (command line; a float32 .npy is mapped, its pages read during the first epoch)";
}

}  // namespace

const char* phase_basis_name(PhaseBasis basis) {
    switch (basis) {
        case PhaseBasis::measured: return "measured";
        case PhaseBasis::estimated: return "estimated";
        case PhaseBasis::measured_minus_estimate: return "measured minus estimate";
    }
    return "measured";
}

std::vector<Phase> fit_phases(const FitProfile& fp, const CommandTimes& times, const FitWork& work,
                              const DeviceProfile& ran_on) {
    const bool cpu = fp.device != "cuda";
    const double transfer = std::min(fp.prepare_seconds, work.data_bytes / ran_on.transfer_bytes_per_second);
    const double train = std::max(0.0, fp.program_seconds - fp.validation_seconds);
    const double overhead = std::min(train, train_overhead(work, ran_on));
    using enum PhaseBasis;
    std::vector<Phase> phases = {
        {"data loading", times.load_seconds, measured, load_note(times)},
        {"compile", times.compile_seconds, measured, "building the model and compile(): lowering, weight init"},
        {"program build", fp.prepare_seconds - transfer, measured_minus_estimate,
         "fit's checks and program set-up: fit's measured preparation minus the estimated transfer"},
        {"device start-up", times.device_start_seconds, measured, cpu ? "none on the CPU" : "CUDA context"},
        {"host->device transfer", transfer, estimated,
         cpu ? "packing the arrays into the program's buffers (part of prepare)" : "uploading the packed arrays"},
        {"dispatch overhead", overhead, estimated,
         std::to_string(work.steps) + " steps at the profile's per-step, per-call and per-launch costs"},
        {"compute", train - overhead, measured_minus_estimate,
         "training steps: the measured program time minus the estimated dispatch overhead"},
        {"validation", fp.validation_seconds, measured, std::to_string(work.validation_batches) + " forward batches"},
        {"device->host reads", fp.read_back_seconds, measured, "parameters and optimizer state back to the host"},
        {"logging/callbacks", fp.host_seconds, measured,
         std::to_string(fp.program_calls) + " program call" + (fp.program_calls == 1 ? "" : "s")},
    };
    const double inside = fp.prepare_seconds + fp.program_seconds + fp.read_back_seconds + fp.host_seconds;
    if (times.fit_seconds > inside) phases.push_back({"other", times.fit_seconds - inside, measured, "rest of model.fit"});
    return phases;
}

std::string format_phase_table(const std::vector<Phase>& phases) {
    const double sum = std::max(total(phases), 1e-12);
    std::string out = "  " + pad("phase", 24) + pad("time", 11) + pad("share", 8) + "how\n";
    for (const Phase& p : phases) {
        char share[16];
        std::snprintf(share, sizeof share, "%5.1f%%", 100.0 * p.seconds / sum);
        out += "  " + pad(p.name, 24) + pad(seconds(p.seconds), 11) + pad(share, 8) +
               phase_basis_name(p.basis) + ": " + p.note + "\n";
    }
    out += "  " + pad("total", 24) + seconds(sum) + "\n";
    return out;
}

std::string explain_text(const ExplainReport& r) {
    const StepWork& s = r.work.step;
    std::string out = "onefit explain: " + r.run + "\n";
    out += "ran on: " + r.ran_on.name + "; calibration: " + r.ran_on.source + "\n\n";
    out += "Where the time went\n" + format_phase_table(r.phases) + "\n";
    out += "Work (forward = 2 x MACs x batch, backward = 2 x forward, optimizer = 10 x params)\n";
    out += "  per step (batch " + std::to_string(s.batch_size) + "): " + si(s.flops, "FLOP") + " (forward " +
           si(s.forward_flops, "FLOP") + ", backward " + si(s.backward_flops, "FLOP") + ", optimizer " +
           si(s.optimizer_flops, "FLOP") + "), " + si(s.bytes, "B") + " touched" +
           (s.moved_values_forward > 0 ? ", " +
                                             si((s.moved_values_forward + s.moved_values_backward) *
                                                    static_cast<double>(s.batch_size), "") +
                                             " values moved by the non-product ops (im2col, pooling, ...)"
                                       : std::string()) +
           "\n";
    out += "  whole fit: " + std::to_string(r.work.steps) + " steps, " + si(r.work.flops, "FLOP") + " (validation " +
           si(r.work.validation_flops, "FLOP") + "), " + si(r.work.bytes, "B") + " touched, " +
           si(r.work.data_bytes, "B") + " of data\n";
    const double achieved = r.train_seconds > 0 ? (r.work.flops - r.work.validation_flops) / r.train_seconds : 0;
    out += "  achieved: " + si(achieved, "FLOP/s") + " in training vs a calibrated " +
           si(r.ran_on.flops_per_second, "FLOP/s") + " (small layers) / " +
           si(r.ran_on.blas_flops_per_second, "FLOP/s") + " (BLAS-sized layers)\n\n";
    out += "Projection (fixed + calls, steps and kernels x overhead + flops/rate + bytes/bandwidth)\n";
    size_t device_width = 34;  // a CPU's long name ("cpu (Intel(R) Xeon(R) Processor, 2 threads)") widens it
    for (const Projection& p : r.projections) device_width = std::max(device_width, p.device_name.size() + 2);
    out += "  " + pad("device", device_width) + pad("fixed", 10) + pad("overhead", 10) + pad("compute", 10) +
           pad("total", 10) + "\n";
    for (const Projection& p : r.projections)
        out += "  " + pad(p.device_name, device_width) + pad(seconds(p.fixed_seconds), 10) + pad(seconds(p.overhead_seconds), 10) +
               pad(seconds(p.compute_seconds), 10) + pad(seconds(p.total_seconds), 10) +
               (p.estimate ? "estimate" : "measured profile") + ", " + p.path + (p.present ? "" : ", not present") + "\n";
    out += "  pick: " + r.picked_device + ". " + r.reason + "\n\n";
    if (r.lints.empty()) out += "Lints: none\n";
    else out += "Lints\n";
    for (const Lint& l : r.lints)
        out += "  " + l.severity + " [" + l.id + "]: " + l.message + "\n      fix: " + l.fix + "\n";
    return out;
}

std::string explain_json(const ExplainReport& r) {
    using nlohmann::json;
    json phases = json::array();
    for (const Phase& p : r.phases)
        phases.push_back({{"name", p.name}, {"seconds", p.seconds}, {"measured", p.basis == PhaseBasis::measured},
                          {"basis", phase_basis_name(p.basis)}, {"note", p.note}});
    const StepWork& s = r.work.step;
    json projections = json::array();
    for (const Projection& p : r.projections)
        projections.push_back({{"device", p.device_name},
                               {"kind", device_name(p.device)},
                               {"present", p.present},
                               {"estimate", p.estimate},
                               {"path", p.path},
                               {"supported", p.supported},
                               {"source", p.source},
                               {"fixed_seconds", p.fixed_seconds},
                               {"overhead_seconds", p.overhead_seconds},
                               {"compute_seconds", p.compute_seconds},
                               {"total_seconds", p.total_seconds}});
    json lints = json::array();
    for (const Lint& l : r.lints) lints.push_back({{"id", l.id}, {"severity", l.severity}, {"message", l.message}, {"fix", l.fix}});
    json history = {{"epoch", r.history.epoch}};
    for (const auto& [key, values] : r.history.history) {
        json v = json::array();
        for (double x : values) v.push_back(std::isfinite(x) ? json(x) : json(nullptr));  // JSON has no NaN
        history[key] = v;
    }
    const double achieved = r.train_seconds > 0 ? (r.work.flops - r.work.validation_flops) / r.train_seconds : 0;
    const json out = {
        {"run", r.run},
        {"device", r.device},
        {"phases", phases},
        {"total_seconds", total(r.phases)},
        {"work",
         {{"formula", "forward = 2*MACs*batch; backward = 2*forward; optimizer = 10*params; "
                      "bytes = 4*(params*(2+optimizer floats) + batch*(inputs + 3*activations))"},
          {"per_step",
           {{"batch_size", s.batch_size},
            {"params", s.params},
            {"forward_macs_per_sample", s.forward_macs_per_sample},
            {"forward_flops", s.forward_flops},
            {"backward_flops", s.backward_flops},
            {"optimizer_flops", s.optimizer_flops},
            {"flops", s.flops},
            {"bytes", s.bytes},
            {"moved_values_forward_per_sample", s.moved_values_forward},
            {"moved_values_backward_per_sample", s.moved_values_backward}}},
          {"epochs", r.work.epochs},
          {"steps", r.work.steps},
          {"validation_rows", r.work.validation_rows},
          {"validation_flops", r.work.validation_flops},
          {"data_bytes", r.work.data_bytes},
          {"flops", r.work.flops},
          {"bytes", r.work.bytes},
          {"blas_flops", r.work.blas_flops},
          {"moved_values", r.work.moved_values},
          {"dispatches", r.work.dispatches}}},
        {"rate",
         {{"train_seconds", r.train_seconds},
          {"achieved_flops_per_second", achieved},
          {"calibrated_flops_per_second", r.ran_on.flops_per_second}}},
        {"calibration",
         {{"device", r.ran_on.name},
          {"source", r.ran_on.source},
          {"startup_seconds", r.ran_on.startup_seconds},
          {"transfer_bytes_per_second", r.ran_on.transfer_bytes_per_second},
          {"launch_seconds", r.ran_on.launch_seconds},
          {"step_overhead_seconds", r.ran_on.step_overhead_seconds},
          {"call_overhead_seconds", r.ran_on.call_overhead_seconds},
          {"moved_values_per_second", r.ran_on.moved_values_per_second},
          {"flops_per_second", r.ran_on.flops_per_second},
          {"blas_flops_per_second", r.ran_on.blas_flops_per_second},
          {"bytes_per_second", r.ran_on.bytes_per_second}}},
        {"projections", projections},
        {"pick", {{"device", r.picked_device}, {"reason", r.reason}}},
        {"lints", lints},
        {"history", history},
    };
    return out.dump(2) + "\n";
}

}  // namespace onefit
