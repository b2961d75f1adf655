// Small file helpers shared by every writer of results.
#pragma once

#include <string>

namespace whvi {

// Writes `content` to `path` atomically: a temporary file in the same folder,
// flushed, then renamed over `path`. A crash never leaves a half-written file.
// Creates missing parent folders. Throws whvi::Error naming the path.
void write_file_atomic(const std::string& path, const std::string& content);

// The command line as one shell-quoted string (recorded in result files).
std::string join_command_line(int argc, const char* const* argv);

}  // namespace whvi
