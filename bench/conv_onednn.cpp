// oneDNN's convolution primitives against onefit's Conv2D (im2col -> Dense product -> col2im),
// on the convolutions of Keras's MNIST convnet at batch 128, float32, channels last: the
// measurement issue 15 asks for before a per-shape kernel choice ("Kernels chosen by measurement").
//
// onefit's side calls the very kernels of the CPU step (cpu_executor.hpp: im2col / col2im split
// over the thread pool as over_parts splits them, dense_forward / dense_backward with use_blas as
// lower.cpp sets it, after prepare_gemm_choice; where lowering keeps the product on the small
// kernels, "onefit_gemm" also times the GEMM path), in the copy the step's own dispatch picks on
// this CPU (conv_onefit.cpp is compiled per SIMD target).
// oneDNN's side runs twice: with onefit's layouts (src/dst "nhwc", weights Keras's (kh, kw, in,
// out) = "hwio"), and with the layouts oneDNN prefers (format_tag::any) plus the reorders onefit
// would then need, timed apart. Both use a user scratchpad (scratchpad_mode::user): allocated once
// here, as onefit requires of a step. oneDNN (Debian's, OpenMP) runs at 1 and 2 threads.
// No activation on either side (onefit's relu is a separate pass for BLAS-sized products).
// The sides' repetitions are interleaved round by round (the machine is shared and noisy); each
// figure is the median over rounds of the mean of K steps, ratios the median of per-round ratios.
//   bench_conv_onednn [ROUNDS [STEPS_PER_ROUND]]
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "machine.hpp"
#include "conv_onefit.hpp"
#include "core/thread_pool.hpp"
#include "runtime/cpu/gemm.hpp"

using namespace onefit;
using dnnl::memory;
using tag = memory::format_tag;

namespace {

struct ConvShape {
    const char* name;
    int64_t n, h, w, c, k, filters, pad;  // pad: 0 "valid", k / 2 "same" (stride 1, odd k)
    bool first_layer;                     // no input gradient (the model's first layer)
    int64_t oh() const { return h + 2 * pad - k + 1; }
    int64_t ow() const { return w + 2 * pad - k + 1; }
};

// One shape's data, shared by every side so that all compute the same thing.
struct Data {
    ConvShape s;
    std::vector<float> x, wt, b, dz;  // input, kernel (kh, kw, in, out), bias, dL/d(output)
    explicit Data(const ConvShape& shape) : s(shape) {
        uint64_t state = 42;
        auto fill = [&](std::vector<float>& v, size_t size, float scale) {
            v.resize(size);
            for (float& e : v) {
                state = state * 6364136223846793005ull + 1442695040888963407ull;
                e = scale * (float(state >> 40) / float(1 << 24) * 2 - 1);
            }
        };
        fill(x, s.n * s.h * s.w * s.c, 1.0f);
        fill(wt, s.k * s.k * s.c * s.filters, 0.2f);
        fill(b, s.filters, 0.1f);
        fill(dz, s.n * s.oh() * s.ow() * s.filters, 0.01f);
    }
};

// A side of the comparison: one training step's conv work, forward then backward. Outputs land in
// z (nhwc), dw (hwio), db and dx (nhwc, empty for a first layer) so that sides can be compared.
struct Side {
    std::string name;
    std::vector<float> z, dw, db, dx;
    double reorder_act_us = 0, reorder_weights_us = 0;  // oneDNN "any": reorders, summed since reset
    bool onednn = false, any_layouts = false;
    virtual ~Side() = default;
    virtual void enter() {}  // before this side's calls (oneDNN: its OpenMP thread count)
    virtual void forward() = 0;
    virtual void backward() = 0;
};

// onefit's Conv2D, as CpuExecutor<float> runs it (conv_onefit.hpp).
struct Onefit : Side {
    const Data& d;
    conv_bench::OnefitConv conv;
    bool use_blas;
    std::vector<float> cols, dcols;
    // force_gemm: the measured GEMM even where lower.cpp keeps the product on the small kernels.
    Onefit(const Data& data, bool force_gemm) : d(data) {
        const ConvShape& s = d.s;
        name = force_gemm ? "onefit_gemm" : "onefit";
        const int64_t patch = s.k * s.k * s.c, pixels = s.oh() * s.ow();
        use_blas = force_gemm || patch * s.filters >= 512;  // lower.cpp's kBlasMinWeights
        if (use_blas) cpu::prepare_gemm_choice();
        cols.resize(s.n * pixels * patch), z.resize(s.n * pixels * s.filters);
        dw.resize(patch * s.filters), db.resize(s.filters);
        if (!s.first_layer) dcols.resize(cols.size()), dx.resize(d.x.size());
        conv.win = {s.h, s.w, s.c, s.oh(), s.ow(), s.k, s.k, 1, 1, s.pad, s.pad};
        conv.images = s.n, conv.patch = patch, conv.pixels = pixels, conv.filters = s.filters;
        conv.use_blas = use_blas;
        conv.x = d.x.data(), conv.kernel = d.wt.data(), conv.bias = d.b.data(), conv.dz = d.dz.data();
        conv.cols = cols.data(), conv.z = z.data(), conv.dw = dw.data(), conv.db = db.data();
        conv.dcols = s.first_layer ? nullptr : dcols.data(), conv.dx = s.first_layer ? nullptr : dx.data();
    }
    void forward() override { conv_bench::onefit_conv_forward(conv); }
    void backward() override { conv_bench::onefit_conv_backward(conv); }
};

using Clock = std::chrono::steady_clock;
double us_since(Clock::time_point t) { return std::chrono::duration<double, std::micro>(Clock::now() - t).count(); }

// oneDNN's three convolution primitives on onefit's buffers. With prefer_own_layouts, every
// memory descriptor is format_tag::any and each argument whose chosen layout differs from
// onefit's gets a reorder (input: before the primitive; output: after), made once here.
struct OneDnn : Side {
    struct Reorder {
        dnnl::reorder prim;
        memory from, to;
        bool weights;
    };
    struct Call {  // a primitive with its arguments
        dnnl::primitive prim;
        std::unordered_map<int, memory> args;
    };
    const Data& d;
    int threads;
    dnnl::engine eng{dnnl::engine::kind::cpu, 0};
    dnnl::stream strm{eng};
    std::vector<float> x, wt, b, dz;  // copies of the inputs, so the user memories may wrap them
    std::vector<std::unique_ptr<char[]>> owned;  // the buffers of memories in oneDNN's layouts
    std::vector<char> scratch;                   // one user scratchpad for every primitive
    std::vector<std::pair<std::pair<void*, memory::desc>, memory>> converted;  // input reorders made so far
    std::vector<Reorder> fwd_in, fwd_out, bwd_in, bwd_out;
    std::vector<Call> fwd_calls, bwd_calls;

