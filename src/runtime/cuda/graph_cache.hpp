// Which CUDA graph the graph path replays, decided on the host. A graph runs a stretch of one
// epoch's training steps (and the epoch's validation when asked); everything that changes from
// step to step or epoch to epoch (which rows, the optimizer step, which epoch's log) is read
// from device memory, so a graph depends only on its steps' batch sizes and on whether it
// validates. Shuffled epochs of an array all share one graph; a live progress bar's ~30 chunks
// per epoch share two or three. Plain C++ (no CUDA types), tested on the host.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace onefit::cuda {

struct GraphKey {
    std::vector<int32_t> batch_rows;  // the rows of each step, in order (empty: validation only)
    bool validate = false;            // then the validation batches
    bool operator==(const GraphKey&) const = default;
};

// The key of steps [first, last) of the fit's schedule (batch_rows: rows per global step).
inline GraphKey graph_key(const std::vector<int32_t>& batch_rows, int64_t first, int64_t last, bool validate) {
    return GraphKey{std::vector<int32_t>(batch_rows.begin() + first, batch_rows.begin() + last), validate};
}

// At most `capacity` graphs: a fit whose epochs keep changing shape (a Dataset whose passes
// differ) captures a new graph when it needs one, and the least recently used makes room, so
// the cache cannot grow with the epochs.
template <class Graph>
class GraphCache {
public:
    explicit GraphCache(size_t capacity) : capacity_(std::max<size_t>(capacity, 1)) {}

    // The graph for key, or nullptr (the caller captures one and calls insert).
    Graph* find(const GraphKey& key) {
        for (Entry& e : entries_)
            if (e.key == key) {
                e.last_use = ++clock_;
                return &e.graph;
            }
        return nullptr;
    }
    // Stores the graph of a key find() did not have. When full, the least recently used entry
    // makes room and its graph is returned, for the caller to destroy.
    std::optional<Graph> insert(GraphKey key, Graph graph) {
        std::optional<Graph> evicted;
        if (entries_.size() == capacity_) {
            auto lru = std::min_element(entries_.begin(), entries_.end(),
                                        [](const Entry& a, const Entry& b) { return a.last_use < b.last_use; });
            evicted = std::move(lru->graph);
            entries_.erase(lru);
        }
        entries_.push_back(Entry{std::move(key), std::move(graph), ++clock_});
        return evicted;
    }
    size_t size() const { return entries_.size(); }
    template <class F>
    void for_each(F&& f) {
        for (Entry& e : entries_) f(e.graph);
    }

private:
    struct Entry {
        GraphKey key;
        Graph graph;
        uint64_t last_use;
    };
    size_t capacity_;
    uint64_t clock_ = 0;
    std::vector<Entry> entries_;
};

}  // namespace onefit::cuda
