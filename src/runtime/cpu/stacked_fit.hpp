// Members in lanes: up to kLanes models of one shape (a sweep's learning rates and seeds) train
// side by side, lane m of every vector being member m. Every scalar of a member's fit (a
// weight, an activation, a gradient) becomes one lane of a vector, so layers too narrow to fill
// a vector on their own (the seed's Dense(3), its softmax and loss over rows of 3) run at full
// width, and the step loop's fixed costs are paid once for all the members.
//
// Each member's bits equal its fit alone (CpuFit): every value is computed by the same
// operations in the same order as the single-member kernels compute it. Those kernels keep
// per-element work lane-independent (fma chains in a fixed order); where they sum across lanes
// they use nn::lanes_tree_sum's order, which the dot products here repeat lane by lane, padding
// included (adding +0 turns -0 into +0). Elementwise work (activations, losses, the optimizer)
// calls the very same per-element functions, vectorised across members instead of elements.
// tests/train/sweep_test.cpp holds every member to its fit alone, bit for bit.
//
// What it covers (can_stack): Dense layers on the register kernels (no BLAS), any activation
// (softmax on the last layer only), every loss (crossentropies fused with their softmax or
// sigmoid as in a single fit), every optimizer, Dropout (not first), arrays (not Datasets). Members that
// see the same batches (unshuffled, or one shuffle seed) share the batch's features; members
// shuffled by their own seeds gather their own rows into lanes. Anything else fits member by
// member.
// Re-included once per SIMD target (core/simd.hpp): a toggle guard, not #pragma once.
#if defined(ONEFIT_RUNTIME_CPU_STACKED_FIT_HPP) == defined(HWY_TARGET_TOGGLE)
#ifdef ONEFIT_RUNTIME_CPU_STACKED_FIT_HPP
#undef ONEFIT_RUNTIME_CPU_STACKED_FIT_HPP
#else
#define ONEFIT_RUNTIME_CPU_STACKED_FIT_HPP
#endif
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "core/denormals.hpp"
#include "program/batch_schedule.hpp"
#include "program/packed_data.hpp"
#include "runtime/cpu/cpu_executor.hpp"
#include "runtime/cpu/cpu_simd.hpp"
#include "core/simd.hpp"

ONEFIT_SIMD_BEGIN(cpu)

namespace hn = hwy::HWY_NAMESPACE;

// Whether members of this program fitted on this plan can share lanes.
inline bool can_stack(const TrainingProgram& program, const FitPlan& plan) {
    if (plan.dataset || plan.val_dataset) return false;
    if (plan.sample_weight || plan.val_sample_weight) return false;  // (the lanes' losses are unweighted)
    if (nn::clips_gradients(program.optimizer)) return false;  // (clipping needs each member's norms: fits alone)
    if (program.optimizer.learning_rate_schedule.kind != ScheduleKind::constant) return false;  // (lanes' rates are constants)
    if (program.loss.label_smoothing != 0.0f) return false;  // (the lanes' losses take labels as given)
    if (program.graph) return false;  // (the lanes run chains)
    for (const std::string& name : program.metric_names)  // (the lanes sum per-sample metrics only)
        if (nn::resolve_metric(name, program.output_width, plan.y_width).counts) return false;
    for (const ProgramOp& op : program.ops) {
        for (const ParamRef& p : op.params)
            if (p.regularizer.active()) return false;  // (weight penalties: fits alone)
        if (op.activity_regularizer().active()) return false;
    }
    for (size_t i = 0; i < program.ops.size(); ++i) {
        const ProgramOp& op = program.ops[i];
        if (op.kind != Layer::Kind::Dense && op.kind != Layer::Kind::Dropout) return false;  // image ops fit alone
        if (op.kind == Layer::Kind::Dropout && i == 0) return false;  // (its input would be the shared batch)
        if (op.kind == Layer::Kind::Dense && op.dense.use_blas) return false;
        if (op.dense.activation == Activation::softmax && i + 1 != program.ops.size()) return false;
    }
    if (program.ops.back().kind != Layer::Kind::Dense) return false;  // (the lanes' loss reads a Dense's outputs)
    const int64_t y_width = packed_label_width(program, plan.y_width);
    const bool elementwise = !nn::is_row_loss(program.loss.kind) && !program.loss_takes_logits;
    if (elementwise && y_width != program.output_width) return false;
    BatchSchedule schedule(plan, plan.x.rows);
    const int64_t rows = std::max(schedule.max_batch_rows(), max_validation_batch(plan));
    // The single-member executor must not split its batches (it never does for layers this small).
    return CpuExecutor<float>(program, rows, {}, y_width, 0).tail_begin() == program.ops.size();
}

