#include "experiment/checkpoint.h"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "common/errors.h"
#include "common/io.h"
#include "common/runtime.h"
#include "experiment/experiment.h"
#include "experiment/resolve.h"
#include "train/loop.h"

namespace whvi::experiment {

void hash_tensor(Fnv1a64& h, const torch::Tensor& t_in) {
  const auto t = t_in.detach().contiguous().cpu();
  const std::string dt(c10::toString(t.scalar_type()));
  h.add(dt.data(), dt.size());
  for (auto s : t.sizes()) h.add_value(static_cast<int64_t>(s));
  h.add(t.data_ptr(), static_cast<size_t>(t.numel()) * t.element_size());
}

size_t max_checkpoint_bytes() {
  const unsigned long long mem = usable_memory_bytes();
  return mem > 0 ? static_cast<size_t>(mem / 2) : size_t{1} << 34;
}

std::string hex(uint64_t v) {
  char buf[20];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string checkpoint_checksum(infer::Inference& inf, const CheckpointMeta& m) {
  Fnv1a64 h;
  for (const auto& [key, t] : inf.state()) {
    h.add(key.data(), key.size());
    hash_tensor(h, t);
  }
  for (const auto* s : {&m.config_yaml, &m.data_fp}) h.add(s->data(), s->size());
  h.add_value(m.split).add_value(m.d_in).add_value(m.y_mean).add_value(m.y_std);
  if (m.num_classes > 0) h.add_value(m.num_classes);
  if (!m.inputs_json.empty()) {
    h.add(m.inputs_json.data(), m.inputs_json.size());
    hash_tensor(h, m.x_mean);
    hash_tensor(h, m.x_std);
  }
  if (m.x_fill.defined()) hash_tensor(h, m.x_fill);  // only where the data had missing cells
  if (!m.calibration_json.empty()) h.add(m.calibration_json.data(), m.calibration_json.size());
  for (const auto& [name, value] : m.likelihood_fitted) h.add_value(value);
  return hex(h.value());
}

void save_checkpoint(const std::string& path, infer::Inference& inf, const CheckpointMeta& m) {
  torch::serialize::OutputArchive ar;
  for (const auto& [key, t] : inf.state()) ar.write("param/" + key, t);
  ar.write("meta/config_yaml", c10::IValue(m.config_yaml));
  ar.write("meta/source", c10::IValue(m.source));
  ar.write("meta/split", c10::IValue(m.split));
  ar.write("meta/d_in", c10::IValue(m.d_in));
  ar.write("meta/y_mean", c10::IValue(m.y_mean));
  ar.write("meta/y_std", c10::IValue(m.y_std));
  ar.write("meta/data_fingerprint", c10::IValue(m.data_fp));
  if (m.num_classes > 0) ar.write("meta/num_classes", c10::IValue(m.num_classes));
  if (!m.inputs_json.empty()) {
    ar.write("meta/inputs", c10::IValue(m.inputs_json));
    ar.write("meta/x_mean", m.x_mean);
    ar.write("meta/x_std", m.x_std);
  }
  if (m.x_fill.defined()) ar.write("meta/x_fill", m.x_fill);
  if (!m.calibration_json.empty()) ar.write("meta/calibration", c10::IValue(m.calibration_json));
  for (const auto& [name, value] : m.likelihood_fitted) ar.write("meta/" + name, c10::IValue(value));
  ar.write("meta/checksum", c10::IValue(checkpoint_checksum(inf, m)));
  std::ostringstream os;
  ar.save_to(os);
  write_file_atomic(path, os.str());
}


namespace {

// A checkpoint's archive with reads that name the file in their errors.
struct Archive {
  std::string path;
  torch::serialize::InputArchive ar;

  explicit Archive(const std::string& p) : path(p) {
    WHVI_CHECK(!describe_path_kind(path).empty(), "checkpoint '", path,
               "' does not exist (checkpoints are written as output.dir/NAME/split-KK.ckpt)");
    std::istringstream bytes(read_user_file(path, "checkpoint", max_checkpoint_bytes()));
    try {
      ar.load_from(bytes);
    } catch (const std::exception&) {
      throw Error("'" + path + "' is not a readable whvi checkpoint (damaged, truncated or another kind " +
                  "of file). Re-create it by training that split again");
    }
  }

  // Reads `key` into out if the archive holds it; an entry that is there but
  // cannot be read is a damaged file, named with `what`.
  template <class T>
  bool try_get(const std::string& key, T& out, const std::string& what) {
    try {
      return ar.try_read(key, out);
    } catch (const std::exception&) {  // c10::Error, and std::out_of_range from its maps
      throw Error("'" + path + "' is damaged: cannot read " + what + ". Re-create it by training that "
                  "split again");
    }
  }

  c10::IValue read(const std::string& key) {
    c10::IValue v;
    const bool ok = try_get(key, v, key);
    WHVI_CHECK(ok, path, " is not a checkpoint of this whvi version (missing ", key,
               "); re-create it by training that split again");
    return v;
  }

  CheckpointMeta meta() {
    CheckpointMeta m;
    c10::IValue v;
    try {
      m.config_yaml = read("meta/config_yaml").toStringRef();
      m.split = read("meta/split").toInt();
      m.d_in = read("meta/d_in").toInt();
      m.y_mean = read("meta/y_mean").toDouble();
      m.y_std = read("meta/y_std").toDouble();
      m.data_fp = read("meta/data_fingerprint").toStringRef();
      if (ar.try_read("meta/num_classes", v)) m.num_classes = v.toInt();
      if (ar.try_read("meta/calibration", v)) m.calibration_json = v.toStringRef();
      if (ar.try_read("meta/inputs", v)) {
        m.inputs_json = v.toStringRef();
        WHVI_CHECK(ar.try_read("meta/x_mean", m.x_mean) && ar.try_read("meta/x_std", m.x_std), "'", path,
                   "' is damaged: its input standardisation is missing. Re-create it by training that split again");
        torch::Tensor fill;
        if (ar.try_read("meta/x_fill", fill)) m.x_fill = fill;
      }
    } catch (const Error&) {
      throw;
    } catch (const std::exception&) {
      throw Error("'" + path + "' is damaged: its metadata cannot be read. Re-create it by training that "
                  "split again");
    }
    WHVI_CHECK(m.split >= 0 && m.d_in >= 1, path, " is damaged (split ", m.split, ", d_in ", m.d_in, ")");
    WHVI_CHECK(m.num_classes >= 0 && m.num_classes < (int64_t{1} << 24), path, " is damaged (", m.num_classes,
               " classes)");
    return m;
  }

  config::Config config(const CheckpointMeta& m) const {
    try {
      return config::Config::parse(m.config_yaml, path + " (embedded config)");
    } catch (const Error& e) {
      throw Error("'" + path + "' is damaged: its embedded configuration does not parse (" + printable(e.what()) +
                  "). Re-create it by training that split again");
    }
  }

  // The likelihood's fitted scalars stored as meta/<name>, given back to every
  // likelihood that predicts (an ensemble's members) and kept in meta for the checksum.
  void restore_fitted(infer::Inference& inf, CheckpointMeta& m) {
    for (const auto& name : inf.likelihood().fitted_names()) {
      c10::IValue v;
      if (!try_get("meta/" + name, v, "its " + name)) continue;
      WHVI_CHECK(v.isDouble() && std::isfinite(v.toDouble()), "'", path, "' is damaged: its ", name,
                 " is not a number. Re-create it by training that split again");
      try {
        for (auto* lik : inf.predicting_likelihoods()) lik->set_fitted(name, v.toDouble());
      } catch (const Error& e) {
        throw Error("'" + path + "' is damaged: its " + name + " is not valid (" + printable(e.what()) +
                    "). Re-create it by training that split again");
      }
      m.likelihood_fitted.emplace_back(name, v.toDouble());
    }
  }

  // The stored values of every tensor of the method's state, checked for shape.
  void restore(infer::Inference& inf) {
    torch::NoGradGuard ng;
    for (auto& [key, value] : inf.state()) {
      torch::Tensor t;
      WHVI_CHECK(try_get("param/" + key, t, "parameter " + key), path, ": missing parameter ", key);
      // sized by the training set (infer/inference.h, state()): takes the stored shape
      if (value.numel() == 0 && t.dim() == value.dim() && t.scalar_type() == value.scalar_type())
        value.resize_(t.sizes());
      WHVI_CHECK_AS(ShapeError, t.sizes() == value.sizes() && t.scalar_type() == value.scalar_type(), path,
                    ": parameter ", key, " has shape ", t.sizes(), " (", t.scalar_type(), "), the model expects ",
                    value.sizes(), " (", value.scalar_type(), ")");
      value.copy_(t);
    }
  }
};

}  // namespace

LoadedCheckpoint load_checkpoint(const std::string& path) {
  Archive a(path);
  CheckpointMeta meta = a.meta();
  const std::string stored_sum = [&] {
    const auto v = a.read("meta/checksum");
    WHVI_CHECK(v.isString(), "'", path, "' is damaged: its checksum is not a string");
    return v.toStringRef();
  }();
  const auto cfg = a.config(meta);
  const auto split = static_cast<size_t>(meta.split);
  auto plan = resolve_checkpoint(cfg);
  const auto seed = static_cast<uint64_t>(plan.seed);
  auto inf = infer::make_inference(meta.d_in, plan.method, meta.y_mean, meta.y_std,
                                   make_generator(seed, split, Stream::kInit), meta.num_classes);
  inf->to(plan.dtype);
  a.restore(*inf);
  a.restore_fitted(*inf, meta);
  WHVI_CHECK(checkpoint_checksum(*inf, meta) == stored_sum, "'", path,
             "' is corrupted: its contents do not match the checksum stored when it was written. "
             "Re-create it by training that split again (whvi train --resume retrains a split whose checkpoint is damaged)");
  LoadedCheckpoint out{meta, cfg, std::move(plan), nullptr};
  out.inf = std::move(inf);
  return out;
}


calibration::Fitted stored_calibration(const CheckpointMeta& meta, const std::string& path) {
  if (meta.calibration_json.empty()) return {};
  try {
    return calibration::Fitted::from_json(nlohmann::json::parse(meta.calibration_json));
  } catch (const std::exception&) {
    throw Error("'" + path + "' is damaged: its calibration cannot be read. Re-create it by training that split again");
  }
}

}  // namespace whvi::experiment
