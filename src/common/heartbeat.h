// A line when whvi has been quiet too long. Long steps, measurements and fits
// (a 268M-parameter first step, the stopping rule's pass over 900,000 held-out
// rows, an exact GP on 5,000 rows) each print their own estimate where they can
// tell one in advance; where a single call runs long, a watcher thread says
// what the run is doing and for how long, so that no run is silent for more
// than `quiet` seconds. Nothing here touches a number a run computes.
#pragma once

#include <string>

namespace whvi::heartbeat {

// Progress: a console line was written, or a training step done (the log's sink, the loop).
void touch();

// What the run is doing now, for the watcher's line; restored when it ends.
class Phase {
 public:
  explicit Phase(std::string what);
  ~Phase();
  Phase(const Phase&) = delete;
  Phase& operator=(const Phase&) = delete;

 private:
  std::string previous_;
};

// The watcher: while it lives, after `quiet` seconds with no console line it
// logs "<phase>: still working (N s since the last progress)" (info), and
// again after each further `quiet` seconds.
class Watch {
 public:
  explicit Watch(double quiet);
  ~Watch();
  Watch(const Watch&) = delete;
  Watch& operator=(const Watch&) = delete;

 private:
  bool owner_ = false;  // the first Watch runs the thread; one inside it does nothing
};

}  // namespace whvi::heartbeat
