// Checksums of what a run wrote and read: a checkpoint's bytes, a split
// record's digest, a split's data, and the run's fingerprint with what the
// data add to it. The config's part of the fingerprint is resolved with the
// plan (resolve_fingerprint.cpp).
#include "experiment/internal.h"

#include <string>

#include <torch/torch.h>

#include "common/errors.h"
#include "common/io.h"
#include "common/rng.h"
#include "data/dataset.h"
#include "experiment/checkpoint.h"

namespace whvi::experiment::detail {

// The FNV-1a checksum of a file's bytes (16 hex digits), "" when it cannot be read.
std::string file_checksum(const std::string& path) {
  try {
    const std::string bytes = read_user_file(path, "the checkpoint", max_checkpoint_bytes());
    return hex(Fnv1a64().add(bytes.data(), bytes.size()).value());
  } catch (const Error&) {
    return "";
  }
}

// A split record's digest: the checksum of the record without its digest, so
// --resume can tell a record whvi wrote from one edited or copied in.
std::string record_digest(json r) {
  r.erase("record_digest");
  const std::string text = r.dump();
  return hex(Fnv1a64().add(text.data(), text.size()).value());
}

// The split's data as the model saw it: a checkpoint is only valid for these bits.
std::string data_fingerprint(const data::PreparedSplit& p) {
  Fnv1a64 h;
  for (const auto* t : {&p.x_train, &p.y_train, &p.x_test, &p.y_test}) hash_tensor(h, *t);
  return hex(h.value());
}

// The fingerprint of this run's splits. Data with a constant non-zero input
// column are prepared differently since constant columns are centred: results
// from before must not be resumed into, so their fingerprint says so.
std::string run_fingerprint(const RunPlan& plan, const data::RegressionData& d) {
  std::string fp = plan.fingerprint;
  if (d.standardize_x && d.x.size(0) > 0) {
    const auto hi = std::get<0>(d.x.max(0)), lo = std::get<0>(d.x.min(0));
    if (((hi == lo) & (hi != 0)).any().item<bool>()) fp += "|constant-input-columns-centred";
  }
  return fp;
}

}  // namespace whvi::experiment::detail
