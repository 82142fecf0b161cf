// The CUDA backend's host side: lowers the TrainingProgram for the GPU, uploads the data set,
// the whole batch schedule and the state in ONE transfer from pinned memory, and runs the fit
// with one launch per host look: one kernel (tiny models) or one graph (larger ones), for the
// whole fit or per epoch when nothing looks in between.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <type_traits>

#include "onefit/error.hpp"
#include "program/batch_schedule.hpp"
#include "program/packed_data.hpp"
#include "runtime/cuda/cuda_check.cuh"
#include "runtime/cuda/cuda_fit.hpp"
#include "runtime/cuda/device_layout.hpp"
#include "runtime/cuda/graph_fit.cuh"
#include "runtime/cuda/tiny_fit_kernel.cuh"

namespace onefit::cuda {
namespace {

std::atomic<double> g_device_ms{0.0};

struct StreamDestroy {
    void operator()(cudaStream_t s) const {
        cudaStreamSynchronize(s);
        cudaStreamDestroy(s);
    }
};
using StreamHandle = std::unique_ptr<std::remove_pointer_t<cudaStream_t>, StreamDestroy>;
struct EventDestroy {
    void operator()(cudaEvent_t e) const { cudaEventDestroy(e); }
};
using EventHandle = std::unique_ptr<std::remove_pointer_t<cudaEvent_t>, EventDestroy>;

// The losses the kernels compute (nn::sample_loss). Every kind is listed and there is no
// default: a new kind is a compiler warning here until the kernels compute it, and a value the
// device does not know is refused at construction, never computed as another loss.
bool device_computes(LossKind kind) {
    switch (kind) {
        case LossKind::log_cosh:
        case LossKind::mean_squared_error:
        case LossKind::mean_absolute_error:
        case LossKind::huber:
        case LossKind::binary_crossentropy:
        case LossKind::categorical_crossentropy:
        case LossKind::sparse_categorical_crossentropy: return true;
    }
    return false;
}

DeviceModel lower_for_device(const TrainingProgram& program, const std::vector<nn::Metric>& metrics, uint64_t seed) {
    if (program.ops.size() > size_t(kMaxOps))
        throw Error("device 'cuda': at most " + std::to_string(kMaxOps) + " layers are supported, the model has " +
                    std::to_string(program.ops.size()));
    if (!device_computes(program.loss.kind))
        throw Error("device 'cuda' does not compute the loss '" + loss_name(program.loss.kind) + "' (kind " +
                    std::to_string(int(program.loss.kind)) + "); use --device cpu");
    const Optimizer& o = program.optimizer;
    if (o.clipnorm > 0.0f || o.global_clipnorm > 0.0f || o.clipvalue > 0.0f)
        throw Error("device 'cuda' does not clip gradients (clipnorm, clipvalue, global_clipnorm) yet; use --device cpu");
    for (const ProgramOp& op : program.ops) {
        for (const ParamRef& p : op.params)
            if (p.regularizer.active())
                throw Error("device 'cuda' does not add weight regularizers (layer '" + op.layer_name + "') yet; use --device cpu");
        if (op.activity_regularizer().active())
            throw Error("device 'cuda' does not add activity regularizers (layer '" + op.layer_name + "') yet; use --device cpu");
    }
    if (program.loss.label_smoothing != 0.0f)
        throw Error("device 'cuda' does not smooth labels (label_smoothing) yet; use --device cpu");
    if (o.learning_rate_schedule.kind != ScheduleKind::constant)
        throw Error("device 'cuda' does not run learning-rate schedules (" + schedule_name(o.learning_rate_schedule.kind) +
                    ") yet; use --device cpu");
    if (program.graph)
        throw Error("device 'cuda' does not run Functional graphs (layer inputs other than the previous layer) yet; "
                    "use --device cpu");
    if (program.ops.back().kind != Layer::Kind::Dense)
        throw Error("device 'cuda' needs a Dense last layer, not '" + program.ops.back().layer_name + "'; use --device cpu");
    DeviceModel m{};
    m.n_ops = int(program.ops.size());
    for (int i = 0; i < m.n_ops; ++i) {
        const ProgramOp& op = program.ops[size_t(i)];
        if (op.kind != Layer::Kind::Dense && op.kind != Layer::Kind::Dropout)
            throw Error("device 'cuda' does not run layer '" + op.layer_name + "'; use --device cpu");
        DeviceOp& d = m.ops[i];
        d.kind = op.kind;
        d.in = int(op.in_width);
        d.out = int(op.out_width);
        d.activation = op.dense.activation;
        d.use_bias = op.dense.use_bias;
        d.out_major = op.dense.out_major;
        d.weight = op.dense.weight;
        d.bias = op.dense.bias;
        d.rate = op.layer.rate;
    }
    m.loss = program.loss;
    m.loss_takes_logits = program.loss_takes_logits;
    m.output_width = int(program.output_width);
    m.optimizer = program.optimizer;
    m.n_params = program.param_count();
    m.n_slots = nn::optimizer_slot_count(program.optimizer);
    m.n_metrics = int(metrics.size());
    for (size_t k = 0; k < metrics.size(); ++k) m.metrics[k] = metrics[k].kind;
    m.dropout_seed = seed;
    return m;
}

// One device allocation holding every array of the fit (device_layout.hpp). Each array is
// written once, straight into pinned staging memory at its offset (the caller's features
// included: no intermediate copy), then copied with a single transfer; the staging memory is
// freed right after.
class Arena {
public:
    explicit Arena(size_t bytes) : bytes_(bytes) {
        size_t free_bytes = 0, total_bytes = 0;
        ONEFIT_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
        if (bytes > free_bytes)
            throw Error("device 'cuda': the fit needs " + std::to_string(bytes >> 20) + " MiB of GPU memory, " +
                        std::to_string(free_bytes >> 20) + " MiB are free");
        void* device = nullptr;
        ONEFIT_CUDA_CHECK(cudaMalloc(&device, bytes));
        device_.reset(static_cast<char*>(device));
        ONEFIT_CUDA_CHECK(cudaMallocHost(&pinned_, bytes));
    }
    Arena(const Arena&) = delete;
    Arena& operator=(const Arena&) = delete;
    ~Arena() {
        if (pinned_) cudaFreeHost(pinned_);
    }
    template <class T>
    void write(size_t offset, const T* data, size_t count) {
        if (count) std::memcpy(static_cast<char*>(pinned_) + offset, data, count * sizeof(T));
    }
    template <class T>
    void write(size_t offset, const std::vector<T>& v) { write(offset, v.data(), v.size()); }
    void upload() {  // from pinned memory: synchronous, so the staging can go at once
        ONEFIT_CUDA_CHECK(cudaMemcpy(device_.get(), pinned_, bytes_, cudaMemcpyHostToDevice));
        ONEFIT_CUDA_CHECK(cudaFreeHost(pinned_));
        pinned_ = nullptr;
    }
    template <class T>
    T* at(size_t offset) const { return reinterpret_cast<T*>(device_.get() + offset); }

private:
    size_t bytes_;
    DeviceMemory<char> device_;
    void* pinned_ = nullptr;
};

class CudaFit final : public DeviceProgram {
public:
    CudaFit(TrainingProgram& program, const FitPlan& plan, const std::vector<nn::Metric>& metrics)
        : program_(program), plan_(plan), model_(lower_for_device(program, metrics, plan.seed ^ 0x44524f50ull)) {
        std::string why;
        if (!available(&why)) throw Error("device 'cuda' is not available: " + why + "; use --device cpu");
        const int64_t rows = plan.dataset ? plan.dataset->x().rows() : plan.x.rows;
        BatchSchedule schedule(plan_, rows);
        const int64_t max_rows = std::max(schedule.max_batch_rows(), max_validation_batch(plan));
        // Features stay views of the caller's rows (PackedData copies only labels).
        const PackedData<float> data = pack_fit_data<float>(program, plan, max_rows);

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
        const std::vector<int32_t> val_batches(data.val_batches.begin(), data.val_batches.end());
        has_validation_ = !val_batches.empty();
        logs_.assign(size_t(plan.epochs), EpochLog{});
        const int64_t step = program.optimizer_step;

        const ArenaCounts counts{data.x.size(),        data.y.size(),       order.size(),
                                 batch_start.size(),   batch_rows.size(),   epoch_first.size(),
                                 data.val_x.size(),    data.val_y.size(),   val_batches.size(),
                                 program.params.size(), program.optimizer_slots.size(), logs_.size()};
        const ArenaLayout l = arena_layout(counts, sizeof(EpochLog));
        arena_ = std::make_unique<Arena>(l.layout.total_bytes());
        Arena& a = *arena_;
        a.write(l.x, data.x.data(), data.x.size());
        a.write(l.y, data.y.data(), data.y.size());
        a.write(l.order, order);
        a.write(l.batch_start, batch_start);
        a.write(l.batch_rows, batch_rows);
        a.write(l.epoch_first, epoch_first);
        a.write(l.val_x, data.val_x.data(), data.val_x.size());
        a.write(l.val_y, data.val_y.data(), data.val_y.size());
        a.write(l.val_batches, val_batches);
        a.write(l.params, program.params);
        a.write(l.slots, program.optimizer_slots);
        a.write(l.step, &step, 1);
        a.write(l.logs, logs_);
        a.upload();
        data_ = DeviceData{a.at<float>(l.x), a.at<float>(l.y), int(data.x_width), int(data.y_width),
                           a.at<int32_t>(l.order), a.at<int64_t>(l.batch_start), a.at<int32_t>(l.batch_rows),
                           a.at<int64_t>(l.epoch_first), a.at<float>(l.val_x), a.at<float>(l.val_y),
                           a.at<int32_t>(l.val_batches), int(val_batches.size()), int(max_rows),
                           a.at<float>(l.params), a.at<float>(l.slots), a.at<int64_t>(l.step),
                           a.at<EpochLog>(l.logs)};

        cudaStream_t stream = nullptr;
        ONEFIT_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        stream_owner_.reset(stream);
        stream_ = stream;
        for (EventHandle* e : {&start_, &stop_}) {
            cudaEvent_t event = nullptr;
            ONEFIT_CUDA_CHECK(cudaEventCreate(&event));
            e->reset(event);
        }
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
            graph_ = std::make_unique<GraphFit>(model_, data_, batch_rows, val_batches, stream_);
    }