class StackedFit {
public:
    static constexpr int64_t L = simd::kLanes;
    using D = simd::D;
    using V = simd::V;

    // members: 1 to L programs of one shape and optimizer kind (a sweep's); plans: each
    // member's, alike but for their seeds (shuffle, dropout) and data (a k-fold's folds, with
    // as many training and validation rows each). Lanes past the members repeat the last one;
    // their results are dropped.
    StackedFit(const std::vector<TrainingProgram*>& members, const std::vector<FitPlan>& plans,
               const std::vector<nn::Metric>& metrics)
        : members_(members), program_(*members.front()), plan_(plans.front()), metrics_(metrics),
          schedule_(plan_, plan_.x.rows),
          max_rows_(std::max(schedule_.max_batch_rows(), max_validation_batch(plan_))),
          data_(pack_fit_data<float>(program_, plan_, max_rows_)) {
        const auto same_data = [](const FitPlan& a, const FitPlan& b) {
            return a.x.data == b.x.data && a.y == b.y && a.val_x.data == b.val_x.data && a.val_y == b.val_y;
        };
        lane_data_.reserve(plans.size());  // (lane_ points into it)
        for (int64_t m = 0; m < L; ++m) {
            const size_t member = static_cast<size_t>(std::min<int64_t>(m, static_cast<int64_t>(plans.size()) - 1));
            const FitPlan& p = plans[member];
            dropout_seed_[m] = p.seed ^ 0x44524f50ull;  // as CpuFit's
            own_batches_ = own_batches_ || (p.shuffle && p.seed != plan_.seed);
            if (same_data(p, plan_)) {
                lane_[m] = &data_;
            } else if (m > 0 && same_data(p, plans[static_cast<size_t>(std::min<int64_t>(m - 1, member))])) {
                lane_[m] = lane_[m - 1];  // (a fold's members are consecutive; lanes past them repeat the last)
            } else {
                lane_[m] = &lane_data_.emplace_back(pack_fit_data<float>(program_, p, max_rows_));
                own_data_ = true;
            }
            if (m > 0) lane_schedules_.push_back(std::make_unique<BatchSchedule>(p, p.x.rows));
        }
        own_batches_ = own_batches_ || own_data_;
        if (!own_batches_) lane_schedules_.clear();
        const int64_t n = program_.param_count(), slots = nn::optimizer_slot_count(program_.optimizer);
        params_.resize(static_cast<size_t>(n * L)), grads_.resize(params_.size());
        slots_.resize(static_cast<size_t>(n * slots * L));
        for (int64_t m = 0; m < L; ++m) {
            const TrainingProgram& p = lane_program(m);
            for (int64_t i = 0; i < n; ++i) params_[static_cast<size_t>(i * L + m)] = p.params[static_cast<size_t>(i)];
            for (int64_t i = 0; i < n * slots; ++i)
                slots_[static_cast<size_t>(i * L + m)] = p.optimizer_slots[static_cast<size_t>(i)];
        }
        step_ = program_.optimizer_step;
        for (const ProgramOp& op : program_.ops) {
            const size_t size = static_cast<size_t>(max_rows_ * op.out_width * L);
            const bool dropout = op.kind == Layer::Kind::Dropout;
            z_.emplace_back(dropout ? 0 : size), da_.emplace_back(size), mask_.emplace_back(dropout ? size : 0);
            a_.emplace_back(!dropout && op.dense.activation == Activation::linear ? 0 : size);
        }
        values_.resize(static_cast<size_t>(max_rows_ * program_.output_width * L));
        member_out_.resize(static_cast<size_t>(max_rows_ * program_.output_width));
        batch_x_.resize(static_cast<size_t>(max_rows_ * data_.x_width * (own_batches_ ? L : 1)));
        lane_y_.resize(static_cast<size_t>(max_rows_ * data_.y_width * L));
        member_y_.resize(static_cast<size_t>(max_rows_ * data_.y_width));
        results_.resize(members.size());
        for (StackedResult& r : results_) r.logs.resize(static_cast<size_t>(plan_.epochs)), r.end_epoch = -1;
    }

