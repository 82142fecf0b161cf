// Data checks at the start of a fit: errors for what cannot train, and warnings for what
// trains but means something other than the user thinks (the seed's two mistakes).
#pragma once
#include <string>
#include <vector>

#include "onefit/tensor.hpp"
#include "program/training_program.hpp"

namespace onefit::train {

// x must be (N, input_width), finite; y must have N rows and a width the loss accepts;
// sparse labels must be integers in [0, classes). `what` names the data ("x", "validation x").
void check_features(const TrainingProgram& program, const Tensor& x, const std::string& what);
// Keras's sample_weight: one finite value per row ((N,) or (N, 1)). `what` names it.
// Returns warnings (e.g. the broadcast of class indices against a K-wide output).
std::vector<std::string> check_labels(const TrainingProgram& program, const Tensor& y, int64_t rows,
                                      const std::string& what);

// Warns when train and validation labels (class indices) do not share the same classes,
// as when label-sorted data is split without shuffling.
std::vector<std::string> check_class_coverage(const TrainingProgram& program, const Tensor& y_train,
                                              const Tensor& y_val);

}  // namespace onefit::train
