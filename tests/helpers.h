// Helpers shared by the test files.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "common/errors.h"
#include "config/config.h"

namespace whvi::testing {

// The defaults with `sets` ("section.key=value") applied.
inline config::Config cfg_with(const std::vector<std::string>& sets) { return config::Config::parse("", "test", sets); }

// The message of the whvi::Error that f throws; another exception is a test
// failure (its message returned), nothing thrown returns "(no error)", which
// no expected message contains. WHVI_TEST_SHOW_ERRORS=1 prints each message.
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const whvi::Error& e) {
    if (std::getenv("WHVI_TEST_SHOW_ERRORS")) std::cerr << "  whvi::Error: " << e.what() << "\n";
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected whvi::Error, got another exception: " << e.what();
    return e.what();
  }
  return "(no error)";
}

#ifdef WHVI_TEST_DATA_DIR
// The shared real data: WHVI_DATA_DIR, else the build's ../shared/data.
inline std::string data_dir() {
  const char* env = std::getenv("WHVI_DATA_DIR");
  return env && *env ? env : WHVI_TEST_DATA_DIR;
}
#endif

}  // namespace whvi::testing
