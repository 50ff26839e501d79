// names.hpp - enums as operators read and write them: one table of (value, name) pairs
// per enum, looked up both ways, so a name and its parser cannot drift apart.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace levee {

template <typename E>
struct Named {
  E value;
  const char* name;
};

// The name of `v` in `table`, or `otherwise`.
template <typename E, size_t N>
constexpr const char* name_in(const Named<E> (&table)[N], E v, const char* otherwise) {
  for (const Named<E>& n : table)
    if (n.value == v) return n.name;
  return otherwise;
}

// The value `s` names in `table`, if any.
template <typename E, size_t N>
constexpr std::optional<E> value_in(const Named<E> (&table)[N], std::string_view s) {
  for (const Named<E>& n : table)
    if (s == n.name) return n.value;
  return std::nullopt;
}

}  // namespace levee