    // Epochs [first, last); a member stops after an epoch whose training loss is not finite, as
    // CpuFit::run_epochs does, keeping that epoch's state. Writes every member's state back.
    std::vector<StackedResult> run(int64_t first, int64_t last) {
        DenormalsAreZero denormals;
        for (int64_t epoch = first; epoch < last; ++epoch) {
            epoch_ = epoch;
            const int64_t steps = schedule_.begin_epoch();  // every lane's schedule has the same batch sizes
            for (auto& lane : lane_schedules_) lane->begin_epoch();
            for (int64_t s = 0; s < steps; ++s) train_step(schedule_.next_batch());
            validate();
            bool running = false;
            for (size_t m = 0; m < results_.size(); ++m) {
                if (results_[m].end_epoch >= 0) continue;
                if (!std::isfinite(results_[m].logs[static_cast<size_t>(epoch)].train.loss)) {
                    results_[m].end_epoch = epoch + 1;
                    store_member(m);
                } else {
                    running = true;
                }
            }
            if (!running) break;
        }
        for (size_t m = 0; m < results_.size(); ++m)
            if (results_[m].end_epoch < 0) results_[m].end_epoch = last, store_member(m);
        return results_;
    }

private:
    const TrainingProgram& lane_program(int64_t m) const {
        return *members_[static_cast<size_t>(std::min<int64_t>(m, static_cast<int64_t>(members_.size()) - 1))];
    }

    void store_member(size_t m) {
        TrainingProgram& p = *members_[m];
        const int64_t n = p.param_count();
        for (int64_t i = 0; i < n; ++i) p.params[static_cast<size_t>(i)] = params_[static_cast<size_t>(i * L) + m];
        for (size_t i = 0; i < p.optimizer_slots.size(); ++i) p.optimizer_slots[i] = slots_[i * L + m];
        p.optimizer_step = step_;
    }

    // The first op's input: the batch's features shared by every member, or each member's own
    // rows lane by lane (lanes true).
    struct Input {
        const float* x;
        bool lanes;
    };

    void train_step(const ScheduledBatch& b) {
        const int64_t xw = data_.x_width, yw = data_.y_width, rows = b.count;
        const float* x = data_.x.data() + b.first_row * xw;
        if (own_batches_) {  // each member its own shuffle or data: gather its rows into its lane
            for (int64_t m = 0; m < L; ++m) {
                const ScheduledBatch mine = m == 0 ? b : lane_schedules_[static_cast<size_t>(m - 1)]->next_batch();
                const PackedData<float>& d = *lane_[m];
                for (int64_t r = 0; r < rows; ++r)
                    gather_row(d.x.data(), d.y.data(), mine.rows ? mine.rows[r] : mine.first_row + r, r, m);
            }
        } else if (b.rows) {  // one shuffle for all members: gather the batch's rows once
            for (int64_t r = 0; r < rows; ++r) {
                std::memcpy(batch_x_.data() + r * xw, data_.x.data() + b.rows[r] * xw, sizeof(float) * xw);
                broadcast_labels(data_.y.data() + b.rows[r] * yw, 1, r);
            }
            x = batch_x_.data();
        } else {
            broadcast_labels(data_.y.data() + b.first_row * yw, rows, 0);
        }
        const Input in{own_batches_ ? batch_x_.data() : x, own_batches_};
        const int64_t n = static_cast<int64_t>(program_.ops.size());
        for (int64_t i = 0; i < n; ++i) forward_op(i, in, rows);
        loss_and_output_gradient<true>(rows, [&](size_t m) -> LogSums& {
            return results_[m].logs[static_cast<size_t>(epoch_)].train;
        });
        for (int64_t i = n; i-- > 0;) {
            if (i + 1 < n && program_.ops[static_cast<size_t>(i)].kind == Layer::Kind::Dense) activation_backward_op(i, rows);
            params_backward_op(i, in, rows);
        }
        ++step_;
        optimizer_update();
    }

