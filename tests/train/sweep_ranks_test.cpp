// sweep() across ranks (onefit/distributed.hpp): rank 0 gathers every member, bit for bit what
// one process's sweep() gives, however many ranks share the members (more ranks than members
// included); a failure on any rank is rank 0's error, the one a single process throws; the
// members' bytes round-trip exactly and malformed bytes are an Error, never a crash.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "onefit/distributed.hpp"
#include "onefit/onefit.hpp"
#include "support/weights.hpp"

namespace onefit {
namespace {

// Ranks of one process, run one after another: ranks 1.. first (their gather only posts), then
// rank 0, whose gather returns everything posted.
class SequentialRanks final : public RankGroup {
public:
    SequentialRanks(int rank, std::vector<std::string>& mailbox) : rank_(rank), mailbox_(mailbox) {}
    int rank() const override { return rank_; }
    int size() const override { return static_cast<int>(mailbox_.size()); }
    std::vector<std::string> gather(const std::string& bytes) const override {
        mailbox_[static_cast<size_t>(rank_)] = bytes;
        return rank_ == 0 ? mailbox_ : std::vector<std::string>{};
    }

private:
    int rank_;
    std::vector<std::string>& mailbox_;
};

Sequential seed_layers(uint64_t seed) {
    Sequential m({4}, seed);
    m.add(Dense(32, "relu")).add(Dense(3, "softmax"));
    return m;
}

FitOptions options() {
    FitOptions o;
    o.batch_size = 20, o.epochs = 3, o.verbose = 0;
    return o;
}

std::vector<SweepMember> sweep_on_ranks(int ranks, const SweepGrid& grid, const LabeledData& data) {
    std::vector<std::string> mailbox(static_cast<size_t>(ranks));
    for (int r = ranks - 1; r >= 1; --r)
        EXPECT_TRUE(sweep(SequentialRanks(r, mailbox), seed_layers(0), Adam(), loss_from_name("log_cosh"), {}, data.x,
                          data.y, options(), grid)
                        .empty())
            << "rank " << r << " returns no members";
    return sweep(SequentialRanks(0, mailbox), seed_layers(0), Adam(), loss_from_name("log_cosh"), {}, data.x, data.y,
                 options(), grid);
}

// Every logged value, bit for bit (NaN payloads and -0 included).
bool same_bits(const History& a, const History& b) {
    if (a.history.size() != b.history.size()) return false;
    for (auto i = a.history.begin(), j = b.history.begin(); i != a.history.end(); ++i, ++j) {
        if (i->first != j->first || i->second.size() != j->second.size()) return false;
        if (std::memcmp(i->second.data(), j->second.data(), i->second.size() * sizeof(double)) != 0) return false;
    }
    return true;
}

void expect_same_members(const std::vector<SweepMember>& got, const std::vector<SweepMember>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].learning_rate, want[i].learning_rate) << i;
        EXPECT_EQ(got[i].seed, want[i].seed) << i;
        EXPECT_EQ(got[i].fold, want[i].fold) << i;
        EXPECT_EQ(got[i].optimizer, want[i].optimizer) << i;
        EXPECT_EQ(got[i].loss, want[i].loss) << i;
        EXPECT_EQ(got[i].batch_size, want[i].batch_size) << i;
        EXPECT_EQ(got[i].epochs, want[i].epochs) << i;
        EXPECT_EQ(got[i].history.epoch, want[i].history.epoch) << i;
        EXPECT_TRUE(same_bits(got[i].history, want[i].history)) << i;
        EXPECT_TRUE(testing_support::same_bits(got[i].weights, want[i].weights)) << i;
    }
}

