// The readers of onefit/io.hpp over bytes already in memory. The file readers read the whole
// file and call these; the fuzzers (fuzz/) call them directly. `name` is what errors name.
#pragma once
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "onefit/dataset.hpp"
#include "onefit/tensor.hpp"

namespace onefit {

Tensor parse_npy(std::string_view bytes, const std::string& name);   // src/data/npy.cpp
// src/data/csv.cpp: read_csv over text, its rows parsed in chunks of about chunk_bytes on the
// thread pool; chunk_bytes 0 tokenizes every record instead (the reference the chunks must match).
LabeledData parse_csv(std::string_view text, const std::string& name, const CsvOptions& options, size_t chunk_bytes);
Tensor parse_idx(std::string_view bytes, const std::string& name);   // src/data/idx.cpp

// src/io/safetensors.cpp
std::vector<std::pair<std::string, Tensor>> parse_safetensors(std::string_view bytes, const std::string& name,
                                                              std::map<std::string, std::string>* metadata);
std::string serialize_safetensors(const std::vector<std::pair<std::string, Tensor>>& tensors,
                                  const std::map<std::string, std::string>& metadata, const std::string& name);

// x (N, ...) and y (N,) or (N, 1) as LabeledData, shaped as read_npy_pair documents.
// src/io/labeled_pair.cpp
LabeledData labeled_pair(Tensor x, Tensor y, const std::string& x_name, const std::string& y_name);

}  // namespace onefit
