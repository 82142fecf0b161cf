// encode_members / decode_members (onefit/distributed.hpp) over train/member_bytes.hpp's words.
// Apart from the sweep itself, so the fuzzer (fuzz/fuzz_members.cpp) links only this.
#include "onefit/distributed.hpp"
#include "train/member_bytes.hpp"

namespace onefit {
namespace {
using train::Reader;
using train::Writer;
constexpr uint64_t kMembersTag = 0x6f6e6566'69744d31;  // "onefitM1"
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
            if (!m.history.history.empty() && !(m.history.history.rbegin()->first < key))
                throw Error("sweep: a rank sent a History whose logs are repeated or out of order");
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

}  // namespace onefit
