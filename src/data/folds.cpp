// k-fold cross-validation's folds with scikit-learn's assignment (sklearn.model_selection.KFold
// and StratifiedKFold, shuffle=False), so a fold here holds the rows it holds there.
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "onefit/dataset.hpp"
#include "onefit/error.hpp"

namespace onefit {
namespace {

void check_folds(int64_t rows, int64_t folds) {
    if (folds < 2) throw Error("k-fold: the number of folds must be at least 2, got " + std::to_string(folds));
    if (folds > rows)
        throw Error("k-fold: " + std::to_string(folds) + " folds need at least as many rows, got " +
                    std::to_string(rows));
}

}  // namespace

std::vector<int64_t> kfold_assignment(int64_t rows, int64_t folds, std::optional<uint64_t> shuffle_seed) {
    check_folds(rows, folds);
    std::vector<int64_t> fold(static_cast<size_t>(rows));
    int64_t row = 0;
    for (int64_t f = 0; f < folds; ++f) {
        const int64_t size = rows / folds + (f < rows % folds ? 1 : 0);
        for (int64_t i = 0; i < size; ++i) fold[static_cast<size_t>(row++)] = f;
    }
    if (shuffle_seed) Rng(*shuffle_seed).shuffle(fold.data(), rows);  // the same sizes, random rows
    return fold;
}

std::vector<int64_t> stratified_kfold_assignment(const std::vector<int64_t>& classes, int64_t folds,
                                                 std::optional<uint64_t> shuffle_seed) {
    const int64_t rows = static_cast<int64_t>(classes.size());
    check_folds(rows, folds);
    // Classes numbered by first appearance, as sklearn encodes them.
    std::map<int64_t, int64_t> code_of;
    std::vector<int64_t> encoded(classes.size());
    for (size_t i = 0; i < classes.size(); ++i)
        encoded[i] = code_of.emplace(classes[i], static_cast<int64_t>(code_of.size())).first->second;
    const int64_t n_classes = static_cast<int64_t>(code_of.size());
    std::vector<int64_t> counts(static_cast<size_t>(n_classes), 0);
    for (int64_t c : encoded) ++counts[static_cast<size_t>(c)];
    if (*std::max_element(counts.begin(), counts.end()) < folds)
        throw Error("k-fold: " + std::to_string(folds) + " stratified folds need a class with at least " +
                    std::to_string(folds) + " rows; the largest has " +
                    std::to_string(*std::max_element(counts.begin(), counts.end())));
    // allocation[f][c]: how many rows of class c fold f gets, from every folds-th entry of the
    // sorted codes (sklearn's y_order[f::k]), so classes spread as evenly as they can.
    std::vector<int64_t> sorted = encoded;
    std::sort(sorted.begin(), sorted.end());
    std::vector<std::vector<int64_t>> allocation(static_cast<size_t>(folds), std::vector<int64_t>(static_cast<size_t>(n_classes), 0));
    for (int64_t i = 0; i < rows; ++i) ++allocation[static_cast<size_t>(i % folds)][static_cast<size_t>(sorted[static_cast<size_t>(i)])];
    // Each class's rows, in order: the first allocation[0][c] to fold 0, the next to fold 1, ...
    // (Shuffled: each class's list of folds permuted, as sklearn shuffles folds_for_class.)
    std::vector<int64_t> fold(classes.size());
    std::optional<Rng> rng;
    if (shuffle_seed) rng.emplace(*shuffle_seed);
    for (int64_t c = 0; c < n_classes; ++c) {
        std::vector<int64_t> folds_for_class;
        for (int64_t f = 0; f < folds; ++f)
            folds_for_class.insert(folds_for_class.end(), static_cast<size_t>(allocation[static_cast<size_t>(f)][static_cast<size_t>(c)]), f);
        if (rng) rng->shuffle(folds_for_class.data(), static_cast<int64_t>(folds_for_class.size()));
        size_t next = 0;
        for (size_t i = 0; i < encoded.size(); ++i)
            if (encoded[i] == c) fold[i] = folds_for_class[next++];
    }
    return fold;
}

TrainTestSplit fold_split(const Tensor& x, const Tensor& y, const std::vector<int64_t>& assignment, int64_t fold) {
    if (x.rows() != y.rows() || static_cast<int64_t>(assignment.size()) != x.rows())
        throw Error("k-fold: x has " + std::to_string(x.rows()) + " rows, y " + std::to_string(y.rows()) +
                    " and the fold assignment " + std::to_string(assignment.size()) + "; give one of each per row");
    std::vector<int64_t> train_rows, test_rows;
    for (int64_t i = 0; i < x.rows(); ++i) (assignment[static_cast<size_t>(i)] == fold ? test_rows : train_rows).push_back(i);
    if (test_rows.empty() || train_rows.empty())
        throw Error("k-fold: fold " + std::to_string(fold) + " leaves no " + (test_rows.empty() ? "validation" : "training") +
                    " rows");
    TrainTestSplit split;
    split.x_train = x.gather_rows(train_rows), split.x_test = x.gather_rows(test_rows);
    split.y_train = y.gather_rows(train_rows), split.y_test = y.gather_rows(test_rows);
    return split;
}

TrainTestSplit bootstrap_split(const Tensor& x, const Tensor& y, uint64_t seed) {
    if (x.rows() != y.rows() || x.rows() < 1)
        throw Error("bootstrap: x has " + std::to_string(x.rows()) + " rows and y " + std::to_string(y.rows()) +
                    "; give one label per row");
    Rng rng(seed);
    std::vector<int64_t> drawn(static_cast<size_t>(x.rows())), out_of_bag;
    std::vector<char> seen(static_cast<size_t>(x.rows()), 0);
    for (int64_t& row : drawn) row = static_cast<int64_t>(rng.below(static_cast<uint64_t>(x.rows()))), seen[static_cast<size_t>(row)] = 1;
    for (int64_t i = 0; i < x.rows(); ++i)
        if (!seen[static_cast<size_t>(i)]) out_of_bag.push_back(i);
    if (out_of_bag.empty())
        throw Error("bootstrap: the sample of seed " + std::to_string(seed) + " drew every one of the " +
                    std::to_string(x.rows()) + " rows: no out-of-bag rows to validate on");
    TrainTestSplit split;
    split.x_train = x.gather_rows(drawn), split.x_test = x.gather_rows(out_of_bag);
    split.y_train = y.gather_rows(drawn), split.y_test = y.gather_rows(out_of_bag);
    return split;
}

}  // namespace onefit
