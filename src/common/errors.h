// Two tiers of errors (see docs/reference.md "Errors"):
//  * user errors (bad config, data, sizes, options) throw whvi::Error with a
//    message that names the bad value, where it came from and the fix;
//  * internal invariants use WHVI_ASSERT, which aborts with file:line.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string>

namespace whvi {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A tensor or array with the wrong shape, dtype or device.
struct ShapeError : Error {
  using Error::Error;
};

// A model whose numbers stopped being finite while training (its predictions,
// its noise): the training loop's caller reports it as a divergence, naming the
// step and the settings.
struct NonFiniteError : Error {
  using Error::Error;
};

// A run stopped by a signal (SIGINT, SIGTERM, SIGHUP) after it stopped what
// it had started: not a whvi::Error, so no `catch (const Error&)` takes it for
// one candidate's or one split's failure. main() reports it and ends the
// process by the same signal.
struct Stopped : std::runtime_error {
  Stopped(int sig, const std::string& what) : std::runtime_error(what), signal(sig) {}
  int signal;
};

namespace detail {
template <class... Args>
std::string concat(Args&&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}
}  // namespace detail

}  // namespace whvi

// User-facing check: throws ErrorType with the streamed message.
#define WHVI_CHECK_AS(ErrorType, cond, ...)                          \
  do {                                                               \
    if (!(cond)) throw ErrorType(::whvi::detail::concat(__VA_ARGS__)); \
  } while (0)
#define WHVI_CHECK(cond, ...) WHVI_CHECK_AS(::whvi::Error, cond, __VA_ARGS__)

// Internal invariant: a failure is a bug in whvi, not in the input.
#define WHVI_ASSERT(cond)                                                                   \
  do {                                                                                      \
    if (!(cond)) {                                                                          \
      std::fprintf(stderr, "whvi internal error: %s at %s:%d\n", #cond, __FILE__, __LINE__); \
      std::abort();                                                                         \
    }                                                                                       \
  } while (0)
