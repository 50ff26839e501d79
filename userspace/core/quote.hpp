// quote.hpp - an operator's value as an error echoes it.
//
// Errors name the value that was wrong ("'frobnicate' is not a command"), but a value
// can be anything an operator, a script or a file gave: 10 MB of class name, control
// characters, a newline that would split levee's one-line errors. Every error that
// echoes such a value goes through quote_value().
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace levee {

// At most this many bytes of a value are echoed.
inline constexpr size_t kQuotedMax = 64;

// The value in single quotes: control characters as \xNN; one longer than kQuotedMax
// cut (on a UTF-8 character boundary) with its size after it:
// 'aaaaaaaa…' (10485760 bytes).
std::string quote_value(std::string_view value);

// A whole message that echoes a value where levee cannot single it out (CLI11's
// errors): the same, unquoted, cut at kClippedMax bytes.
inline constexpr size_t kClippedMax = 200;
std::string clipped(std::string_view text);

}  // namespace levee