    // Tiny models: one launch that stops on the device after a non-finite epoch. Graphs: one
    // launch per epoch and a look at its loss before the next (a few microseconds of sync
    // against an epoch of milliseconds).
    int64_t run_epochs(int64_t first, int64_t last) override {
        if (tiny_) {
            timed([&] { launch_tiny(whole_run(first, last)); });
            return finish_whole_run(first, last);
        }
        for (int64_t e = first; e < last; ++e) {
            timed([&] { graph_->run_steps(step_of(e), step_of(e + 1), true); });
            read_logs(e, e + 1);
            if (!finite_loss(logs_[size_t(e)])) return e + 1;
        }
        return last;
    }
    void begin_epoch(int64_t epoch) override {
        epoch_ = epoch;
        cursor_ = step_of(epoch);
    }
    int64_t steps_in_epoch() const override { return step_of(epoch_ + 1) - step_of(epoch_); }
    // A chunk of an epoch (a live progress bar's ~30 per epoch): one kernel, or one graph (the
    // chunks of every epoch have the same batch sizes, so two or three graphs serve them all).
    void train_steps(int64_t count) override {
        if (tiny_)
            timed([&] { launch_tiny({cursor_, cursor_ + count, false, -1, false}); });
        else
            timed([&] { graph_->run_steps(cursor_, cursor_ + count, false); });
        cursor_ += count;
        read_logs(epoch_, epoch_ + 1);
    }
    void end_epoch() override {
        if (has_validation_) {
            if (tiny_)
                timed([&] { launch_tiny({0, 0, false, int(epoch_), false}); });
            else
                timed([&] { graph_->run_validation(); });
        }
        read_logs(epoch_, epoch_ + 1);
    }
    const std::vector<EpochLog>& logs() override { return logs_; }
    bool has_validation() const override { return has_validation_; }
    // Copies on the fit's stream, so they are ordered after the launches before them (the
    // legacy default stream does not wait for a non-blocking stream).
    void store_state() override {
        copy(program_.params.data(), data_.params, program_.params.size(), cudaMemcpyDeviceToHost);
        copy(program_.optimizer_slots.data(), data_.slots, program_.optimizer_slots.size(), cudaMemcpyDeviceToHost);
        copy(&program_.optimizer_step, data_.step_count, 1, cudaMemcpyDeviceToHost);
        ONEFIT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    }
    // Everything a launch reads of the state is in device memory (the graphs read the step
    // count there too), so new weights need nothing recaptured.
    void load_state() override {
        copy(data_.params, program_.params.data(), program_.params.size(), cudaMemcpyHostToDevice);
        copy(data_.slots, program_.optimizer_slots.data(), program_.optimizer_slots.size(), cudaMemcpyHostToDevice);
        copy(data_.step_count, &program_.optimizer_step, 1, cudaMemcpyHostToDevice);
        ONEFIT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    }

