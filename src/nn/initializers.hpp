// Weight initializers with Keras's names and formulas, drawn from onefit's seeded generator.
#pragma once
#include <cstdint>
#include <string>

#include "core/rng.hpp"

namespace onefit::nn {

// Fills a (fan_in, fan_out) kernel or a bias of n values. Known: glorot_uniform
// (U(-l, l), l = sqrt(6 / (fan_in + fan_out))), glorot_normal, he_uniform, he_normal,
// lecun_uniform, uniform (= random_uniform: Keras's RandomUniform(-0.05, 0.05), an Embedding's
// default), zeros, ones. Throws Error for other names.
// Throws Error ("<what> is 'x'; known: ...") unless `name` is one initialize knows.
void check_initializer(const std::string& name, const char* what);
void initialize(const std::string& name, float* values, int64_t n, int64_t fan_in, int64_t fan_out, Rng& rng);

}  // namespace onefit::nn