    void validate() {
        int64_t row = 0;
        for (int64_t rows : data_.val_batches) {
            Input in{data_.val_x.data() + row * data_.x_width, false};
            if (own_data_) {  // each member its own validation rows
                for (int64_t m = 0; m < L; ++m)
                    for (int64_t r = 0; r < rows; ++r) gather_row(lane_[m]->val_x.data(), lane_[m]->val_y.data(), row + r, r, m);
                in = {batch_x_.data(), true};
            } else {
                broadcast_labels(data_.val_y.data() + row * data_.y_width, rows, 0);
            }
            for (size_t i = 0; i < program_.ops.size(); ++i) forward_op(static_cast<int64_t>(i), in, rows, false);
            loss_and_output_gradient<false>(rows, [&](size_t m) -> LogSums& {
                return results_[m].logs[static_cast<size_t>(epoch_)].validation;
            });
            row += rows;
        }
    }

    // Labels of `rows` rows (the same for every member) into every lane, from batch row `first`.
    void broadcast_labels(const float* y, int64_t rows, int64_t first) {
        float* dst = lane_y_.data() + first * data_.y_width * L;
        for (int64_t e = 0; e < rows * data_.y_width; ++e) hn::StoreU(hn::Set(D(), y[e]), D(), dst + e * L);
    }
    // Row `row` of features x and labels y into batch row r of lane m.
    void gather_row(const float* x, const float* y, int64_t row, int64_t r, int64_t m) {
        const int64_t xw = data_.x_width, yw = data_.y_width;
        for (int64_t k = 0; k < xw; ++k) batch_x_[static_cast<size_t>((r * xw + k) * L + m)] = x[row * xw + k];
        for (int64_t j = 0; j < yw; ++j) lane_y_[static_cast<size_t>((r * yw + j) * L + m)] = y[row * yw + j];
    }

    float* out(int64_t i) { return a_[static_cast<size_t>(i)].empty() ? z_[static_cast<size_t>(i)].data() : a_[static_cast<size_t>(i)].data(); }
    const float* weights(const DenseOp& d) const { return params_.data() + d.weight * L; }

    // Op i's input at (row r, column k): the batch's feature, the same for every member, or the
    // members' own rows or the previous op's output, lane by lane.
    template <class F>
    void with_input(int64_t i, const Input& input, F&& f) {
        const int64_t width = program_.ops[static_cast<size_t>(i)].in_width;
        const float* x = input.x;
        if (i == 0 && !input.lanes) return f([=](int64_t r, int64_t k) { return hn::Set(D(), x[r * width + k]); });
        const float* prev = i == 0 ? x : out(i - 1);
        f([=](int64_t r, int64_t k) { return hn::LoadU(D(), prev + (r * width + k) * L); });
    }

    // sum_k a(k) b(k) for k < len as the single-member kernels' dot products compute it: lane
    // i of their vector accumulates k = i, i + kLanes, ... (an fma with zeros past len), then
    // the lanes are summed in lanes_tree_sum's order.
    template <class A, class B>
    static V lane_dot(A&& a, B&& b, int64_t len) {
        V part[L];
        for (int64_t i = 0; i < L; ++i) part[i] = hn::Zero(D());
        int64_t base = 0;
        for (; base + L <= len; base += L)  // whole vectors: no test per lane
            for (int64_t i = 0; i < L; ++i) part[i] = hn::MulAdd(a(base + i), b(base + i), part[i]);
        if (base < len)
            for (int64_t i = 0; i < L; ++i)
                part[i] = base + i < len ? hn::MulAdd(a(base + i), b(base + i), part[i]) : hn::Add(part[i], hn::Zero(D()));
        return nn::lanes_tree_sum(part);
    }

    // Inverted dropout with each member's own mask (its seed's key), as CpuExecutor draws it.
    void dropout_forward(int64_t i, int64_t rows, bool training) {
        const ProgramOp& op = program_.ops[static_cast<size_t>(i)];
        const float rate = op.layer.rate, keep = nn::dropout_keep_scale<float>(rate);
        uint64_t key[L];
        for (int64_t m = 0; m < L; ++m) key[m] = dropout_key(dropout_seed_[m], step_, i);
        const float* in = out(i - 1);
        float* mask = mask_[static_cast<size_t>(i)].data();
        float* o = a_[static_cast<size_t>(i)].data();
        for (int64_t e = 0; e < rows * op.out_width; ++e)
            for (int64_t m = 0; m < L; ++m) {
                mask[e * L + m] = nn::dropout_mask<float>(training, rate, keep, key[m], static_cast<uint64_t>(e));
                o[e * L + m] = in[e * L + m] * mask[e * L + m];
            }
    }

