// The CUDA backend's host side: lowers the TrainingProgram for the GPU, uploads the data set,
// the whole batch schedule and the state in ONE transfer from pinned memory, and runs the fit
// with one kernel launch per host look (the whole fit when nothing looks between epochs).
#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>

#include "onefit/error.hpp"
#include "program/batch_schedule.hpp"
#include "program/packed_data.hpp"
#include "runtime/cuda/cuda_check.cuh"
#include "runtime/cuda/cuda_fit.hpp"
#include "runtime/cuda/graph_fit.cuh"
#include "runtime/cuda/tiny_fit_kernel.cuh"

namespace onefit::cuda {
namespace {

std::atomic<long long> g_launches{0};
std::atomic<double> g_device_ms{0.0};

DeviceModel lower_for_device(const TrainingProgram& program, const std::vector<nn::Metric>& metrics, uint64_t seed) {
    if (program.ops.size() > size_t(kMaxOps))
        throw Error("device 'cuda': at most " + std::to_string(kMaxOps) + " layers are supported, the model has " +
                    std::to_string(program.ops.size()));
    DeviceModel m{};
    m.n_ops = int(program.ops.size());
    for (int i = 0; i < m.n_ops; ++i) {
        const ProgramOp& op = program.ops[size_t(i)];
        DeviceOp& d = m.ops[i];
        d.kind = op.kind == Layer::Kind::Dense ? 0 : 1;
        d.in = int(op.in_width);
        d.out = int(op.out_width);
        d.activation = op.dense.activation;
        d.use_bias = op.dense.use_bias;
        d.out_major = op.dense.out_major;
        d.weight = op.dense.weight;
        d.bias = op.dense.bias;
        d.rate = op.dropout_rate;
    }
    m.loss = program.loss.kind;
    m.loss_takes_logits = program.loss_takes_logits;
    m.huber_delta = program.loss.delta;
    m.output_width = int(program.output_width);
    m.optimizer = program.optimizer;
    m.n_params = program.param_count();
    m.n_slots = nn::optimizer_slot_count(program.optimizer);
    m.n_metrics = int(metrics.size());
    for (size_t k = 0; k < metrics.size(); ++k) m.metrics[k] = metrics[k].kind;
    m.dropout_seed = seed;
    return m;
}

// One contiguous arena: every array the device needs, laid out on the host in pinned memory
// and copied with a single cudaMemcpy.
class Arena {
public:
    template <class T>
    size_t add(const T* data, size_t count) {
        const size_t at = (bytes_.size() + 255) / 256 * 256;
        bytes_.resize(at + count * sizeof(T));
        if (count) std::memcpy(bytes_.data() + at, data, count * sizeof(T));
        return at;
    }
    template <class T>
    size_t add(const std::vector<T>& v) { return add(v.data(), v.size()); }

