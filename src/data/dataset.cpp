// Dataset: a list of tf.data-style ops over shared arrays. plan() runs the ops on row
// indices only (no feature values are copied), the way tf.data's iterators pull elements.
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/rng.hpp"
#include "data/row_checks.hpp"
#include "onefit/dataset.hpp"
#include "onefit/error.hpp"

namespace onefit {
namespace {

uint64_t splitmix64(uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// Combines a seed with an iteration key so that every (seed, key) pair gets its own stream.
uint64_t mix_seed(uint64_t seed, uint64_t key) { return splitmix64(seed ^ splitmix64(key)); }

// One element in flight: a row index before batch(); after it, a batch of `size` rows
// stored at `value` in the simulator's pool.
struct Element {
    int64_t value = 0;
    int64_t size = 1;
};

// Runs the ops as pull-based iterators, like tf.data: next(i) asks op i for one element, and
// op i asks op i-1, down to the source rows (i = -1). A repeat restarts everything upstream
// of it with a new iteration key, which is what reshuffles an upstream shuffle.
class PassSimulator {
public:
    PassSimulator(int64_t rows, const std::vector<Dataset::Op>& ops) : rows_(rows), ops_(ops), states_(ops.size()) {}

    // (Re)starts op `last` and everything upstream of it for the iteration `key`.
    void start(int64_t last, uint64_t key) {
        for (int64_t i = last; i >= 0; --i) {
            const Dataset::Op& op = ops_[static_cast<size_t>(i)];
            State& s = states_[static_cast<size_t>(i)];
            s.key = key;
            s.counter = 0;
            s.produced = false;
            s.done = false;
            s.buffer.clear();
            s.filled = false;
            s.input_done = false;
            if (op.kind == Dataset::Op::Kind::Shuffle) s.rng.reseed(op.flag ? mix_seed(op.seed, key) : op.seed);
            if (op.kind == Dataset::Op::Kind::Repeat) {
                s.done = op.count == 0;
                key = mix_seed(key, 0);
            }
        }
        source_next_ = 0;
    }

    // Produces the next element of op `i` into `out`; false when op i is exhausted.
    bool next(int64_t i, Element& out) {
        if (i < 0) {
            if (source_next_ >= rows_) return false;
            out = {source_next_++, 1};
            return true;
        }
        const Dataset::Op& op = ops_[static_cast<size_t>(i)];
        State& s = states_[static_cast<size_t>(i)];
        switch (op.kind) {
            case Dataset::Op::Kind::Shuffle: return next_shuffled(i, op, s, out);
            case Dataset::Op::Kind::Batch: return next_batch(i, op, out);
            case Dataset::Op::Kind::Repeat:
                while (!s.done) {
                    if (next(i - 1, out)) {
                        s.produced = true;
                        return true;
                    }
                    ++s.counter;
                    // No op changes how many elements a pass has, so one empty repetition
                    // means all are empty: stop (as tf.data does) instead of spinning forever.
                    if (!s.produced || (op.count >= 0 && s.counter >= op.count)) {
                        s.done = true;
                        break;
                    }
                    s.produced = false;
                    start(i - 1, mix_seed(s.key, static_cast<uint64_t>(s.counter)));
                }
                return false;
            case Dataset::Op::Kind::Take:
                if (op.count >= 0 && s.counter >= op.count) return false;
                if (!next(i - 1, out)) return false;
                ++s.counter;
                return true;
        }
        return false;
    }

    const std::vector<int64_t>& pool() const { return pool_; }

private:
    struct State {
        uint64_t key = 0;
        int64_t counter = 0;          // repeat: repetitions finished; take: elements taken
        bool produced = false;        // repeat: this repetition yielded an element
        bool done = false;            // repeat: no repetitions left
        std::vector<Element> buffer;  // shuffle
        bool filled = false;          // shuffle: the buffer was filled once
        bool input_done = false;      // shuffle: upstream is exhausted
        Rng rng;                      // shuffle
    };

    // tf.data's buffered shuffle: fill a buffer with up to buffer_size elements; each output
    // is a uniformly random slot, refilled from upstream or, once that is exhausted, removed.
    bool next_shuffled(int64_t i, const Dataset::Op& op, State& s, Element& out) {
        Element incoming;
        if (!s.filled) {
            // Grow by push_back, never reserve(buffer_size): the buffer may be far larger than the data.
            while (static_cast<int64_t>(s.buffer.size()) < op.count && next(i - 1, incoming))
                s.buffer.push_back(incoming);
            s.input_done = static_cast<int64_t>(s.buffer.size()) < op.count;
            s.filled = true;
        }
        if (s.buffer.empty()) return false;
        const size_t slot = static_cast<size_t>(s.rng.below(s.buffer.size()));
        out = s.buffer[slot];
        if (!s.input_done && next(i - 1, incoming)) {
            s.buffer[slot] = incoming;
        } else {
            s.input_done = true;
            s.buffer[slot] = s.buffer.back();
            s.buffer.pop_back();
        }
        return true;
    }

    // Groups the next batch_size upstream rows; a short last batch unless drop_remainder.
    bool next_batch(int64_t i, const Dataset::Op& op, Element& out) {
        const int64_t offset = static_cast<int64_t>(pool_.size());
        int64_t size = 0;
        Element row;
        while (size < op.count && next(i - 1, row)) {
            pool_.push_back(row.value);
            ++size;
        }
        if (size == 0 || (size < op.count && op.flag)) {
            pool_.resize(static_cast<size_t>(offset));
            return false;
        }
        out = {offset, size};
        return true;
    }

    int64_t rows_;
    const std::vector<Dataset::Op>& ops_;
    std::vector<State> states_;
    std::vector<int64_t> pool_;  // rows of every batch made so far; batches refer into it
    int64_t source_next_ = 0;
};

const Tensor& empty_tensor() {
    static const Tensor empty;
    return empty;
}

}  // namespace

Dataset Dataset::from_tensor_slices(Tensor x, Tensor y) {
    if (x.rank() < 1 || y.rank() < 1)
        throw Error("Dataset.from_tensor_slices needs arrays with a row dimension, got shapes " +
                    shape_to_string(x.shape()) + " and " + shape_to_string(y.shape()));
    if (x.rows() != y.rows())
        throw Error("Dataset.from_tensor_slices: x has " + std::to_string(x.rows()) + " rows but y has " +
                    std::to_string(y.rows()) + "; give one label per row");
    Dataset dataset;
    dataset.x_ = std::make_shared<const Tensor>(std::move(x));
    dataset.y_ = std::make_shared<const Tensor>(std::move(y));
    return dataset;
}

Dataset Dataset::from_tensor_slices(Tensor x, Tensor y, Tensor sample_weight) {
    return from_tensor_slices(std::move(x), std::move(y)).with_sample_weight(std::move(sample_weight));
}

Dataset Dataset::with_sample_weight(Tensor sample_weight) const {
    Dataset dataset = *this;
    check_sample_weight(sample_weight, dataset.x().rows(), "Dataset.from_tensor_slices: sample_weight", "x has");
    dataset.w_ = std::make_shared<const Tensor>(std::move(sample_weight));
    return dataset;
}

Dataset Dataset::shuffle(int64_t buffer_size, uint64_t seed, bool reshuffle_each_iteration) const {
    if (buffer_size < 1)
        throw Error("Dataset.shuffle: buffer_size must be at least 1, got " + std::to_string(buffer_size) +
                    "; use the number of rows for a full shuffle");
    Dataset out = *this;
    out.ops_.push_back({Op::Kind::Shuffle, buffer_size, seed, reshuffle_each_iteration});
    return out;
}

Dataset Dataset::batch(int64_t batch_size, bool drop_remainder) const {
    if (batch_size < 1)
        throw Error("Dataset.batch: batch_size must be at least 1, got " + std::to_string(batch_size));
    if (is_batched())
        throw Error("Dataset.batch: the dataset is already batched; onefit supports one batch() per pipeline");
    Dataset out = *this;
    out.ops_.push_back({Op::Kind::Batch, batch_size, 0, drop_remainder});
    return out;
}

Dataset Dataset::repeat(int64_t count) const {
    if (count < -1)
        throw Error("Dataset.repeat: count must be -1 (forever) or at least 0, got " + std::to_string(count));
    const int64_t n = cardinality();
    if (count > 0 && n > 0 && n > std::numeric_limits<int64_t>::max() / count)
        throw Error("Dataset.repeat(" + std::to_string(count) + ") makes more than 2^63 elements; use repeat() "
                    "for an endless dataset");
    Dataset out = *this;
    out.ops_.push_back({Op::Kind::Repeat, count, 0, false});
    return out;
}

Dataset Dataset::take(int64_t count) const {
    if (count < -1)
        throw Error("Dataset.take: count must be -1 (all) or at least 0, got " + std::to_string(count));
    Dataset out = *this;
    out.ops_.push_back({Op::Kind::Take, count, 0, false});
    return out;
}

const Tensor& Dataset::x() const { return x_ ? *x_ : empty_tensor(); }
const Tensor& Dataset::y() const { return y_ ? *y_ : empty_tensor(); }

bool Dataset::is_batched() const {
    for (const Op& op : ops_)
        if (op.kind == Op::Kind::Batch) return true;
    return false;
}

int64_t Dataset::cardinality() const {
    int64_t n = x().rows();  // -1 once infinite
    for (const Op& op : ops_) {
        switch (op.kind) {
            case Op::Kind::Shuffle: break;
            case Op::Kind::Batch:
                if (n > 0) n = n / op.count + (!op.flag && n % op.count != 0 ? 1 : 0);
                break;
            case Op::Kind::Repeat:
                if (op.count == 0) n = 0;
                else if (op.count < 0) n = n == 0 ? 0 : -1;
                else if (n > 0) n *= op.count;  // repeat() refused counts that overflow
                break;
            case Op::Kind::Take:
                if (op.count >= 0 && (n < 0 || n > op.count)) n = op.count;
                break;
        }
    }
    return n;
}

void Dataset::plan(int64_t iteration, int64_t max_batches, DatasetPass& pass) const {
    if (max_batches < -1)
        throw Error("Dataset.plan: max_batches must be -1 (all) or at least 0, got " + std::to_string(max_batches));
    if (max_batches == -1 && cardinality() < 0)
        throw Error("the dataset repeats forever (repeat() without a count), so an epoch has no end; "
                    "pass steps_per_epoch to say how many batches make one epoch");
    pass.rows.clear();
    pass.batch_sizes.clear();
    const bool batched = is_batched();
    const int64_t last = static_cast<int64_t>(ops_.size()) - 1;
    PassSimulator simulator(x().rows(), ops_);
    simulator.start(last, static_cast<uint64_t>(iteration));
    Element element;
    for (int64_t batches = 0; (max_batches < 0 || batches < max_batches) && simulator.next(last, element); ++batches) {
        if (!batched) {
            pass.rows.push_back(element.value);
        } else {
            const std::vector<int64_t>& pool = simulator.pool();
            for (int64_t k = element.value; k < element.value + element.size; ++k)
                pass.rows.push_back(pool[static_cast<size_t>(k)]);
        }
        pass.batch_sizes.push_back(element.size);
    }
}

}  // namespace onefit
