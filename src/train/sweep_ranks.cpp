// sweep() across ranks: each rank trains its share (train::sweep_part), then sends rank 0 its
// members, or its error, as bytes. Every rank reports before rank 0 decides, so an error on
// one rank can never leave another waiting in a gather.
#include <exception>

#include "onefit/distributed.hpp"
#include "onefit/error.hpp"
#include "train/member_bytes.hpp"
#include "train/sweep_part.hpp"

namespace onefit {
namespace {

using train::Reader;
using train::Writer;
enum Status : uint64_t { ok = 0, failed = 1 };

}  // namespace

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