    void forward_op(int64_t i, const Input& x, int64_t rows, bool training = true) {
        if (program_.ops[static_cast<size_t>(i)].kind == Layer::Kind::Dropout) return dropout_forward(i, rows, training);
        const DenseOp d = program_.ops[static_cast<size_t>(i)].dense;  // a copy: no reloads after stores
        const float* w = weights(d);
        const float* bias = d.use_bias ? params_.data() + d.bias * L : nullptr;
        float* z = z_[static_cast<size_t>(i)].data();
        float* a = a_[static_cast<size_t>(i)].data();
        // The single-member forward fuses relu into its register kernel (in-major, in <= 8, out <= 32).
        const bool fused_relu = d.activation == Activation::relu && !d.out_major && d.in <= 8 && d.out <= 32;
        const auto b_at = [&](int64_t j) { return bias ? hn::LoadU(D(), bias + j * L) : hn::Zero(D()); };
        with_input(i, x, [&](auto in) {
            if (d.out_major) {
                for (int64_t r = 0; r < rows; ++r)
                    for (int64_t j = 0; j < d.out; ++j) {  // z = b + dot(x row, W row j)
                        const float* wj = w + j * d.in * L;
                        const V s = lane_dot([&](int64_t k) { return in(r, k); },
                                             [&](int64_t k) { return hn::LoadU(D(), wj + k * L); }, d.in);
                        hn::StoreU(hn::Add(b_at(j), s), D(), z + (r * d.out + j) * L);
                    }
                return;
            }
            // z = b, then fma over k in order; blocks of rows x columns share their loads.
            in_blocks<2>(rows, [&]<int RB>(int64_t r0) {
                in_blocks<4>(d.out, [&]<int B>(int64_t j0) {
                    V acc[RB][B];
                    for (int p = 0; p < RB; ++p)
                        for (int q = 0; q < B; ++q) acc[p][q] = b_at(j0 + q);
                    for (int64_t k = 0; k < d.in; ++k) {
                        V xk[RB];
                        for (int p = 0; p < RB; ++p) xk[p] = in(r0 + p, k);
                        for (int q = 0; q < B; ++q) {
                            const V wkj = hn::LoadU(D(), w + (k * d.out + j0 + q) * L);
                            for (int p = 0; p < RB; ++p) acc[p][q] = hn::MulAdd(xk[p], wkj, acc[p][q]);
                        }
                    }
                    for (int p = 0; p < RB; ++p)
                        for (int q = 0; q < B; ++q) {
                            const int64_t e = (r0 + p) * d.out + j0 + q;
                            hn::StoreU(acc[p][q], D(), z + e * L);
                            if (fused_relu) hn::StoreU(hn::Max(acc[p][q], hn::Zero(D())), D(), a + e * L);
                        }
                });
            });
        });
        if (fused_relu || d.activation == Activation::linear) return;
        if (d.activation == Activation::softmax) {
            // A compile-time width unrolls the row's loops, so the loop over members vectorises.
            nn::with_small_width(d.out, [&]<int W>() {
                const int64_t width = W ? W : d.out;
                for (int64_t r = 0; r < rows; ++r)
#pragma omp simd
                    for (int64_t m = 0; m < L; ++m)
                        nn::softmax_row<float, L>(z + r * width * L + m, a + r * width * L + m, width);
            });
            return;
        }
        nn::activation_forward(d.activation, z, a, 1, rows * d.out * L);  // elementwise: the layout does not matter
    }