    OneDnn(const Data& data, bool prefer_own_layouts, int nthreads)
        : d(data), threads(nthreads), x(d.x), wt(d.wt), b(d.b), dz(d.dz) {
        const ConvShape& s = d.s;
        name = std::string("onednn_") + (prefer_own_layouts ? "any" : "nhwc") + "_t" + std::to_string(threads);
        onednn = true, any_layouts = prefer_own_layouts;
        omp_set_num_threads(threads);  // primitives plan their split at creation: create as run
        z.resize(s.n * s.oh() * s.ow() * s.filters), dw.resize(wt.size()), db.resize(s.filters);
        if (!s.first_layer) dx.resize(x.size());
        const memory::dims src_dims{s.n, s.c, s.h, s.w}, w_dims{s.filters, s.c, s.k, s.k}, b_dims{s.filters},
            dst_dims{s.n, s.filters, s.oh(), s.ow()}, strides{1, 1}, pad{s.pad, s.pad};
        const auto f32 = memory::data_type::f32;
        const memory::desc src_u(src_dims, f32, tag::nhwc), w_u(w_dims, f32, tag::hwio), b_u(b_dims, f32, tag::x),
            dst_u(dst_dims, f32, tag::nhwc);
        const auto want = [&](const memory::desc& user) {
            return prefer_own_layouts ? memory::desc(user.dims(), f32, tag::any) : user;
        };
        dnnl::primitive_attr attr;
        attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
        const auto alg = dnnl::algorithm::convolution_direct;
        const dnnl::convolution_forward::primitive_desc fwd(
            {dnnl::prop_kind::forward_training, alg, want(src_u), want(w_u), want(b_u), want(dst_u), strides, pad, pad},
            attr, eng);
        const dnnl::convolution_backward_weights::primitive_desc bww(
            {alg, want(src_u), want(w_u), want(b_u), want(dst_u), strides, pad, pad}, attr, eng, fwd);
        std::unique_ptr<dnnl::convolution_backward_data::primitive_desc> bwd;
        if (!s.first_layer)
            bwd = std::make_unique<dnnl::convolution_backward_data::primitive_desc>(
                dnnl::convolution_backward_data::desc{alg, want(src_u), want(w_u), want(dst_u), strides, pad, pad}, attr,
                eng, fwd);
        // onefit's buffers as oneDNN memories (no copy).
        memory src(src_u, eng, x.data()), w(w_u, eng, wt.data()), bias(b_u, eng, b.data()), dst(dst_u, eng, z.data()),
            ddst(dst_u, eng, dz.data()), dwm(w_u, eng, dw.data()), dbm(b_u, eng, db.data());
        size_t scratch_bytes = std::max(fwd.scratchpad_desc().get_size(), bww.scratchpad_desc().get_size());
        if (bwd) scratch_bytes = std::max(scratch_bytes, bwd->scratchpad_desc().get_size());
        scratch.resize(scratch_bytes + 64);
        const auto pad_arg = [&](const dnnl::primitive_desc_base& pd) {
            return memory(pd.scratchpad_desc(), eng, scratch.data());
        };
        fwd_calls.push_back({dnnl::convolution_forward(fwd),
                             {{DNNL_ARG_SRC, in(fwd_in, src, fwd.src_desc(), false)},
                              {DNNL_ARG_WEIGHTS, in(fwd_in, w, fwd.weights_desc(), true)},
                              {DNNL_ARG_BIAS, in(fwd_in, bias, fwd.bias_desc(), true)},
                              {DNNL_ARG_DST, out(fwd_out, dst, fwd.dst_desc(), false)},
                              {DNNL_ARG_SCRATCHPAD, pad_arg(fwd)}}});
        bwd_calls.push_back({dnnl::convolution_backward_weights(bww),
                             {{DNNL_ARG_SRC, in(bwd_in, src, bww.src_desc(), false)},
                              {DNNL_ARG_DIFF_DST, in(bwd_in, ddst, bww.diff_dst_desc(), false)},
                              {DNNL_ARG_DIFF_WEIGHTS, out(bwd_out, dwm, bww.diff_weights_desc(), true)},
                              {DNNL_ARG_DIFF_BIAS, out(bwd_out, dbm, bww.diff_bias_desc(), true)},
                              {DNNL_ARG_SCRATCHPAD, pad_arg(bww)}}});
        if (bwd) {
            memory dsrc(src_u, eng, dx.data());
            bwd_calls.push_back({dnnl::convolution_backward_data(*bwd),
                                 {{DNNL_ARG_DIFF_DST, in(bwd_in, ddst, bwd->diff_dst_desc(), false)},
                                  {DNNL_ARG_WEIGHTS, in(bwd_in, w, bwd->weights_desc(), true)},
                                  {DNNL_ARG_DIFF_SRC, out(bwd_out, dsrc, bwd->diff_src_desc(), false)},
                                  {DNNL_ARG_SCRATCHPAD, pad_arg(*bwd)}}});
        }
        layouts = "src " + fmt(fwd.src_desc()) + ", weights " + fmt(fwd.weights_desc()) + ", dst " + fmt(fwd.dst_desc());
    }
    std::string layouts;
    // A layout as oneDNN's tags spell it: dimensions outermost first by stride ("acdb" is nhwc
    // for activations, "cdba" hwio for weights), then any inner block ("ABcd+16a16b": blocked).
    static std::string fmt(const memory::desc& md) {
        const auto& blk = md.data.format_desc.blocking;
        std::string order;
        for (int i = 0; i < md.data.ndims; ++i) order += char('a' + i);
        std::stable_sort(order.begin(), order.end(), [&](char p, char q) { return blk.strides[p - 'a'] > blk.strides[q - 'a']; });
        for (int i = 0; i < blk.inner_nblks; ++i) {  // appended piece by piece: GCC 12 warns falsely on "+" + string
            if (i == 0) order += '+';
            order += std::to_string(blk.inner_blks[i]);
            order += char('a' + blk.inner_idxs[i]);
        }
        return order;
    }
    // Whether two layouts put every element at the same offset (nchw and nhwc with one channel).
    static bool same_bytes(const memory::desc& a, const memory::desc& b) {
        if (a == b) return true;
        const auto &x = a.data, &y = b.data;
        if (x.format_kind != dnnl_blocked || y.format_kind != dnnl_blocked || a.dims() != b.dims() ||
            x.format_desc.blocking.inner_nblks || y.format_desc.blocking.inner_nblks)
            return false;
        for (int i = 0; i < x.ndims; ++i)
            if (x.dims[i] > 1 && x.format_desc.blocking.strides[i] != y.format_desc.blocking.strides[i]) return false;
        return true;
    }
    memory in_layout(const memory::desc& md) {  // a buffer in oneDNN's layout, made here once
        owned.emplace_back(new char[md.get_size() + 64]);
        return memory(md, eng, owned.back().get());
    }
    Reorder make_reorder(const memory& from, const memory& to, bool weights) {
        dnnl::primitive_attr attr;
        attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
        const dnnl::reorder::primitive_desc pd(eng, from.get_desc(), eng, to.get_desc(), attr);
        if (pd.scratchpad_desc().get_size() > 0) std::abort();  // plain reorders need none
        return {dnnl::reorder(pd), from, to, weights};
    }
    // An input in the layout the primitive wants: the user memory, or a converted copy (one per
    // user buffer and layout: the forward's converted src serves the weight gradient too).
    memory in(std::vector<Reorder>& stage, const memory& user, const memory::desc& md, bool weights) {
        if (same_bytes(md, user.get_desc())) return memory(md, eng, user.get_data_handle());
        for (auto& [key, m] : converted)
            if (key.first == user.get_data_handle() && key.second == md) return m;
        memory m = in_layout(md);
        stage.push_back(make_reorder(user, m, weights));
        converted.push_back({{user.get_data_handle(), md}, m});
        return m;
    }
    memory out(std::vector<Reorder>& stage, const memory& user, const memory::desc& md, bool weights) {
        if (same_bytes(md, user.get_desc())) return memory(md, eng, user.get_data_handle());
        memory m = in_layout(md);
        stage.push_back(make_reorder(m, user, weights));
        return m;
    }
    void run_reorders(std::vector<Reorder>& rs) {
        for (Reorder& r : rs) {
            const auto t = Clock::now();
            r.prim.execute(strm, r.from, r.to);
            strm.wait();
            (r.weights ? reorder_weights_us : reorder_act_us) += us_since(t);
        }
    }
    void run_calls(std::vector<Call>& calls) {
        for (Call& c : calls) c.prim.execute(strm, c.args);
        strm.wait();
    }
    void enter() override { omp_set_num_threads(threads); }
    void forward() override { run_reorders(fwd_in), run_calls(fwd_calls), run_reorders(fwd_out); }
    void backward() override { run_reorders(bwd_in), run_calls(bwd_calls), run_reorders(bwd_out); }
};

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
    double m = 0;
    for (size_t i = 0; i < a.size(); ++i) m = std::max(m, double(std::fabs(a[i] - b[i])));
    return m;
}