    void upload() {
        ONEFIT_CUDA_CHECK(cudaMallocHost(&pinned_, bytes_.size()));
        std::memcpy(pinned_, bytes_.data(), bytes_.size());
        size_t free_bytes = 0, total_bytes = 0;
        ONEFIT_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
        if (bytes_.size() > free_bytes)
            throw Error("device 'cuda': the fit needs " + std::to_string(bytes_.size() >> 20) + " MiB of GPU memory, " +
                        std::to_string(free_bytes >> 20) + " MiB are free");
        ONEFIT_CUDA_CHECK(cudaMalloc(&device_, bytes_.size()));
        ONEFIT_CUDA_CHECK(cudaMemcpy(device_, pinned_, bytes_.size(), cudaMemcpyHostToDevice));
    }
    template <class T>
    T* at(size_t offset) const { return reinterpret_cast<T*>(static_cast<char*>(device_) + offset); }
    ~Arena() {
        if (device_) cudaFree(device_);
        if (pinned_) cudaFreeHost(pinned_);
    }

private:
    std::vector<char> bytes_;
    void* pinned_ = nullptr;
    void* device_ = nullptr;
};

class CudaFit final : public DeviceProgram {
public:
    CudaFit(TrainingProgram& program, const FitPlan& plan, const std::vector<nn::Metric>& metrics)
        : program_(program), plan_(plan) {
        std::string why;
        if (!available(&why)) throw Error("device 'cuda' is not available: " + why + "; use --device cpu");
        const int64_t rows = plan.dataset ? plan.dataset->x().rows() : plan.x.rows;
        BatchSchedule schedule(plan_, rows);
        const int64_t max_rows = std::max(schedule.max_batch_rows(), max_validation_batch(plan));
        const PackedData<float> data = pack_fit_data<float>(program, plan, max_rows);
        model_ = lower_for_device(program, metrics, plan.seed ^ 0x44524f50ull);

        // The whole schedule, every step of every epoch, the same batches as the CPU's.
        std::vector<int32_t> order, batch_rows;
        std::vector<int64_t> batch_start, epoch_first(size_t(plan.initial_epoch) + 1, 0);
        for (int64_t e = plan.initial_epoch; e < plan.epochs; ++e) {  // earlier epochs: no steps
            const int64_t steps = schedule.begin_epoch();
            for (int64_t s = 0; s < steps; ++s) {
                const ScheduledBatch b = schedule.next_batch();
                batch_start.push_back(int64_t(order.size()));
                batch_rows.push_back(int32_t(b.count));
                for (int64_t r = 0; r < b.count; ++r) order.push_back(int32_t(b.rows ? b.rows[r] : b.first_row + r));
            }
            epoch_first.push_back(int64_t(batch_start.size()));
        }
        epoch_first_step_ = epoch_first;
        std::vector<int32_t> val_batches(data.val_batches.begin(), data.val_batches.end());
        has_validation_ = !val_batches.empty();
        logs_.assign(size_t(plan.epochs), EpochLog{});
        const int64_t step = program.optimizer_step;

        Arena& a = arena_;
        const size_t x = a.add(data.x.data(), data.x.size()), y = a.add(data.y), o = a.add(order), bs = a.add(batch_start),
                     br = a.add(batch_rows), ef = a.add(epoch_first), vx = a.add(data.val_x.data(), data.val_x.size()), vy = a.add(data.val_y),
                     vb = a.add(val_batches), p = a.add(program.params), sl = a.add(program.optimizer_slots),
                     sc = a.add(&step, 1), lg = a.add(logs_);
        a.upload();
        data_ = DeviceData{a.at<float>(x), a.at<float>(y), int(data.x_width), int(data.y_width), a.at<int32_t>(o),
                           a.at<int64_t>(bs), a.at<int32_t>(br), a.at<int64_t>(ef), a.at<float>(vx), a.at<float>(vy),
                           a.at<int32_t>(vb), int(val_batches.size()), int(max_rows), a.at<float>(p),
                           a.at<float>(sl), a.at<int64_t>(sc), a.at<EpochLog>(lg)};

        const TinyLayout layout = tiny_layout(model_, data_.x_width, data_.y_width, data_.max_rows);
        smem_bytes_ = size_t(layout.total) * sizeof(float);
        int device = 0, max_smem = 0;
        ONEFIT_CUDA_CHECK(cudaGetDevice(&device));
        ONEFIT_CUDA_CHECK(cudaDeviceGetAttribute(&max_smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
        tiny_ = smem_bytes_ <= size_t(max_smem);
        if (tiny_)
            ONEFIT_CUDA_CHECK(cudaFuncSetAttribute(tiny_fit_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                   int(smem_bytes_)));
        else
            graph_ = std::make_unique<GraphFit>(model_, data_, epoch_first_step_, batch_rows, val_batches,
                                                program.optimizer_step, g_launches);
    }

    int64_t run_epochs(int64_t first, int64_t last) override {
        launch({epoch_first_step_[size_t(first)], epoch_first_step_[size_t(last)], 1, -1});
        read_logs(first, last);
        return last;
    }
    void begin_epoch(int64_t epoch) override {
        epoch_ = epoch;
        cursor_ = epoch_first_step_[size_t(epoch)];
    }
    int64_t steps_in_epoch() const override {
        return epoch_first_step_[size_t(epoch_) + 1] - epoch_first_step_[size_t(epoch_)];
    }
    void train_steps(int64_t count) override {
        launch({cursor_, cursor_ + count, 0, -1});
        cursor_ += count;
        read_logs(epoch_, epoch_ + 1);
    }
    void end_epoch() override {
        if (has_validation_) launch({0, 0, 0, int(epoch_)});
        read_logs(epoch_, epoch_ + 1);
    }
    const std::vector<EpochLog>& logs() override { return logs_; }
    bool has_validation() const override { return has_validation_; }
    void store_state() override {
        ONEFIT_CUDA_CHECK(cudaMemcpy(program_.params.data(), data_.params, program_.params.size() * sizeof(float),
                                     cudaMemcpyDeviceToHost));
        ONEFIT_CUDA_CHECK(cudaMemcpy(program_.optimizer_slots.data(), data_.slots,
                                     program_.optimizer_slots.size() * sizeof(float), cudaMemcpyDeviceToHost));
        ONEFIT_CUDA_CHECK(cudaMemcpy(&program_.optimizer_step, data_.step_count, sizeof(int64_t), cudaMemcpyDeviceToHost));
    }
    void load_state() override {
        ONEFIT_CUDA_CHECK(cudaMemcpy(data_.params, program_.params.data(), program_.params.size() * sizeof(float),
                                     cudaMemcpyHostToDevice));
        ONEFIT_CUDA_CHECK(cudaMemcpy(data_.slots, program_.optimizer_slots.data(),
                                     program_.optimizer_slots.size() * sizeof(float), cudaMemcpyHostToDevice));
        ONEFIT_CUDA_CHECK(cudaMemcpy(data_.step_count, &program_.optimizer_step, sizeof(int64_t), cudaMemcpyHostToDevice));
    }

private:
    void launch(LaunchRange range) {
        if (!start_) {
            ONEFIT_CUDA_CHECK(cudaEventCreate(&start_));
            ONEFIT_CUDA_CHECK(cudaEventCreate(&stop_));
        }
        ONEFIT_CUDA_CHECK(cudaEventRecord(start_, graph_ ? graph_->stream() : nullptr));
        if (tiny_) {
            tiny_fit_kernel<<<1, kTinyThreads, smem_bytes_>>>(model_, data_, range);
            ++g_launches;
            ONEFIT_CUDA_CHECK(cudaGetLastError());
        } else {
            graph_->run(range);
        }
        ONEFIT_CUDA_CHECK(cudaEventRecord(stop_, graph_ ? graph_->stream() : nullptr));
        ONEFIT_CUDA_CHECK(cudaEventSynchronize(stop_));
        float ms = 0;
        ONEFIT_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
        g_device_ms = g_device_ms.load() + ms;
    }
    // The host reads back only the logs it reports: one copy per look.
    void read_logs(int64_t first, int64_t last) {
        ONEFIT_CUDA_CHECK(cudaMemcpy(logs_.data() + first, data_.logs + first, size_t(last - first) * sizeof(EpochLog),
                                     cudaMemcpyDeviceToHost));
    }

    TrainingProgram& program_;
    FitPlan plan_;
    DeviceModel model_{};
    DeviceData data_{};
    Arena arena_;
    std::vector<int64_t> epoch_first_step_;
    std::vector<EpochLog> logs_;
    bool has_validation_ = false, tiny_ = true;
    size_t smem_bytes_ = 0;
    std::unique_ptr<GraphFit> graph_;
    cudaEvent_t start_ = nullptr, stop_ = nullptr;
    int64_t epoch_ = 0, cursor_ = 0;

public:
    ~CudaFit() override {
        if (start_) cudaEventDestroy(start_);
        if (stop_) cudaEventDestroy(stop_);
    }
};

}  // namespace

bool available(std::string* why) {
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess || count == 0) {
        if (why) *why = status != cudaSuccess ? std::string("no usable GPU (") + cudaGetErrorString(status) + ")"
                                              : std::string("no GPU is visible");
        return false;
    }
    return true;
}

std::string describe() {
    std::string why;
    if (!available(&why)) return why;
    cudaDeviceProp prop{};
    int device = 0;
    ONEFIT_CUDA_CHECK(cudaGetDevice(&device));
    ONEFIT_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    return std::string(prop.name) + " (sm_" + std::to_string(prop.major) + std::to_string(prop.minor) + ", " +
           std::to_string(prop.totalGlobalMem >> 30) + " GiB)";
}

std::unique_ptr<DeviceProgram> make_cuda_fit(TrainingProgram& program, const FitPlan& plan,
                                             const std::vector<nn::Metric>& metrics) {
    return std::make_unique<CudaFit>(program, plan, metrics);
}

long long kernel_launches() { return g_launches.load(); }
double device_milliseconds() { return g_device_ms.load(); }

}  // namespace onefit::cuda
