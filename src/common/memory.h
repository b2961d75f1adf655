// A refusal of work whose memory cannot fit, said before it is allocated.
#pragma once

#include <string>

namespace whvi {

// Throws whvi::Error when `need_bytes` exceed what this process can use
// (physical memory, the cgroup's limit, ulimit -v; common/runtime.h):
// "<what> would need about N MiB, more than the M MiB this process can use
// (memory, cgroup or ulimit -v); <fix>". Nothing when the limit is unknown.
void refuse_unless_room(double need_bytes, const std::string& what, const std::string& fix);

}  // namespace whvi