    // The loss of every member over the batch into its sums (and metrics), and with kGrad dL/dz
    // of the last op into its da: CpuExecutor's output_loss, activation backward and add_metrics.
    template <bool kGrad, class Sums>
    void loss_and_output_gradient(int64_t rows, Sums&& sums_of) {
        const float* y = lane_y_.data();
        const int64_t yw = data_.y_width;
        const int64_t last = static_cast<int64_t>(program_.ops.size()) - 1, width = program_.output_width;
        const DenseOp& d = program_.ops.back().dense;
        const float* p = out(last);
        float* grad = da_.back().data();
        double loss[L];
        batch_loss<kGrad>(program_.loss_takes_logits ? z_.back().data() : p, y, rows, loss);
        for (size_t m = 0; m < results_.size(); ++m) {
            LogSums& s = sums_of(m);
            s.loss += loss[m];
            s.samples += rows;
            if (metrics_.empty()) continue;
            for (int64_t e = 0; e < rows * width; ++e) member_out_[static_cast<size_t>(e)] = p[e * L + static_cast<int64_t>(m)];
            for (int64_t e = 0; e < rows * yw; ++e) member_y_[static_cast<size_t>(e)] = y[e * L + static_cast<int64_t>(m)];
            for (size_t k = 0; k < metrics_.size(); ++k)
                s.metrics[k] += nn::metric_sum(metrics_[k].kind, member_out_.data(), member_y_.data(), rows, width, yw, metrics_[k].k);
        }
        if constexpr (kGrad) {
            if (program_.loss_takes_logits) return;  // the loss gave dL/dz
            if (d.activation == Activation::softmax) {
                nn::with_small_width(width, [&]<int W>() {
                    const int64_t w = W ? W : width;
                    for (int64_t r = 0; r < rows; ++r)
#pragma omp simd
                        for (int64_t m = 0; m < L; ++m)
                            nn::softmax_backward_row<float, L>(p + r * w * L + m, grad + r * w * L + m, w);
                });
            } else {
                nn::activation_backward(d.activation, z_.back().data(), p, grad, 1, rows * width * L);
            }
        }
    }

    // Each member's loss summed over the batch's rows, as nn::loss_forward_backward sums it, and
    // with kGrad its gradient (times 1 / rows) into the last op's da. Labels y lane by lane.
    template <bool kGrad>
    void batch_loss(const float* in, const float* y, int64_t rows, double* loss) {
        const int64_t width = program_.output_width, y_width = data_.y_width;
        float* grad = kGrad ? da_.back().data() : nullptr;
        const float scale = kGrad ? 1.0f / static_cast<float>(rows) : 1.0f;
        const LossKind kind = program_.loss.kind;
        for (int64_t m = 0; m < L; ++m) loss[m] = 0;
        if (nn::is_row_loss(kind) || program_.loss_takes_logits) {  // row by row, each row's value in double
            const bool sparse = kind == LossKind::sparse_categorical_crossentropy, logits = program_.loss_takes_logits;
            nn::with_small_width(width, [&]<int W>() {
                const int64_t w = W ? W : width;
                for (int64_t r = 0; r < rows; ++r) {
                    alignas(64) float row[L];
                    const float* yr = y + r * y_width * L;
                    if (nn::is_row_loss(kind)) {
#pragma omp simd
                        for (int64_t m = 0; m < L; ++m)
                            row[m] = nn::crossentropy_row<float, L, L>(in + r * w * L + m, yr + m, w, sparse, logits,
                                                                       kGrad ? grad + r * w * L + m : nullptr, scale);
                    } else {
#pragma omp simd
                        for (int64_t m = 0; m < L; ++m)
                            row[m] = nn::bce_logit_row<float, L, L>(in + r * w * L + m, yr + m, w, y_width,
                                                                    kGrad ? grad + r * w * L + m : nullptr, scale);
                    }
                    for (int64_t m = 0; m < L; ++m) loss[m] += static_cast<double>(row[m]);
                }
            });
            return;
        }
        nn::with_elementwise_loss(kind, [&]<LossKind K>() {
            const float row_scale = scale / static_cast<float>(width), delta = static_cast<float>(program_.loss.delta);
            for (int64_t e = 0; e < rows * width; ++e) {
#pragma omp simd
                for (int64_t m = 0; m < L; ++m) {
                    const nn::ValueAndGrad<float> f = nn::element_loss<K>(in[e * L + m], y[e * L + m], delta);
                    values_[static_cast<size_t>(e * L + m)] = f.value;
                    if constexpr (kGrad) grad[e * L + m] = f.grad * row_scale;
                }
            }
        });
        // The values summed as elementwise_loss_rows sums them: chunks of whole vectors, each in
        // lanes_tree_sum's order, then chunk by chunk.
        V sum = hn::Zero(D());
        nn::in_whole_vectors(rows * width, [&](int64_t first, auto count, int64_t skip) {
            V chunk[L];
            for (int64_t i = 0; i < L; ++i)
                chunk[i] = i < count && i >= skip ? hn::LoadU(D(), values_.data() + (first + i) * L) : hn::Zero(D());
            sum = hn::Add(sum, nn::lanes_tree_sum(chunk));
        });
        alignas(64) float sums[L];
        hn::Store(sum, D(), sums);
        for (int64_t m = 0; m < L; ++m) loss[m] = static_cast<double>(sums[m]) / static_cast<double>(width);
    }

