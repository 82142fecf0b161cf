// Data in: the built-in Iris set, CSV files, scikit-learn's train_test_split and a
// tf.data-like Dataset (from_tensor_slices, shuffle, batch, repeat, take).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "onefit/tensor.hpp"

namespace onefit {

// Features x of shape (N, F) and labels y of shape (N,) (class indices or regression targets).
struct LabeledData {
    Tensor x;  // (samples, features): images come flattened, channels last
    Tensor y;
    // One sample's shape as the file held it: (height, width, channels) for images ((N, H, W)
    // arrays get one channel), (features) otherwise; empty where the reader did not say.
    Shape sample_shape;
    std::vector<std::string> feature_names;
    std::vector<std::string> class_names;  // empty when labels are numeric in the source
};

// The Iris data set exactly as scikit-learn ships it: 150 rows in the same order,
// 4 features (cm), labels 0 = setosa, 1 = versicolor, 2 = virginica.
LabeledData load_iris();

struct CsvOptions {
    std::string label_column;  // a header name, or a 0-based index as text; empty = last column
    bool has_header = true;
    char delimiter = ',';
    bool allow_nan = false;    // NaN/Inf values are refused (with file:line:column) unless true
};

// Reads a CSV file: a header row, one label column, numeric feature columns.
// String labels are mapped to class indices in sorted order (like sklearn's LabelEncoder);
// numeric labels are kept as numbers. Handles a UTF-8 BOM and CRLF line ends.
// Every problem throws onefit::Error naming the file, line and column. Rows are parsed on all
// cores; x comes back as shared storage (Tensor::shares_storage), so copies of it are free until
// one is written to.
LabeledData read_csv(const std::string& path, const CsvOptions& options = {});

struct TrainTestSplit {
    Tensor x_train, x_test, y_train, y_test;
};

// scikit-learn's semantics: n_test = ceil(test_size * n), n_train = n - n_test; with
// shuffle=false the first n_train rows are train and the last n_test rows are test.
// With shuffle=true rows are permuted by onefit's seeded generator (not NumPy's).
TrainTestSplit train_test_split(const Tensor& x, const Tensor& y, double test_size, bool shuffle = true,
                                uint64_t seed = 0);

// k-fold cross-validation, as scikit-learn's KFold(k) and StratifiedKFold(k) with shuffle=False:
// the fold whose validation rows hold each row. KFold: contiguous folds, the first rows % k one
// row longer. Stratified (classes: each row's class): each class's rows, in order, dealt to the
// folds in contiguous runs sized so every fold gets its share of every class (sklearn's
// allocation, exactly). Throws Error for k < 2, more folds than rows, or (stratified) more folds
// than the largest class has rows.
// With shuffle_seed, shuffle=True's folds (drawn by onefit's seeded generator, not NumPy's): the
// rows of each fold chosen at random (for stratified folds, within each class), the fold sizes
// and each class's share per fold as without shuffling.
std::vector<int64_t> kfold_assignment(int64_t rows, int64_t folds, std::optional<uint64_t> shuffle_seed = std::nullopt);
std::vector<int64_t> stratified_kfold_assignment(const std::vector<int64_t>& classes, int64_t folds,
                                                 std::optional<uint64_t> shuffle_seed = std::nullopt);
// Fold `fold`'s split: test = its rows, train = every other row, both in the data's order.
TrainTestSplit fold_split(const Tensor& x, const Tensor& y, const std::vector<int64_t>& assignment, int64_t fold);
// A bootstrap sample: train = as many rows as x has, drawn with replacement (onefit's seeded
// generator, in draw order); test = the rows never drawn ("out of bag"), in the data's order.
// Throws Error when every row was drawn (no out-of-bag rows to validate on).
TrainTestSplit bootstrap_split(const Tensor& x, const Tensor& y, uint64_t seed);

// What one pass over a dataset yields: rows (indices into x/y) in order, cut into batches.
struct DatasetPass {
    std::vector<int64_t> rows;
    std::vector<int64_t> batch_sizes;  // sums to rows.size()
};

// A tf.data-like pipeline over in-memory arrays. Cheap to copy (shares the arrays).
// Elements are single rows until batch(); then they are batches. Semantics follow tf.data:
// shuffle(buffer) samples from a sliding buffer, reshuffled on each iteration (with the
// iteration number mixed into the seed); repeat(-1) is infinite; take(n) keeps n elements.
class Dataset {
public:
    static Dataset from_tensor_slices(Tensor x, Tensor y);
    // (x, y, sample_weight), as a tf.data dataset of 3-tuples: one weight per row ((N,) or (N, 1),
    // finite), which fit and evaluate weight that row's loss by, as Keras does.
    static Dataset from_tensor_slices(Tensor x, Tensor y, Tensor sample_weight);
    // This dataset (its ops kept) with these per-row weights in place of its own (Keras's
    // class_weight over a dataset is its labels' weights, row by row).
    Dataset with_sample_weight(Tensor sample_weight) const;

    Dataset shuffle(int64_t buffer_size, uint64_t seed = 0, bool reshuffle_each_iteration = true) const;
    Dataset batch(int64_t batch_size, bool drop_remainder = false) const;
    Dataset repeat(int64_t count = -1) const;
    Dataset take(int64_t count) const;

    const Tensor& x() const;
    const Tensor& y() const;
    const Tensor* sample_weight() const { return w_.get(); }  // null: unweighted
    bool is_batched() const;
    // Number of elements (rows, or batches once batched); -1 when infinite.
    int64_t cardinality() const;

    // Fills `pass` with the iteration-th pass (iteration seeds the reshuffle). Unbatched
    // datasets come out as batches of one row. At most max_batches batches (-1 = all;
    // an infinite dataset needs a limit). Reuses pass's capacity: no allocation when the
    // vectors are already large enough.
    void plan(int64_t iteration, int64_t max_batches, DatasetPass& pass) const;

    struct Op {
        enum class Kind { Shuffle, Batch, Repeat, Take } kind;
        int64_t count = 0;  // buffer size, batch size, repeat count or take count
        uint64_t seed = 0;
        bool flag = false;  // reshuffle_each_iteration or drop_remainder
    };

private:
    std::shared_ptr<const Tensor> x_, y_, w_;
    std::vector<Op> ops_;
};

}  // namespace onefit
