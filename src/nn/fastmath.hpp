// Scalar transcendental functions used by the step loop's activations and losses.
// One place to swap in faster forms; the double versions stay exact for the gradient tests.
#pragma once
#include <cmath>

namespace onefit::nn {

template <class T>
inline T exp_fast(T x) {
    return std::exp(x);
}
template <class T>
inline T log1p_fast(T x) {
    return std::log1p(x);
}

}  // namespace onefit::nn