    void activation_backward_op(int64_t i, int64_t rows) {
        const DenseOp d = program_.ops[static_cast<size_t>(i)].dense;  // a copy: no reloads after stores
        nn::activation_backward(d.activation, z_[static_cast<size_t>(i)].data(), out(i), da_[static_cast<size_t>(i)].data(),
                                1, rows * d.out * L);
    }

    // From dL/dz of op i: its weight and bias gradients (sums over rows in order, from zero) and,
    // unless it is the first op, dL/d(its input) into the previous op's da.
    void params_backward_op(int64_t i, const Input& x, int64_t rows) {
        if (program_.ops[static_cast<size_t>(i)].kind == Layer::Kind::Dropout) {  // din = dout * mask
            const float* dout = da_[static_cast<size_t>(i)].data();
            const float* mask = mask_[static_cast<size_t>(i)].data();
            float* din = da_[static_cast<size_t>(i - 1)].data();
            for (int64_t e = 0, n = rows * program_.ops[static_cast<size_t>(i)].out_width * L; e < n; ++e)
                din[e] = dout[e] * mask[e];
            return;
        }
        const DenseOp d = program_.ops[static_cast<size_t>(i)].dense;  // a copy: no reloads after stores
        const float* dz = da_[static_cast<size_t>(i)].data();
        const auto dz_at = [&](int64_t r, int64_t j) { return hn::LoadU(D(), dz + (r * d.out + j) * L); };
        float* dw = grads_.data() + d.weight * L;
        with_input(i, x, [&](auto in) {  // blocks of k x j: independent fma chains over the rows
            in_blocks<2>(d.in, [&]<int KB>(int64_t k0) {
                in_blocks<4>(d.out, [&]<int B>(int64_t j0) {
                    V acc[KB][B];
                    for (int p = 0; p < KB; ++p)
                        for (int q = 0; q < B; ++q) acc[p][q] = hn::Zero(D());
                    for (int64_t r = 0; r < rows; ++r) {
                        V xk[KB];
                        for (int p = 0; p < KB; ++p) xk[p] = in(r, k0 + p);
                        for (int q = 0; q < B; ++q) {
                            const V g = dz_at(r, j0 + q);
                            for (int p = 0; p < KB; ++p) acc[p][q] = hn::MulAdd(xk[p], g, acc[p][q]);
                        }
                    }
                    for (int p = 0; p < KB; ++p)
                        for (int q = 0; q < B; ++q) {
                            const int64_t k = k0 + p, j = j0 + q;
                            hn::StoreU(acc[p][q], D(), dw + (d.out_major ? j * d.in + k : k * d.out + j) * L);
                        }
                });
            });
        });
        if (d.use_bias)
            in_blocks<4>(d.out, [&]<int B>(int64_t j0) {
                V acc[B];
                for (int q = 0; q < B; ++q) acc[q] = hn::Zero(D());
                for (int64_t r = 0; r < rows; ++r)
                    for (int q = 0; q < B; ++q) acc[q] = hn::Add(acc[q], dz_at(r, j0 + q));
                for (int q = 0; q < B; ++q) hn::StoreU(acc[q], D(), grads_.data() + (d.bias + j0 + q) * L);
            });
        if (i == 0) return;
        float* dx = da_[static_cast<size_t>(i - 1)].data();
        const float* w = weights(d);
        for (int64_t r = 0; r < rows; ++r) {
            if (d.out_major) {  // fma over j in order: W is (out, in)
                in_blocks<4>(d.in, [&]<int B>(int64_t k0) {
                    V acc[B];
                    for (int q = 0; q < B; ++q) acc[q] = hn::Zero(D());
                    for (int64_t j = 0; j < d.out; ++j) {
                        const V dzj = dz_at(r, j);
                        for (int q = 0; q < B; ++q) acc[q] = hn::MulAdd(dzj, hn::LoadU(D(), w + (j * d.in + k0 + q) * L), acc[q]);
                    }
                    for (int q = 0; q < B; ++q) hn::StoreU(acc[q], D(), dx + (r * d.in + k0 + q) * L);
                });
                continue;
            }
            for (int64_t k = 0; k < d.in; ++k) {  // 0 + dot(dz row, W row k): W is (in, out)
                const V s = lane_dot([&](int64_t j) { return dz_at(r, j); },
                                     [&](int64_t j) { return hn::LoadU(D(), w + (k * d.out + j) * L); }, d.out);
                hn::StoreU(hn::Add(hn::Zero(D()), s), D(), dx + (r * d.in + k) * L);
            }
        }
    }

