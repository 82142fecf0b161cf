// std::visit over a variant with one lambda per alternative: Overloaded{[](int) {...}, [](auto) {...}}.
#pragma once

namespace onefit {

template <class... F>
struct Overloaded : F... {
    using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

}  // namespace onefit
