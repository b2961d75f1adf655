// Experiment configuration: YAML files validated against one schema.
//
// Every parameter is declared once, beside its component (common/options.h), with its type, default,
// bounds and help. Files are nested YAML maps whose leaves are schema keys
// ("model.width" is `model: {width: ...}`); an unknown key, a wrong type or
// an out-of-range value is a ConfigError naming the file, the line and the
// key. A file may start with `base: other.yaml` (relative to the file) to
// inherit from another file; keys in the file override the base's. Command
// line overrides (`--set model.width=256`) are applied last.
//
// Also refused at load, each with file:line and the fix: tabs in the
// indentation, duplicate keys or sections, a second YAML document, complex
// or empty keys, numbers that overflow or underflow a double or a 64-bit
// integer, strings over kMaxStringChars, a directory (or an empty `base:`)
// where a file is expected, and an output.name that is not a plain file
// name (letters, digits, '-', '_', '.', '+'; not starting with '.').
// `.inf` / `-.inf` are accepted where a key's bounds allow infinity.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "common/options.h"

namespace whvi::config {

using Type = options::Type;
using Param = options::Spec;

// The schema: every key, in the order they are documented and dumped. Each
// component declares its own keys beside its code (common/options.h); the
// schema gathers them (experiment/schema.cpp).
const std::vector<Param>& schema();
const Param* find_param(const std::string& key);

struct ConfigError : Error {
  ConfigError(const std::string& file, int line, const std::string& key, const std::string& msg);
  std::string file, key;
  int line;
};

using Value = std::variant<int64_t, double, std::string, bool>;

// Limits on what a config may hold, checked at load.
inline constexpr size_t kMaxStringChars = 4096;        // one string value
inline constexpr size_t kMaxConfigBytes = 1024 * 1024;  // one YAML file

// The text of a config file. Refuses, with a ConfigError naming the file (or,
// for a base file, the `referrer` file, line and key that named it): a missing
// or unreadable path, a directory, a file over kMaxConfigBytes, NUL bytes.
std::string read_config_text(const std::string& path, const std::string& referrer = "", int line = 0,
                             const std::string& key = "");

class Config : public options::Source {
 public:
  // Loads `path` (following `base:` chains), then applies `overrides`
  // ("section.key=value" each).
  static Config load(const std::string& path, const std::vector<std::string>& overrides = {});
  // Same from text; `source` names it in errors. `base:` is resolved
  // relative to `base_dir`.
  static Config parse(const std::string& yaml_text, const std::string& source,
                      const std::vector<std::string>& overrides = {},
                      const std::string& base_dir = ".");
  // All defaults (no file).
  static Config defaults();

  int64_t get_int(const std::string& key) const override;
  double get_float(const std::string& key) const override;
  const std::string& get_string(const std::string& key) const override;
  bool get_bool(const std::string& key) const override;
  // Sets a value after validation (source names the origin in errors); the key
  // counts as set by the user.
  void set(const std::string& key, const std::string& yaml_scalar, const std::string& source,
           int line = 0);
  // Whether a config file (or a base) or an override set `key`.
  bool is_set(const std::string& key) const { return set_keys_.count(key) > 0; }
  // Sets `key` to a default other than the schema's (a model kind's) unless
  // is_set(key); validated as set() does. Returns whether it applied.
  bool set_default(const std::string& key, const std::string& yaml_scalar, const std::string& source);

  std::string dump_yaml() const;      // every key, nested, schema order
  nlohmann::json to_json() const;     // nested, typed
  const std::string& source() const override { return source_; }
  // The files the config was read from: the config file and every base: file
  // that set a key (a run must never write over one of them).
  const std::set<std::string>& files() const { return files_; }
  const std::vector<Param>& declared() const override { return schema(); }

  // The schema as a Markdown table (docs/configuration.md, `whvi config --describe`),
  // then `appendix` (the defaults that depend on the model kind).
  static std::string describe_markdown(const std::string& appendix = "");

 private:
  std::map<std::string, Value> values_;
  std::set<std::string> set_keys_;
  std::string source_;
  std::set<std::string> files_;
};

}  // namespace whvi::config
