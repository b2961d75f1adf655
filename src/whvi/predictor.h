// whvi as a library: a trained split's model inside another C++ program, with
// the numbers of `whvi predict` (the same bytes at the same thread count).
// This header needs nothing but the standard library; link the installed
// package (`find_package(whvi)`, `target_link_libraries(app PRIVATE whvi::whvi)`).
//
//   whvi::Predictor p("out/NAME/split-00.ckpt");
//   std::string csv = p.predict({"x1", "x2"}, {{"0.5", "1.2"}, {"0.1", ""}});
//
// Errors (a damaged checkpoint, a missing column, a cell that is not a number)
// are thrown as std::runtime_error with whvi's one-line message.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace whvi {

class Predictor {
 public:
  // Loads and checks the checkpoint. whvi's log lines go to standard error
  // (unless the program has set spdlog's default logger). `threads` sets the threads of LibTorch,
  // OpenBLAS and the whvi kernels for the whole process (as `whvi --threads`;
  // a row's numbers depend on the thread count only through float rounding
  // order, and not at all for one thread).
  explicit Predictor(const std::string& checkpoint, int threads = 1);
  ~Predictor();
  Predictor(Predictor&&) noexcept;
  Predictor& operator=(Predictor&&) noexcept;

  // The input columns the model reads, in its order.
  std::vector<std::string> columns() const;
  // Whether the model predicts classes (else a real-valued target).
  bool classifier() const;

  // `whvi predict --input FILE`'s output (CSV text: the header line, then one
  // line per row): the rows of a CSV/TSV file, gzip or plain.
  std::string predict_file(const std::string& input, int64_t mc_samples = 0, double interval = 0.95) const;
  // The same for rows in memory: `header` names each row's cells (the model's
  // input columns in any order; other names are ignored), every cell as text
  // as it would stand in a CSV file ("" or "NA" for a missing one).
  std::string predict(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                      int64_t mc_samples = 0, double interval = 0.95) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace whvi