    // Calls f.template operator()<B>(first) for consecutive blocks of B <= kMax (2 or 4) indices
    // covering [0, count): independent accumulators, so fma chains overlap instead of waiting on
    // each other.
    template <int kMax, class F>
    static void in_blocks(int64_t count, F&& f) {
        int64_t first = 0;
        for (; first + kMax <= count; first += kMax) f.template operator()<kMax>(first);
        if constexpr (kMax == 4) {
            if (count - first == 3) return f.template operator()<3>(first);
            if (count - first == 2) return f.template operator()<2>(first);
        }
        if (count - first == 1) f.template operator()<1>(first);
    }

    // One update of every member's parameters with its own learning rate: the single-member
    // update_parameter, vectorised across members.
    void optimizer_update() {
        nn::OptimizerStep<float> step[L];
        for (int64_t m = 0; m < L; ++m) step[m] = nn::optimizer_step_constants<float>(lane_program(m).optimizer, step_);
        alignas(64) float lr[L], alpha[L], decay[L];
        for (int64_t m = 0; m < L; ++m) lr[m] = step[m].lr, alpha[m] = step[m].alpha, decay[m] = step[m].decay;
        nn::with_optimizer(program_.optimizer.kind, [&]<OptimizerKind K>() {
            update_lanes<K>(step[0], lr, alpha, decay, params_.data(), grads_.data(), slots_.data(),
                            program_.param_count() * L);
        });
    }

    template <OptimizerKind K>
    static void update_lanes(const nn::OptimizerStep<float>& shared, const float* __restrict lr,
                             const float* __restrict alpha, const float* __restrict decay, float* __restrict w,
                             const float* __restrict g, float* __restrict slots, int64_t n) {
        for (int64_t base = 0; base < n; base += L)
#pragma omp simd
            for (int64_t m = 0; m < L; ++m)
                nn::update_parameter<K>(shared, lr[m], alpha[m], decay[m], w[base + m], g[base + m], slots, base + m, n);
    }

    std::vector<TrainingProgram*> members_;
    const TrainingProgram& program_;  // the first member's: the shape all share
    FitPlan plan_;  // the first member's
    std::vector<nn::Metric> metrics_;
    BatchSchedule schedule_;  // the first member's batches
    bool own_data_ = false;     // members have their own rows (k-fold)
    bool own_batches_ = false;  // members gather their own batches: own data, or own shuffles
    std::vector<std::unique_ptr<BatchSchedule>> lane_schedules_;  // lanes 1.. (own_batches_)
    int64_t max_rows_;
    PackedData<float> data_;  // the first member's
    std::vector<PackedData<float>> lane_data_;  // the others' own data (reserved: lane_ points in)
    const PackedData<float>* lane_[L] = {};
    // Lane-interleaved: element e of member m at e * L + m.
    std::vector<float> params_, grads_, slots_;
    std::vector<std::vector<float>> z_, a_, da_, mask_;  // (Dropout: mask and output only)
    uint64_t dropout_seed_[L] = {};
    std::vector<float> values_;      // the last batch's per-element loss values
    std::vector<float> member_out_;  // one member's outputs, for its metrics
    std::vector<float> batch_x_;  // a shared batch's rows, or every lane's (own_batches_)
    std::vector<float> lane_y_;             // the batch's labels lane by lane
    std::vector<float> member_y_;           // one member's labels, for its metrics
    int64_t step_ = 0, epoch_ = 0;
    std::vector<StackedResult> results_;
};

ONEFIT_SIMD_END(cpu)
#endif  // ONEFIT_RUNTIME_CPU_STACKED_FIT_HPP
