// The CPU's cost profile, measured: a few short fits of synthetic models through the public
// API with FitProfile, and a least-squares fit of the cost model (explain.hpp) to their times.
// Cached on disk per CPU model, thread count and onefit version; GPU figures are datasheet
// estimates until a GPU is present and measured.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "core/cache_dir.hpp"
#include "core/cpu_name.hpp"
#include "onefit/explain.hpp"
#include "onefit/io.hpp"

namespace onefit {
namespace {

// Keep in step with project(onefit VERSION ...); bump kFormat when the profile's meaning changes.
constexpr const char* kVersion = "0.1.0";
// 3: products from 512 weights count as BLAS work; 4: no dX in the first layer, slots counted;
// 5: the non-product ops' moved values, calibrated on convnets; 6: their window reads no longer
// also counted as flops.
constexpr int kFormat = 6;

uint64_t mix(uint64_t i) {  // splitmix64: reproducible synthetic data
    uint64_t z = (i + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

struct Sample {  // one calibration fit: its work and its measured times
    FitWork work;
    double train_seconds = 0, fixed_seconds = 0;
};

// One calibration fit of the model add_layers builds on `input` samples (its last layer added
// here: `classes` softmax units).
template <class AddLayers>
Sample measure_model(const Shape& input, AddLayers add_layers, int64_t classes, int64_t batch, int64_t rows,
                     int64_t epochs) {
    const int64_t inputs = shape_elements(input);
    Shape x_shape = {rows};
    x_shape.insert(x_shape.end(), input.begin(), input.end());
    Tensor x(x_shape), y({rows});
    for (int64_t k = 0; k < x.size(); ++k) x[k] = static_cast<float>(mix(static_cast<uint64_t>(k)) >> 40) * 0x1.0p-24f;
    for (int64_t i = 0; i < rows; ++i) y[i] = static_cast<float>(mix(1ull << 40 | static_cast<uint64_t>(i)) % classes);
    Sample best;
    for (int run = 0; run < 3; ++run) {  // the fastest of three: other work on the machine only adds time
        Sequential model(input, 0);
        add_layers(model);
        model.add(Dense(classes, "softmax"));
        model.compile(Adam(1e-3f), loss_from_name("sparse_categorical_crossentropy"));
        FitProfile profile;
        FitOptions options;
        options.batch_size = batch;
        options.epochs = epochs;
        options.verbose = 0;
        options.profile = &profile;
        model.fit(x, y, options);
        const double train = profile.program_seconds - profile.validation_seconds;
        const double fixed = profile.prepare_seconds + profile.read_back_seconds + profile.host_seconds;
        if (run == 0 || train < best.train_seconds) best.train_seconds = train;
        if (run == 0 || fixed < best.fixed_seconds) best.fixed_seconds = fixed;
        if (run == 0) best.work = fit_work(step_work(model, batch), rows, 0, inputs, epochs);
    }
    return best;
}

Sample measure(int64_t inputs, const std::vector<int64_t>& hidden, int64_t classes, int64_t batch, int64_t rows,
               int64_t epochs) {
    const auto add = [&](Sequential& model) {
        for (int64_t h : hidden) model.add(Dense(h, "relu"));
    };
    return measure_model({inputs}, add, classes, batch, rows, epochs);
}

// A convnet: per entry of filters a 3x3 Conv2D (relu) and a 2x2 max pooling, with a
// BatchNormalization after the first when asked; then Flatten.
Sample measure_convnet(const Shape& image, const std::vector<int64_t>& filters, bool normalise, int64_t classes,
                       int64_t batch, int64_t rows, int64_t epochs) {
    const auto add = [&](Sequential& model) {
        for (size_t i = 0; i < filters.size(); ++i) {
            model.add(Conv2D(filters[i], 3, 1, "same", "relu"));
            if (normalise && i == 0) model.add(BatchNormalization());
            model.add(MaxPooling2D(2));
        }
        model.add(Flatten());
    };
    return measure_model(image, add, classes, batch, rows, epochs);
}

// Least squares with relative weights (each row divided by its measured time, so a 1 ms fit
// counts as much as a 100 ms one) and non-negative coefficients: a negative one is dropped
// and the rest refitted.
std::vector<double> fit_nonnegative(const std::vector<std::vector<double>>& a, const std::vector<double>& t) {
    const size_t n = a.front().size();
    std::vector<bool> active(n, true);
    std::vector<double> coef(n, 0.0);
    for (size_t round = 0; round < n; ++round) {
        std::vector<size_t> cols;
        for (size_t j = 0; j < n; ++j)
            if (active[j]) cols.push_back(j);
        const size_t m = cols.size();
        std::vector<std::vector<double>> ata(m, std::vector<double>(m + 1, 0.0));
        for (size_t i = 0; i < t.size(); ++i) {
            const double w = 1.0 / (t[i] * t[i]);
            for (size_t p = 0; p < m; ++p) {
                for (size_t q = 0; q < m; ++q) ata[p][q] += w * a[i][cols[p]] * a[i][cols[q]];
                ata[p][m] += w * a[i][cols[p]] * t[i];
            }
        }
        for (size_t p = 0; p < m; ++p) {  // Gauss-Jordan with partial pivoting
            size_t pivot = p;
            for (size_t r = p + 1; r < m; ++r)
                if (std::fabs(ata[r][p]) > std::fabs(ata[pivot][p])) pivot = r;
            std::swap(ata[p], ata[pivot]);
            if (ata[p][p] == 0) continue;
            for (size_t r = 0; r < m; ++r) {
                if (r == p) continue;
                const double f = ata[r][p] / ata[p][p];
                for (size_t c = p; c <= m; ++c) ata[r][c] -= f * ata[p][c];
            }
        }
        bool negative = false;
        std::fill(coef.begin(), coef.end(), 0.0);
        for (size_t p = 0; p < m; ++p) {
            coef[cols[p]] = ata[p][p] != 0 ? ata[p][m] / ata[p][p] : 0.0;
            if (coef[cols[p]] < 0) active[cols[p]] = false, negative = true;
        }
        if (!negative) break;
    }
    for (double& c : coef) c = std::max(c, 0.0);
    return coef;
}

nlohmann::json to_json(const DeviceProfile& p) {
    return {{"name", p.name},
            {"source", p.source},
            {"startup_seconds", p.startup_seconds},
            {"transfer_bytes_per_second", p.transfer_bytes_per_second},
            {"step_overhead_seconds", p.step_overhead_seconds},
            {"call_overhead_seconds", p.call_overhead_seconds},
            {"flops_per_second", p.flops_per_second},
            {"blas_flops_per_second", p.blas_flops_per_second},
            {"bytes_per_second", p.bytes_per_second},
            {"moved_values_per_second", p.moved_values_per_second}};
}

DeviceProfile from_json(const nlohmann::json& j) {
    DeviceProfile p;
    p.name = j.at("name").get<std::string>();
    p.source = j.at("source").get<std::string>();
    p.startup_seconds = j.at("startup_seconds").get<double>();
    p.transfer_bytes_per_second = j.at("transfer_bytes_per_second").get<double>();
    p.step_overhead_seconds = j.at("step_overhead_seconds").get<double>();
    p.call_overhead_seconds = j.at("call_overhead_seconds").get<double>();
    p.flops_per_second = j.at("flops_per_second").get<double>();
    p.blas_flops_per_second = j.at("blas_flops_per_second").get<double>();
    p.bytes_per_second = j.at("bytes_per_second").get<double>();
    p.moved_values_per_second = j.at("moved_values_per_second").get<double>();
    p.device = Device::cpu;
    p.present = true;
    p.estimate = false;
    return p;
}

}  // namespace

std::string calibration_key() {
    return read_cpu_name() + "; " + std::to_string(std::thread::hardware_concurrency()) + " threads; onefit " + kVersion +
           "; format " + std::to_string(kFormat);
}

std::string calibration_cache_path() { return cache_dir() + "/calibration.json"; }

DeviceProfile calibrate_cpu() {
    // From overhead-bound (tiny layers, many steps) to compute- and bandwidth-bound (MNIST-sized),
    // so every coefficient has rows where it matters. About 1-2 s in all on a 2-core EPYC.
    const std::vector<Sample> samples = {
        measure(4, {8}, 3, 8, 512, 10),          measure(4, {32}, 3, 32, 1024, 10),
        measure(32, {64, 64}, 4, 16, 2048, 4),   measure(128, {256}, 10, 128, 4096, 3),
        measure(784, {256}, 10, 256, 4096, 2),   measure(784, {512, 512}, 10, 16, 1024, 1),
        measure(256, {1024}, 10, 64, 2048, 2),   measure(64, {128}, 10, 1, 512, 2),
        measure(32, {64, 64}, 4, 64, 4096, 2),   measure(16, {48}, 4, 16, 2048, 3),
        measure(64, {128, 128, 128}, 10, 32, 2048, 2), measure(784, {128}, 10, 64, 2048, 1),
        measure_convnet({12, 12, 1}, {8}, false, 10, 32, 1024, 1),
        measure_convnet({28, 28, 1}, {16, 32}, false, 10, 64, 512, 1),
        measure_convnet({16, 16, 3}, {8}, true, 4, 16, 512, 1),
    };
    std::vector<std::vector<double>> a, fixed_rows;
    std::vector<double> t, fixed_t;
    for (const Sample& s : samples) {
        a.push_back({static_cast<double>(s.work.dispatches), static_cast<double>(s.work.layer_calls),
                     s.work.flops - s.work.blas_flops, s.work.blas_flops, s.work.bytes, s.work.moved_values});
        t.push_back(std::max(s.train_seconds, 1e-7));
        fixed_rows.push_back({1.0, s.work.data_bytes});
        fixed_t.push_back(std::max(s.fixed_seconds, 1e-7));
    }
    const std::vector<double> c = fit_nonnegative(a, t);
    const std::vector<double> f = fit_nonnegative(fixed_rows, fixed_t);
    DeviceProfile p;
    p.device = Device::cpu;
    p.present = true;
    p.estimate = false;
    p.name = "cpu (" + read_cpu_name() + ", " + std::to_string(std::thread::hardware_concurrency()) + " threads)";
    p.source = "measured here: " + std::to_string(samples.size()) +
               " synthetic fits, least squares (onefit explain --recalibrate to redo)";
    p.step_overhead_seconds = c[0];
    p.call_overhead_seconds = c[1];
    p.flops_per_second = c[2] > 0 ? 1.0 / c[2] : 1e15;
    p.blas_flops_per_second = c[3] > 0 ? 1.0 / c[3] : 1e15;
    p.bytes_per_second = c[4] > 0 ? 1.0 / c[4] : 1e15;
    p.moved_values_per_second = c[5] > 0 ? 1.0 / c[5] : 1e15;
    p.startup_seconds = f[0];
    p.transfer_bytes_per_second = f[1] > 0 ? 1.0 / f[1] : 1e15;
    return p;
}

DeviceProfile cpu_profile(bool recalibrate) {
    const std::string path = calibration_cache_path();
    if (!recalibrate) {
        std::ifstream in(path);
        if (in) {
            try {
                const nlohmann::json j = nlohmann::json::parse(in);
                if (j.at("key").get<std::string>() == calibration_key()) return from_json(j.at("profile"));
            } catch (const std::exception&) {
                // unreadable or from another version: measure again below
            }
        }
    }
    const DeviceProfile p = calibrate_cpu();
    try {
        std::filesystem::create_directories(std::filesystem::path(path).parent_path());
        write_file_atomically(path, nlohmann::json{{"key", calibration_key()}, {"profile", to_json(p)}}.dump(2) + "\n");
    } catch (const std::exception&) {
        // a read-only home only costs the next run another calibration
    }
    return p;
}

}  // namespace onefit