void bench_shape(const ConvShape& s, int rounds, int steps) {
    const Data data(s);
    std::vector<std::unique_ptr<Side>> sides;
    sides.push_back(std::make_unique<Onefit>(data, false));
    const auto& one = static_cast<const Onefit&>(*sides[0]);
    // Where lowering keeps the product on the small kernels, also what the GEMM path would give.
    if (!one.use_blas) sides.push_back(std::make_unique<Onefit>(data, true));
    for (bool any : {false, true})
        for (int t : {1, 2}) sides.push_back(std::make_unique<OneDnn>(data, any, t));
    std::printf("# %s: batch %ld, %ldx%ldx%ld -> %ldx%ldx%ld, %ldx%ld kernel, %s; onefit product: %s (patch %ld x %ld filters)%s\n",
                s.name, long(s.n), long(s.h), long(s.w), long(s.c), long(s.oh()), long(s.ow()), long(s.filters),
                long(s.k), long(s.k), s.pad ? "same" : "valid", one.use_blas ? "measured GEMM" : "fused small kernels",
                long(one.conv.patch), long(s.filters), s.first_layer ? "; first layer: no input gradient" : "");
    for (size_t i = 1; i < sides.size(); ++i)
        if (sides[i]->onednn && static_cast<OneDnn&>(*sides[i]).threads == 1) std::printf("# %s layouts oneDNN chose: %s\n", sides[i]->name.c_str(), static_cast<OneDnn&>(*sides[i]).layouts.c_str());
    // Same work: every side once on the same data, against onefit's results.
    for (auto& side : sides) side->enter(), side->forward(), side->backward();
    for (size_t i = 1; i < sides.size(); ++i) {
        const Side& o = *sides[i];
        const double diff = std::max({max_abs_diff(o.z, one.z), max_abs_diff(o.dw, one.dw), max_abs_diff(o.db, one.db),
                                      max_abs_diff(o.dx, one.dx)});
        std::printf("%s_maxdiff_%s: %.2g abs (z, dw, db%s against onefit)\n", s.name, o.name.c_str(), diff,
                    s.first_layer ? "" : ", dx");
    }
    const size_t n = sides.size();
    std::vector<std::vector<double>> fwd(n), bwd(n), step(n), ract(n), rw(n), ratio(n);
    for (int round = 0; round < rounds; ++round) {
        for (size_t i = 0; i < n; ++i) {
            Side& side = *sides[i];
            side.enter();
            side.forward(), side.backward();  // untimed: the other side's threads settle
            side.reorder_act_us = side.reorder_weights_us = 0;
            double f = 0, b = 0;
            for (int k = 0; k < steps; ++k) {
                const auto t0 = Clock::now();
                side.forward();
                const auto t1 = Clock::now();
                side.backward();
                const auto t2 = Clock::now();
                f += std::chrono::duration<double, std::micro>(t1 - t0).count();
                b += std::chrono::duration<double, std::micro>(t2 - t1).count();
            }
            fwd[i].push_back(f / steps), bwd[i].push_back(b / steps), step[i].push_back((f + b) / steps);
            ract[i].push_back(side.reorder_act_us / steps), rw[i].push_back(side.reorder_weights_us / steps);
            ratio[i].push_back(step[i].back() / step[0].back());
        }
    }
    for (size_t i = 0; i < n; ++i) {
        const char* who = sides[i]->name.c_str();
        std::printf("%s_fwd_us_%s: %.1f us\n", s.name, who, bench::median(fwd[i]));
        std::printf("%s_bwd_us_%s: %.1f us\n", s.name, who, bench::median(bwd[i]));
        std::printf("%s_step_us_%s: %.1f us %s\n", s.name, who, bench::median(step[i]), bench::tag().c_str());
        if (sides[i]->any_layouts) {  // what of their step the reorders took
            std::printf("%s_prims_us_%s: %.1f us (the step without its reorders)\n", s.name, who,
                        bench::median(step[i]) - bench::median(ract[i]) - bench::median(rw[i]));
            std::printf("%s_reorder_act_us_%s: %.1f us (src/dst/diff_dst/diff_src to and from nhwc)\n", s.name, who,
                        bench::median(ract[i]));
            std::printf("%s_reorder_weights_us_%s: %.1f us (weights/diff_weights to and from hwio)\n", s.name, who,
                        bench::median(rw[i]));
        }
        if (i > 0)
            std::printf("%s_%s_over_onefit: %.2f ratio (step time; < 1: faster than onefit's step)\n", s.name, who,
                        bench::median(ratio[i]));
    }
    double best = 1e9;
    std::string best_name;
    for (size_t i = 1; i < n; ++i)
        if (sides[i]->onednn && bench::median(ratio[i]) < best) best = bench::median(ratio[i]), best_name = sides[i]->name;
    std::printf("%s_onednn_over_onefit: %.2f ratio (best oneDNN variant: %s)\n", s.name, best, best_name.c_str());
}

}  // namespace

int main(int argc, char** argv) {
    const int rounds = argc > 1 ? std::atoi(argv[1]) : 31, steps = argc > 2 ? std::atoi(argv[2]) : 8;
    bench::print_machine();
    std::printf("# onefit pool %d threads; oneDNN %d.%d.%d (OpenMP); %d rounds x %d steps per side, interleaved\n",
                ThreadPool::instance().num_threads(), dnnl_version()->major, dnnl_version()->minor,
                dnnl_version()->patch, rounds, steps);
    // Keras's MNIST convnet (conv1, conv2), and a "same" 3x3 as a third shape.
    const ConvShape shapes[] = {{"conv1", 128, 28, 28, 1, 3, 32, 0, true},
                                {"conv2", 128, 13, 13, 32, 3, 64, 0, false},
                                {"same16", 128, 14, 14, 16, 3, 16, 1, false}};
    for (const ConvShape& s : shapes) bench_shape(s, rounds, steps);
}
