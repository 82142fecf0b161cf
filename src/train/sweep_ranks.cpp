// sweep() across ranks: each rank trains its share (train::sweep_part), then sends rank 0 its
// members, or its error, as bytes. Every rank reports before rank 0 decides, so an error on
// one rank can never leave another waiting in a gather.
#include <bit>
#include <cstring>
#include <exception>

#include "io/binary.hpp"
#include "onefit/distributed.hpp"
#include "onefit/error.hpp"
#include "train/sweep_part.hpp"

namespace onefit {
namespace {

class Writer {
public:
    void u64(uint64_t v) {
        unsigned char b[8];
        store_le(b, v);
        out_.append(reinterpret_cast<const char*>(b), 8);
    }
    void i64(int64_t v) { u64(static_cast<uint64_t>(v)); }
    void f32(float v) { u64(std::bit_cast<uint32_t>(v)); }
    void f64(double v) { u64(std::bit_cast<uint64_t>(v)); }
    void text(const std::string& s) { u64(s.size()), out_ += s; }
    std::string take() { return std::move(out_); }

private:
    std::string out_;
};

class Reader {
public:
    explicit Reader(const std::string& bytes) : bytes_(bytes) {}
    uint64_t u64() {
        need(8);
        const uint64_t v = load_le<uint64_t>(bytes_of(bytes_) + at_);
        at_ += 8;
        return v;
    }
    int64_t i64() { return static_cast<int64_t>(u64()); }
    float f32() { return std::bit_cast<float>(static_cast<uint32_t>(u64())); }
    double f64() { return std::bit_cast<double>(u64()); }
    // A count of items at least `item_bytes` each, checked against what is left before anything
    // is allocated for it.
    size_t count(size_t item_bytes) {
        const uint64_t n = u64();
        if (n > (bytes_.size() - at_) / item_bytes) fail();
        return static_cast<size_t>(n);
    }
    std::string text() {
        const size_t n = count(1);
        std::string s = bytes_.substr(at_, n);
        at_ += n;
        return s;
    }
    bool done() const { return at_ == bytes_.size(); }

private:
    void need(size_t n) const {
        if (bytes_.size() - at_ < n) fail();
    }
    [[noreturn]] static void fail() { throw Error("sweep: a rank's members arrived truncated or malformed"); }
    const std::string& bytes_;
    size_t at_ = 0;
};

constexpr uint64_t kMembersTag = 0x6f6e6566'69744d31;  // "onefitM1"
enum Status : uint64_t { ok = 0, failed = 1 };

}  // namespace

std::string encode_members(const std::vector<SweepMember>& members) {
    Writer w;
    w.u64(kMembersTag), w.u64(members.size());
    for (const SweepMember& m : members) {
        w.f32(m.learning_rate), w.u64(m.seed), w.i64(m.fold), w.text(m.optimizer), w.text(m.loss);
        w.i64(m.hidden_units), w.f32(m.dropout_rate), w.i64(m.batch_size), w.i64(m.epochs);
        w.u64(m.history.epoch.size());
        for (int64_t e : m.history.epoch) w.i64(e);
        w.u64(m.history.history.size());
        for (const auto& [key, values] : m.history.history) {
            w.text(key), w.u64(values.size());
            for (double v : values) w.f64(v);
        }
        w.u64(m.weights.size());
        for (const Tensor& t : m.weights) {
            w.u64(t.shape().size());
            for (int64_t d : t.shape()) w.i64(d);
            w.u64(static_cast<uint64_t>(t.size()));
            for (int64_t i = 0; i < t.size(); ++i) w.f32(t.data()[i]);
        }
    }
    return w.take();
}

std::vector<SweepMember> decode_members(const std::string& bytes) {
    Reader r(bytes);
    if (r.u64() != kMembersTag) throw Error("sweep: a rank sent something other than members");
    std::vector<SweepMember> members(r.count(8 * 13));
    for (SweepMember& m : members) {
        m.learning_rate = r.f32(), m.seed = r.u64(), m.fold = r.i64(), m.optimizer = r.text(), m.loss = r.text();
        m.hidden_units = r.i64(), m.dropout_rate = r.f32(), m.batch_size = r.i64(), m.epochs = r.i64();
        m.history.epoch.resize(r.count(8));
        for (int64_t& e : m.history.epoch) e = r.i64();
        for (size_t logs = r.count(16); logs > 0; --logs) {
            const std::string key = r.text();
            std::vector<double>& values = m.history.history[key];
            values.resize(r.count(8));
            for (double& v : values) v = r.f64();
        }
        m.weights.resize(r.count(8));
        for (Tensor& t : m.weights) {
            Shape shape(r.count(8));
            uint64_t elements = 1;
            for (int64_t& d : shape) {
                d = r.i64();
                if (d < 0 || (d > 0 && elements > (uint64_t{1} << 40) / static_cast<uint64_t>(d)))
                    throw Error("sweep: a rank sent a tensor of impossible shape");
                elements *= static_cast<uint64_t>(d);
            }
            if (r.count(8) != elements) throw Error("sweep: a rank sent a tensor of the wrong size");
            std::vector<float> values(elements);
            for (float& v : values) v = r.f32();
            t = Tensor(std::move(shape), std::move(values));
        }
    }
    if (!r.done()) throw Error("sweep: a rank's members arrived with trailing bytes");
    return members;
}

std::vector<SweepMember> sweep(const RankGroup& ranks, const Sequential& model, const Optimizer& optimizer,
                               const Loss& loss, const CompileOptions& compile_options, const Tensor& x,
                               const Tensor& y, FitOptions options, const SweepGrid& grid) {
    Writer report;
    try {
        const std::vector<SweepMember> mine = train::sweep_part(model, optimizer, loss, compile_options, x, y,
                                                                std::move(options), grid, ranks.rank(), ranks.size());
        report.u64(Status::ok);
        report.text(encode_members(mine));
    } catch (const std::exception& e) {
        report = Writer();
        report.u64(Status::failed);
        report.text(e.what());
    }
    const std::vector<std::string> reports = ranks.gather(report.take());
    std::vector<SweepMember> members;
    for (size_t rank = 0; rank < reports.size(); ++rank) {  // (empty but on rank 0)
        Reader r(reports[rank]);
        if (r.u64() == Status::failed) throw Error(r.text());  // the first in member order: shares are in rank order
        std::vector<SweepMember> theirs = decode_members(r.text());
        for (SweepMember& m : theirs) members.push_back(std::move(m));
    }
    if (ranks.rank() == 0 && reports.size() != static_cast<size_t>(ranks.size()))
        throw Error("sweep: rank 0 gathered " + std::to_string(reports.size()) + " reports from " +
                    std::to_string(ranks.size()) + " ranks");
    return members;
}

}  // namespace onefit