    // For fit_members: whether one block holds the fit, with how much shared memory, its model
    // and device data, the launch that runs epochs [first, last) at once, and what run_epochs
    // does after that launch (read the logs; the epoch after the last that ran).
    bool tiny() const { return tiny_; }
    size_t shared_bytes() const { return smem_bytes_; }
    const DeviceModel& device_model() const { return model_; }
    const DeviceData& device_data() const { return data_; }
    const std::vector<int64_t>& epoch_first_steps() const { return epoch_first_step_; }
    LaunchRange whole_run(int64_t first, int64_t last) const { return {step_of(first), step_of(last), true, -1, true}; }
    int64_t finish_whole_run(int64_t first, int64_t last) {
        read_logs(first, last);
        for (int64_t e = first; e < last; ++e)
            if (!finite_loss(logs_[size_t(e)])) return e + 1;  // where the kernel stopped
        return last;
    }

    cudaStream_t stream() const { return stream_; }
    // Runs what f enqueues (on stream()) and waits for it; its GPU time (CUDA events) goes to
    // device_milliseconds().
    template <class F>
    void timed(F&& f) {
        ONEFIT_CUDA_CHECK(cudaEventRecord(start_.get(), stream_));
        f();
        ONEFIT_CUDA_CHECK(cudaEventRecord(stop_.get(), stream_));
        ONEFIT_CUDA_CHECK(cudaEventSynchronize(stop_.get()));
        float ms = 0;
        ONEFIT_CUDA_CHECK(cudaEventElapsedTime(&ms, start_.get(), stop_.get()));
        g_device_ms = g_device_ms.load() + ms;
    }

private:
    int64_t step_of(int64_t epoch) const { return epoch_first_step_[size_t(epoch)]; }

