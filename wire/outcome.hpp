#pragma once
// A value or an error code: what every decoder in weir returns.
#include <utility>
#include <variant>

namespace weir {

template <class T, class E>
class outcome {
 public:
  outcome(T value) : state_(std::in_place_index<0>, std::move(value)) {}
  outcome(E error) : state_(std::in_place_index<1>, error) {}

  explicit operator bool() const { return state_.index() == 0; }
  bool ok() const { return state_.index() == 0; }
  const T& value() const& { return std::get<0>(state_); }
  T& value() & { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  E error() const { return std::get<1>(state_); }

 private:
  std::variant<T, E> state_;
};

}  // namespace weir
