// Where each array lives inside the CUDA backend's two allocations: the fit's arena (data,
// schedule, state, logs: laid out here, written once into pinned memory, copied with one
// transfer) and the graph path's work buffers (one batch, every op's activations and
// gradients). Plain C++ so a host-side test can check it without a GPU.
//
// Every array starts at a multiple of 256 bytes: cuBLASLt assumes 256-byte aligned operands
// unless told otherwise (CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_*), cudaMalloc returns 256-byte
// aligned memory, and unrounded float offsets left the MNIST model's activations 8-byte aligned.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace onefit::cuda {

inline constexpr size_t kDeviceAlignment = 256;

// One array of a layout: [offset, offset + bytes); op: the op it belongs to, or -1.
struct LayoutRegion {
    const char* name;
    int op;
    size_t offset, bytes;
};

// Arrays placed one after the other, each at the next multiple of kDeviceAlignment.
class DeviceLayout {
public:
    template <class T>
    size_t add(const char* name, size_t count, int op = -1) {
        const size_t at = (total_ + kDeviceAlignment - 1) / kDeviceAlignment * kDeviceAlignment;
        regions_.push_back({name, op, at, count * sizeof(T)});
        total_ = at + count * sizeof(T);
        return at;
    }
    size_t total_bytes() const { return total_; }
    const std::vector<LayoutRegion>& regions() const { return regions_; }

private:
    size_t total_ = 0;
    std::vector<LayoutRegion> regions_;
};

// Element counts of the arena's arrays.
struct ArenaCounts {
    size_t x, y, order, batch_start, batch_rows, epoch_first, val_x, val_y, val_batches, params, slots, logs;
};

// Byte offsets of the arena's arrays (types as in DeviceData).
struct ArenaLayout {
    size_t x, y, order, batch_start, batch_rows, epoch_first, val_x, val_y, val_batches, params, slots, step, logs;
    DeviceLayout layout;
};

// log_bytes: sizeof(EpochLog) (the struct lives in program/fit_plan.hpp).
inline ArenaLayout arena_layout(const ArenaCounts& n, size_t log_bytes) {
    ArenaLayout a{};
    DeviceLayout& l = a.layout;
    a.x = l.add<float>("x", n.x);
    a.y = l.add<float>("y", n.y);
    a.order = l.add<int32_t>("order", n.order);
    a.batch_start = l.add<int64_t>("batch_start", n.batch_start);
    a.batch_rows = l.add<int32_t>("batch_rows", n.batch_rows);
    a.epoch_first = l.add<int64_t>("epoch_first_step", n.epoch_first);
    a.val_x = l.add<float>("val_x", n.val_x);
    a.val_y = l.add<float>("val_y", n.val_y);
    a.val_batches = l.add<int32_t>("val_batch_rows", n.val_batches);
    a.params = l.add<float>("params", n.params);
    a.slots = l.add<float>("slots", n.slots);
    a.step = l.add<int64_t>("step_count", 1);
    a.logs = l.add<char>("logs", n.logs * log_bytes);
    return a;
}

// Byte offsets of the graph path's work buffers: the parameters' gradients (laid out as the
// parameters), one batch of features and labels, and per op z, a and da (max_rows x out each).
struct GraphBufferLayout {
    size_t grads, xb, yb;
    std::vector<size_t> z, a, da;
    DeviceLayout layout;
};

inline GraphBufferLayout graph_buffer_layout(int64_t n_params, int64_t max_rows, int64_t x_width, int64_t y_width,
                                             const std::vector<int64_t>& op_widths) {
    GraphBufferLayout g{};
    DeviceLayout& l = g.layout;
    g.grads = l.add<float>("grads", size_t(n_params));
    g.xb = l.add<float>("batch_x", size_t(max_rows * x_width));
    g.yb = l.add<float>("batch_y", size_t(max_rows * y_width));
    for (size_t i = 0; i < op_widths.size(); ++i) {
        const size_t size = size_t(max_rows * op_widths[i]);
        g.z.push_back(l.add<float>("z", size, int(i)));
        g.a.push_back(l.add<float>("a", size, int(i)));
        g.da.push_back(l.add<float>("da", size, int(i)));
    }
    return g;
}

// The largest power of two (at most kDeviceAlignment) that divides an address: what cuBLASLt
// may assume of an operand that starts inside an array (a layer's weights in the parameters).
inline uint32_t address_alignment(const void* p) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    uint32_t align = kDeviceAlignment;
    while (align > 1 && a % align != 0) align /= 2;
    return align;
}

}  // namespace onefit::cuda