TEST(SweepRanks, RankZeroGathersWhatOneProcessTrainsBitForBit) {
    // Learning rates x seeds x 3 stratified folds (30 members), and a batch-size axis, over 2, 3
    // and 7 ranks (shares that cut stacks and folds apart), and 40 ranks (some with none).
    const LabeledData iris = load_iris();
    SweepGrid grid{{0.01f, 0.1f}, {1, 2, 3, 4, 5}};
    grid.folds = 3;
    grid.batch_sizes = {20, 32};
    grid.stacking = SweepStacking::always;
    const std::vector<SweepMember> alone =
        sweep(seed_layers(0), Adam(), loss_from_name("log_cosh"), {}, iris.x, iris.y, options(), grid);
    ASSERT_EQ(alone.size(), 60u);
    for (int ranks : {1, 2, 3, 7, 80}) {
        SCOPED_TRACE("ranks " + std::to_string(ranks));
        expect_same_members(sweep_on_ranks(ranks, grid, iris), alone);
    }
}

TEST(SweepRanks, AFailureOnAnyRankIsRankZerosErrorAsOneProcessWouldThrowIt) {
    // Members 6 and 7 (learning rate -1) fail; with 3 ranks they are the last rank's.
    const LabeledData iris = load_iris();
    const SweepGrid grid{{0.01f, 0.02f, 0.05f, -1.0f}, {5, 6}};
    std::string alone;
    try {
        sweep(seed_layers(0), Adam(), loss_from_name("log_cosh"), {}, iris.x, iris.y, options(), grid);
    } catch (const Error& e) {
        alone = e.what();
    }
    ASSERT_NE(alone.find("sweep member 6 "), std::string::npos) << alone;
    for (int ranks : {2, 3}) {
        try {
            sweep_on_ranks(ranks, grid, iris);
            ADD_FAILURE() << ranks << " ranks: a failed member must fail the sweep";
        } catch (const Error& e) {
            EXPECT_EQ(std::string(e.what()), alone) << ranks << " ranks";
        }
    }
}

TEST(SweepRanks, MembersRoundTripAsBytesAndMalformedBytesAreAnError) {
    const LabeledData iris = load_iris();
    SweepGrid grid{{0.05f}, {1, 2}};
    grid.dropout_rates = {};
    std::vector<SweepMember> members =
        sweep(seed_layers(0), Adam(), loss_from_name("log_cosh"), {}, iris.x, iris.y, options(), grid);
    members[1].fold = 4, members[1].hidden_units = 7, members[1].dropout_rate = 0.25f;
    members[1].history.history["nan"] = {std::nan("1"), -0.0};  // every bit kept, NaN payloads too
    const std::string bytes = encode_members(members);
    const std::vector<SweepMember> back = decode_members(bytes);
    expect_same_members(back, members);
    EXPECT_EQ(back[1].hidden_units, 7);
    EXPECT_EQ(back[1].dropout_rate, 0.25f);
    EXPECT_EQ(encode_members(back), bytes);
    EXPECT_TRUE(decode_members(encode_members({})).empty());
    // Every truncation, and a trailing byte, is an Error.
    for (size_t n = 0; n < bytes.size(); n += 1 + n / 64)
        EXPECT_THROW(decode_members(bytes.substr(0, n)), Error) << n;
    EXPECT_THROW(decode_members(bytes + "x"), Error);
    std::string huge = bytes;
    huge[8] = '\xff';  // a member count no bytes could hold
    EXPECT_THROW(decode_members(huge), Error);
    // Only what encode_members writes decodes (the fuzzer checks that decoded bytes re-encode to
    // themselves): a float's word with its upper half set, a History key repeated.
    std::string wide = bytes;
    wide[16 + 7] = '\x01';  // the first member's learning rate
    EXPECT_THROW(decode_members(wide), Error);
    std::vector<SweepMember> twice(1);
    twice[0].history.history = {{"aa", {1.0}}, {"ab", {2.0}}};
    std::string repeated = encode_members(twice);
    const size_t ab = repeated.find("ab");
    ASSERT_NE(ab, std::string::npos);
    repeated[ab + 1] = 'a';
    EXPECT_THROW(decode_members(repeated), Error);
}

}  // namespace
}  // namespace onefit
