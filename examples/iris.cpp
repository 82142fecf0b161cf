// The seed's Keras program in onefit's C++ API: Iris, 70/30 split without shuffling,
// Dense(32, relu) -> Dense(3, softmax), Adam(0.1), log_cosh, batch 20, 20 epochs.
#include <chrono>
#include <iostream>

#include "onefit/onefit.hpp"

int main() {
    using namespace onefit;
    const LabeledData iris = load_iris();
    const TrainTestSplit data = train_test_split(iris.x, iris.y, /*test_size=*/0.30, /*shuffle=*/false);

    Sequential model({4});
    model.add(Dense(32, "relu", true, "relu"));
    model.add(Dense(3, "softmax", true, "softmax"));
    model.compile(Adam(0.1f), loss_from_name("logcosh"));

    FitOptions options;
    options.batch_size = 20;
    options.epochs = 20;
    options.validation_data = {data.x_test, data.y_test};
    options.shuffle = false;  // the seed feeds an unshuffled tf.data pipeline
    options.verbose = 0;
    const auto start = std::chrono::steady_clock::now();
    const History history = model.fit(data.x_train, data.y_train, options);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    std::cout << "val_loss: " << history["val_loss"].back() << "\nTime: " << seconds << " s\n";
}
