// result.hpp - errors that carry what failed, on what, why, and what to do.
//
// Rule: anything an operator can cause (bad input, missing interface, no privilege,
// kernel refusal) is returned as an Error and reaches main(), which prints one line:
//   levee: <what>: <why>; <hint>
// and exits 1 (2 for usage errors). Exceptions are left for programming errors.
#pragma once

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>
#include <variant>

namespace levee {

struct Error {
  std::string what;    // what failed, on what: "attach lvpd"
  int err = 0;         // errno, 0 if none
  std::string hint;    // what to do about it, may be empty
  bool usage = false;  // the command line itself was wrong (exit 2)

  std::string message() const {
    std::string m = what;
    if (err) m += std::string(": ") + std::strerror(err);
    if (!hint.empty()) m += "; " + hint;
    return m;
  }
};

inline Error usage_error(std::string what, std::string hint = {}) {
  return Error{std::move(what), 0, std::move(hint), true};
}

inline Error sys_error(std::string what, int err = errno, std::string hint = {}) {
  return Error{std::move(what), err, std::move(hint), false};
}

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}
  Result(Error e) : v_(std::move(e)) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  const T& value() const& { return std::get<0>(v_); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error e) : e_(std::move(e)), ok_(false) {}
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return e_; }

 private:
  Error e_;
  bool ok_ = true;
};

using Status = Result<void>;

// Propagate an error from an expression returning Result/Status.
#define LV_TRY(expr)                               \
  do {                                             \
    auto lv_try_r_ = (expr);                       \
    if (!lv_try_r_.ok()) return lv_try_r_.error(); \
  } while (0)

// Assign or return: `LV_TRY_ASSIGN(auto pins, open_pinned(iface));` declares `pins` as
// the value of a Result, or returns its error from the enclosing function. The left side
// is any declaration or assignable expression: `LV_TRY_ASSIGN(const Cidr c, ...)`,
// `LV_TRY_ASSIGN(out.rows, ...)`. The expression may hold commas (template arguments).
#define LV_TRY_ASSIGN(lhs, ...) LV_TRY_ASSIGN_IMPL_(LV_TRY_CONCAT_(lv_try_v_, __LINE__), lhs, __VA_ARGS__)
#define LV_TRY_ASSIGN_IMPL_(tmp, lhs, ...) \
  auto tmp = (__VA_ARGS__);                \
  if (!tmp.ok()) return tmp.error();       \
  lhs = std::move(tmp).value()
#define LV_TRY_CONCAT_(a, b) LV_TRY_CONCAT_IMPL_(a, b)
#define LV_TRY_CONCAT_IMPL_(a, b) a##b

}  // namespace levee
