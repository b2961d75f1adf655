#include "config/config.h"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace whvi::config {
namespace fs = std::filesystem;

ConfigError::ConfigError(const std::string& f, int l, const std::string& k, const std::string& msg)
    : Error(f + (l > 0 ? ":" + std::to_string(l) : std::string()) +
            (k.empty() ? std::string() : ": key '" + k + "'") + ": " + msg),
      file(f),
      key(k),
      line(l) {}

const Param* find_param(const std::string& key) {
  for (const auto& p : schema())
    if (p.key == key) return &p;
  return nullptr;
}

namespace {

bool is_section(const std::string& prefix) {
  for (const auto& p : schema())
    if (p.key.rfind(prefix + ".", 0) == 0) return true;
  return false;
}

std::string keys_under(const std::string& prefix) {
  std::set<std::string> names;
  for (const auto& p : schema()) {
    if (!prefix.empty() && p.key.rfind(prefix + ".", 0) != 0) continue;
    std::string rest = prefix.empty() ? p.key : p.key.substr(prefix.size() + 1);
    names.insert(rest.substr(0, rest.find('.')));
  }
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string suggestion(const std::string& key) {
  std::string best;
  size_t best_d = 3;
  for (const auto& p : schema()) {
    const size_t d = edit_distance(key, p.key);
    if (d < best_d) best_d = d, best = p.key;
  }
  return best.empty() ? "" : " (did you mean '" + best + "'?)";
}

const char* type_name(Type t) {
  switch (t) {
    case Type::kInt: return "an integer";
    case Type::kFloat: return "a number";
    case Type::kString: return "a string";
    case Type::kBool: return "true or false";
  }
  return "?";
}

std::string describe_range(const Param& p) {
  std::ostringstream os;
  os << "[" << p.min << ", " << p.max << "]";
  return os.str();
}

// Parses and validates one scalar for `p`.
Value parse_value(const Param& p, const std::string& text, const std::string& file, int line) {
  auto fail = [&](const std::string& msg) { throw ConfigError(file, line, p.key, msg); };
  YAML::Node n;
  try {
    n = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    fail("cannot parse value '" + text + "': " + e.msg);
  }
  if (!n.IsScalar() && !(p.type == Type::kString && n.IsNull()))
    fail("expected " + std::string(type_name(p.type)) + ", got '" + text + "'");
  const std::string s = n.IsNull() ? "" : n.Scalar();
  auto range = [&](double v) {
    if (!(v >= p.min && v <= p.max)) {
      std::ostringstream os;
      os << "value " << s << " is out of range [" << p.min << ", " << p.max << "]";
      fail(os.str());
    }
  };
  switch (p.type) {
    case Type::kInt: {
      char* end = nullptr;
      errno = 0;
      const long long v = std::strtoll(s.c_str(), &end, 10);
      if (s.empty() || *end != '\0') fail("expected an integer, got '" + s + "'");
      if (errno == ERANGE) fail("'" + s + "' is out of range of a 64-bit integer (allowed: " + describe_range(p) + ")");
      range(static_cast<double>(v));
      return static_cast<int64_t>(v);
    }
    case Type::kFloat: {
      if (s == ".nan" || s == ".NaN" || s == ".NAN") fail("NaN is not allowed");
      for (const char* inf : {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"})
        if (s == inf) return range(INFINITY), INFINITY;
      for (const char* inf : {"-.inf", "-.Inf", "-.INF"})
        if (s == inf) return range(-INFINITY), -INFINITY;
      char* end = nullptr;
      errno = 0;
      const double v = std::strtod(s.c_str(), &end);
      if (s.empty() || *end != '\0') fail("expected a number, got '" + s + "'");
      if (std::isnan(v)) fail("NaN is not allowed");
      if (errno == ERANGE && std::isinf(v))
        fail("'" + s + "' overflows a double (largest about 1.8e308); write .inf if infinity is meant");
      if (errno == ERANGE) fail("'" + s + "' underflows a double (smallest normal about 2.2e-308); write 0 if zero is meant");
      if (std::isinf(v)) fail("'" + s + "' is infinite; write .inf where infinity is allowed");
      range(v);
      return v;
    }
    case Type::kBool: {
      if (s == "true" || s == "True" || s == "yes") return true;
      if (s == "false" || s == "False" || s == "no") return false;
      fail("expected true or false, got '" + s + "'");
      return false;  // not reached: fail throws
    }
    case Type::kString: {
      if (s.size() > 4096)
        fail("a value of " + std::to_string(s.size()) + " characters is too long (at most 4096)");
      if (!p.choices.empty()) {
        bool ok = false;
        std::string all;
        for (const auto& c : p.choices) ok |= c == s, all += (all.empty() ? "" : ", ") + c;
        if (!ok) fail("'" + s + "' is not one of: " + all);
      }
      return s;
    }
  }
  return int64_t{0};
}

struct Entry {
  std::string text, file;
  int line;
};

// Flattens a YAML map into dotted keys, validating every key against the schema.
void flatten(const YAML::Node& node, const std::string& prefix, const std::string& file,
             std::map<std::string, Entry>& out) {
  std::map<std::string, int> seen;  // names of this mapping -> line
  for (const auto& kv : node) {
    const int line = kv.first.Mark().line + 1;
    if (!kv.first.IsScalar())
      throw ConfigError(file, line, prefix, std::string("a key must be a plain name, not a ") +
                                                (kv.first.IsMap() ? "mapping" : kv.first.IsSequence() ? "list" : "null"));
    const std::string name = kv.first.Scalar();
    if (name.empty() || name.find_first_of(" \t\n") != std::string::npos)
      throw ConfigError(file, line, prefix, "'" + name + "' is not a key name (empty or with spaces)");
    if (const auto it = seen.find(name); it != seen.end())
      throw ConfigError(file, line, prefix.empty() ? name : prefix + "." + name,
                        "appears twice (also on line " + std::to_string(it->second) +
                            "); YAML keeps only one, so merge the two");
    seen[name] = line;
    const std::string key = prefix.empty() ? name : prefix + "." + name;
    if (prefix.empty() && name == "base") continue;  // handled by the loader
    const YAML::Node& v = kv.second;
    if (is_section(key)) {
      if (!v.IsMap())
        throw ConfigError(file, line, key, "is a section: expected a mapping of keys (" +
                                               keys_under(key) + ")");
      flatten(v, key, file, out);
      continue;
    }
    const Param* p = find_param(key);
    if (!p)
      throw ConfigError(file, line, key,
                        "unknown key" + suggestion(key) + "; known keys " +
                            (prefix.empty() ? "at top level" : "in '" + prefix + "'") + ": " +
                            keys_under(prefix) + (prefix.empty() ? ", base" : ""));
    if (!v.IsScalar() && !v.IsNull())
      throw ConfigError(file, line, key, "expected " + std::string(type_name(p->type)) +
                                             ", got a " + (v.IsMap() ? "mapping" : "list"));
    Entry e{v.IsNull() ? "" : v.Scalar(), file, line};
    if (v.IsScalar() && v.Tag() == "!") e.text = "'" + v.Scalar() + "'";  // quoted strings
    parse_value(*p, e.text.empty() ? "''" : e.text, file, line);     // validate here, even if overridden later
    out[key] = e;
  }
}

void load_file_entries(const std::string& text, const std::string& source,
                       const std::string& base_dir, std::map<std::string, Entry>& out,
                       std::vector<std::string>& chain) {
  {
    int line = 1;
    for (size_t i = 0, bol = 0; i <= text.size(); ++i) {
      if (i == text.size() || text[i] == '\n') {
        const std::string l = text.substr(bol, i - bol);
        const size_t first = l.find_first_not_of(" \t");
        if (l.find('\t') < first && first != std::string::npos && l[first] != '#')
          throw ConfigError(source, line, "", "a tab in the indentation: YAML allows only spaces there; replace the tab by spaces");
        bol = i + 1;
        ++line;
      }
    }
  }
  YAML::Node root;
  try {
    const auto docs = YAML::LoadAll(text);
    if (docs.size() > 1)
      throw ConfigError(source, docs[1].Mark().line + 1, "",
                        "holds " + std::to_string(docs.size()) + " YAML documents (separated by ---); a config is one document");
    if (!docs.empty()) root = docs[0];
  } catch (const YAML::ParserException& e) {
    throw ConfigError(source, e.mark.line + 1, "", "malformed YAML: " + e.msg);
  } catch (const YAML::Exception& e) {
    throw ConfigError(source, e.mark.line + 1, "", "unreadable YAML: " + e.msg);
  }
  if (root.IsNull()) return;
  if (!root.IsMap()) throw ConfigError(source, 1, "", "expected a mapping of sections at top level");
  if (const auto b = root["base"]) {
    const int line = b.Mark().line + 1;
    if (!b.IsScalar()) throw ConfigError(source, line, "base", "expected a file path");
    if (b.Scalar().empty()) throw ConfigError(source, line, "base", "is empty: give the path of a YAML file, or remove the key");
    const fs::path bp = fs::path(base_dir) / b.Scalar();
    std::error_code dir_ec;
    if (fs::is_directory(bp, dir_ec))
      throw ConfigError(source, line, "base", bp.string() + " is a directory, not a YAML file");
    const std::string canon = fs::weakly_canonical(bp).string();
    for (const auto& c : chain)
      if (c == canon) throw ConfigError(source, line, "base", "cycle: " + canon + " includes itself");
    std::ifstream in(bp);
    if (!in) throw ConfigError(source, line, "base", "cannot read base file " + bp.string());
    std::stringstream ss;
    ss << in.rdbuf();
    chain.push_back(canon);
    load_file_entries(ss.str(), bp.string(), bp.parent_path().string(), out, chain);
    chain.pop_back();
  }
  try {
    flatten(root, "", source, out);
  } catch (const YAML::Exception& e) {
    throw ConfigError(source, e.mark.line + 1, "", "unreadable YAML: " + e.msg);
  }
}

// output.name becomes a file name inside output.dir: one plain component.
void check_output_name(const std::string& name, const std::string& source) {
  if (name.empty()) return;
  bool ok = name.size() <= 200 && name[0] != '.' && name[0] != '-';
  for (unsigned char c : name) ok &= std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '+';
  if (!ok)
    throw ConfigError(source, 0, "output.name",
                      "'" + name + "' is not a plain file name: use letters, digits and - _ . + (not starting with "
                      "'.' or '-', no '/'); the results go to output.dir/<name>.json and output.dir/<name>/");
}

}  // namespace

Config Config::defaults() {
  Config c;
  for (const auto& p : schema()) c.values_[p.key] = parse_value(p, p.def.empty() ? "''" : p.def, "schema", 0);
  c.source_ = "defaults";
  return c;
}

void Config::set(const std::string& key, const std::string& text, const std::string& source,
                 int line) {
  const Param* p = find_param(key);
  if (!p && is_section(key))
    throw ConfigError(source, line, key, "is a section, not a key: set one of its keys (" + keys_under(key) + "), e.g. " +
                                             key + "." + keys_under(key).substr(0, keys_under(key).find(',')) + "=...");
  if (!p) {
    const auto dot = key.rfind('.');
    const std::string prefix = dot == std::string::npos ? "" : key.substr(0, dot);
    throw ConfigError(source, line, key,
                      "unknown key" + suggestion(key) +
                          (is_section(prefix) ? "; known keys in '" + prefix + "': " + keys_under(prefix)
                                              : "; sections: " + keys_under("")));
  }
  values_[key] = parse_value(*p, text.empty() ? "''" : text, source, line);
}

Config Config::parse(const std::string& text, const std::string& source,
                     const std::vector<std::string>& overrides, const std::string& base_dir) {
  Config c = defaults();
  c.source_ = source;
  std::map<std::string, Entry> entries;
  std::vector<std::string> chain;
  load_file_entries(text, source, base_dir, entries, chain);
  for (const auto& [key, e] : entries) c.set(key, e.text, e.file, e.line);
  for (const auto& o : overrides) {
    const auto eq = o.find('=');
    if (eq == std::string::npos || eq == 0)
      throw ConfigError("--set", 0, "", "'" + o + "' is not of the form section.key=value");
    c.set(o.substr(0, eq), o.substr(eq + 1), "--set " + o);
  }
  check_output_name(c.get_string("output.name"), source);
  return c;
}

Config Config::load(const std::string& path, const std::vector<std::string>& overrides) {
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw ConfigError(path, 0, "", "is a directory, not a YAML file (e.g. --config configs/uci/yacht-whvi.yaml)");
  std::ifstream in(path);
  if (!in) throw ConfigError(path, 0, "", "cannot read the config file (does it exist?)");
  std::stringstream ss;
  ss << in.rdbuf();
  Config c = parse(ss.str(), path, overrides, fs::path(path).parent_path().string());
  if (c.get_string("output.name").empty()) {
    c.values_["output.name"] = fs::path(path).stem().string();
    check_output_name(c.get_string("output.name"), path + " (output.name defaults to the file's name)");
  }
  return c;
}

namespace {
template <class T>
const T& get_as(const std::map<std::string, Value>& values, const std::string& key) {
  const auto it = values.find(key);
  WHVI_ASSERT(it != values.end());
  WHVI_ASSERT(std::holds_alternative<T>(it->second));
  return std::get<T>(it->second);
}
}  // namespace

int64_t Config::get_int(const std::string& key) const { return get_as<int64_t>(values_, key); }
double Config::get_float(const std::string& key) const { return get_as<double>(values_, key); }
const std::string& Config::get_string(const std::string& key) const {
  return get_as<std::string>(values_, key);
}
bool Config::get_bool(const std::string& key) const { return get_as<bool>(values_, key); }

nlohmann::json Config::to_json() const {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& p : schema()) {
    nlohmann::json::json_pointer ptr("/" + [&] {
      std::string s = p.key;
      for (auto& ch : s)
        if (ch == '.') ch = '/';
      return s;
    }());
    std::visit([&](const auto& v) { j[ptr] = v; }, values_.at(p.key));
  }
  return j;
}

std::string Config::dump_yaml() const {
  YAML::Emitter out;
  out.SetDoublePrecision(17);
  // Walk the schema (not the sorted json) so the dump keeps the documented order.
  out << YAML::BeginMap;
  std::vector<std::string> stack;
  for (const auto& p : schema()) {
    std::vector<std::string> parts;
    std::stringstream ss(p.key);
    for (std::string part; std::getline(ss, part, '.');) parts.push_back(part);
    const std::vector<std::string> sections(parts.begin(), parts.end() - 1);
    size_t common = 0;
    while (common < stack.size() && common < sections.size() && stack[common] == sections[common]) ++common;
    while (stack.size() > common) out << YAML::EndMap, stack.pop_back();
    for (size_t i = common; i < sections.size(); ++i)
      out << YAML::Key << sections[i] << YAML::Value << YAML::BeginMap, stack.push_back(sections[i]);
    out << YAML::Key << parts.back() << YAML::Value;
    std::visit(
        [&](const auto& v) {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<V, std::string>) out << YAML::DoubleQuoted << v;
          else out << v;
        },
        values_.at(p.key));
  }
  while (!stack.empty()) out << YAML::EndMap, stack.pop_back();
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

std::string Config::describe_markdown() {
  std::ostringstream os;
  os << "| key | type | default | allowed | meaning |\n|---|---|---|---|---|\n";
  for (const auto& p : schema()) {
    std::string allowed;
    if (!p.choices.empty()) {
      for (const auto& c : p.choices) allowed += (allowed.empty() ? "" : " \\| ") + c;
    } else if (p.type == Type::kInt || p.type == Type::kFloat) {
      std::ostringstream r;
      r << "[" << p.min << ", " << p.max << "]";
      allowed = r.str();
    }
    const char* t = p.type == Type::kInt ? "int" : p.type == Type::kFloat ? "float"
                    : p.type == Type::kBool ? "bool" : "string";
    os << "| `" << p.key << "` | " << t << " | `" << (p.def.empty() ? "\"\"" : p.def) << "` | "
       << allowed << " | " << p.help << " |\n";
  }
  return os.str();
}

}  // namespace whvi::config