    void launch_tiny(LaunchRange range) {
        tiny_fit_kernel<<<1, kTinyThreads, smem_bytes_, stream_>>>(model_, data_, range);
        ONEFIT_CUDA_CHECK_LAUNCH();
    }
    template <class T>
    void copy(T* to, const T* from, size_t count, cudaMemcpyKind kind) {
        ONEFIT_CUDA_CHECK(cudaMemcpyAsync(to, from, count * sizeof(T), kind, stream_));
    }
    // The host reads back only the logs it reports: one copy per look.
    void read_logs(int64_t first, int64_t last) {
        copy(logs_.data() + first, data_.logs + first, size_t(last - first), cudaMemcpyDeviceToHost);
        ONEFIT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    }

    TrainingProgram& program_;
    FitPlan plan_;
    DeviceModel model_{};
    DeviceData data_{};
    std::unique_ptr<Arena> arena_;
    std::vector<int64_t> epoch_first_step_;
    std::vector<EpochLog> logs_;
    bool has_validation_ = false, tiny_ = true;
    size_t smem_bytes_ = 0;
    // Declared before graph_, so destroyed after it: its graphs run on this stream.
    StreamHandle stream_owner_;
    cudaStream_t stream_ = nullptr;
    EventHandle start_, stop_;
    std::unique_ptr<GraphFit> graph_;
    int64_t epoch_ = 0, cursor_ = 0;
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

static void check_unweighted(const FitPlan& plan) {
    if (plan.weighted())
        throw Error("device 'cuda' does not weight samples (sample_weight, class_weight) yet; use --device cpu");
}

static void check_metrics(const std::vector<nn::Metric>& metrics) {
    for (const nn::Metric& m : metrics) {
        if (m.counts)
            throw Error("device 'cuda' does not compute the metric '" + m.name +
                        "' (an epoch-level ratio: Precision, Recall, AUC, R2Score) yet; use --device cpu");
        if (m.k != nn::kTopK)
            throw Error("device 'cuda' computes top-k accuracy at Keras's default k=5 only, not the metric '" + m.name +
                        "'; use --device cpu");
    }
}

std::unique_ptr<DeviceProgram> make_cuda_fit(TrainingProgram& program, const FitPlan& plan,
                                             const std::vector<nn::Metric>& metrics) {
    check_unweighted(plan);
    check_metrics(metrics);
    return std::make_unique<CudaFit>(program, plan, metrics);
}

std::vector<MemberResult> fit_members(const std::vector<TrainingProgram*>& members, const std::vector<FitPlan>& plans,
                                      const std::vector<nn::Metric>& metrics, int64_t first, int64_t last) {
    // Each member set up as its own fit would be (its arena uploaded), the first alone until it
    // is known to fit one block.
    check_metrics(metrics);
    std::vector<std::unique_ptr<CudaFit>> fits;
    fits.push_back(std::make_unique<CudaFit>(*members.front(), plans.front(), metrics));
    if (!fits.front()->tiny()) return {};
    for (size_t k = 1; k < members.size(); ++k) {
        check_unweighted(plans[k]);
        fits.push_back(std::make_unique<CudaFit>(*members[k], plans[k], metrics));
        const CudaFit& f = *fits.back();
        if (!f.tiny() || f.shared_bytes() != fits.front()->shared_bytes() ||
            f.epoch_first_steps() != fits.front()->epoch_first_steps())
            throw Error("device 'cuda': sweep members of one launch must share their shape and schedule (member " +
                        std::to_string(k + 1) + " differs)");
    }
    // Block k reads member k's model and device pointers from these arrays.
    std::vector<DeviceModel> models;
    std::vector<DeviceData> data;
    for (const auto& f : fits) models.push_back(f->device_model()), data.push_back(f->device_data());
    void* raw = nullptr;
    ONEFIT_CUDA_CHECK(cudaMalloc(&raw, models.size() * sizeof(DeviceModel)));
    const DeviceMemory<DeviceModel> device_models(static_cast<DeviceModel*>(raw));
    ONEFIT_CUDA_CHECK(cudaMalloc(&raw, data.size() * sizeof(DeviceData)));
    const DeviceMemory<DeviceData> device_data(static_cast<DeviceData*>(raw));
    ONEFIT_CUDA_CHECK(cudaMemcpy(device_models.get(), models.data(), models.size() * sizeof(DeviceModel),
                                 cudaMemcpyHostToDevice));
    ONEFIT_CUDA_CHECK(cudaMemcpy(device_data.get(), data.data(), data.size() * sizeof(DeviceData), cudaMemcpyHostToDevice));

    const size_t shared = fits.front()->shared_bytes();
    ONEFIT_CUDA_CHECK(cudaFuncSetAttribute(tiny_members_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared)));
    // On the first member's stream, timed as its own launches are (the uploads above are done).
    CudaFit& lead = *fits.front();
    lead.timed([&] {
        tiny_members_kernel<<<unsigned(fits.size()), kTinyThreads, shared, lead.stream()>>>(
            device_models.get(), device_data.get(), lead.whole_run(first, last));
        ONEFIT_CUDA_CHECK_LAUNCH();
    });

    std::vector<MemberResult> results(fits.size());
    for (size_t k = 0; k < fits.size(); ++k) {
        results[k].end_epoch = fits[k]->finish_whole_run(first, last);
        results[k].logs = fits[k]->logs();
        fits[k]->store_state();  // parameters, optimizer state and step count back into the member
    }
    return results;
}

double device_milliseconds() { return g_device_ms.load(); }

}  // namespace onefit::cuda
