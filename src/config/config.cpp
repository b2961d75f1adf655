#include "config/config.h"

#include "common/io.h"
#include "common/paths.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <yaml-cpp/depthguard.h>

namespace whvi::config {
namespace fs = std::filesystem;

namespace {
// A file name, key or --set text in a message: cut to about 200 characters.
std::string clip(const std::string& s) { return s.size() > 200 ? s.substr(0, 200) + "..." : s; }

// A key read from a file is quoted only when it looks like a key (letters,
// digits, '_', '-', '.'): anything else may be a line of a file that is not a
// config (a password file named by base:), and errors never quote files.
std::string shown_key(const std::string& k) {
  const bool key_like = k.size() <= 100 && std::all_of(k.begin(), k.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
  return key_like ? "'" + k + "'" : "(not shown: not a key name; is this a config file?)";
}
}  // namespace

ConfigError::ConfigError(const std::string& f, int l, const std::string& k, const std::string& msg)
    : Error(clip(f) + (l > 0 ? ":" + std::to_string(l) : std::string()) +
            (k.empty() ? std::string() : ": key " + shown_key(k)) + ": " + msg),
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
    case Type::kBool: return "true or false (also yes/no, on/off, in any case)";
  }
  return "?";
}

// A string shown in a message: at most 60 characters, control bytes escaped.
std::string shown(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (out.size() >= 60) return out + "...";
    if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

// output.name is one plain file-name component (it names O/E.json and O/E/).
void check_output_name(const std::string& s, const std::function<void(const std::string&)>& fail) {
  const char* fix =
      "; output.name must be a plain file name: letters, digits, '-', '_', '.' and '+', not "
      "starting with '.' (e.g. yacht-whvi). Choose where results go with output.dir";
  if (s.empty()) fail(std::string("is empty") + fix);
  if (s == "." || s == "..")
    fail("'" + s + "' is not a file name (it would write outside its folder)" + fix);
  if (s.find('/') != std::string::npos || s.find('\\') != std::string::npos)
    fail("'" + shown(s) + "' is a path, not a file name (it contains a path separator)" + fix);
  if (s[0] == '.') fail("'" + shown(s) + "' starts with '.'" + fix);
  if (s.size() > 200) fail("is " + std::to_string(s.size()) + " characters long, more than 200" + fix);
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '+') continue;
    if (c >= 0x80) fail("'" + shown(s) + "' contains a character that is not ASCII (a letter with an accent, a symbol)" + fix);
    char buf[8];
    std::snprintf(buf, sizeof buf, c < 0x20 || c >= 0x7f ? "\\x%02x" : "%c", c);
    fail("'" + shown(s) + "' contains the character '" + buf + "'" + fix);
  }
}

using Fail = std::function<void(const std::string&)>;

// Keys whose value is a list of column names: a YAML list ([a, b]) in a file or
// in --set, or the same names comma-separated.
bool is_name_list_key(const std::string& key) {
  return key == "data.features" || key == "data.categorical" || key == "model.auto.candidates";
}

// The names of a YAML list for a name-list key, comma-joined.
std::string join_name_list(const YAML::Node& v, const Fail& fail) {
  if (v.size() == 0) fail("an empty list; leave the key out for its default, or name at least one item");
  std::string joined;
  for (const auto& n : v) {
    if (!n.IsScalar())
      fail("expected a list of column names ([a, b] or a,b), but an item is a " +
           std::string(n.IsMap() ? "mapping" : n.IsSequence() ? "list" : "null") + ": list plain names");
    if (n.Scalar().find(',') != std::string::npos)
      fail("a column name with a comma cannot be listed; rename that column");
    joined += (joined.empty() ? "" : ",") + n.Scalar();
  }
  return joined;
}

// A boolean's spelling (true/false, yes/no, on/off in any case): 1 true, 0 false, -1 neither.
int bool_spelling(const std::string& s) {
  std::string l;
  for (unsigned char c : s) l += static_cast<char>(std::tolower(c));
  if (l == "true" || l == "yes" || l == "on") return 1;
  if (l == "false" || l == "no" || l == "off") return 0;
  return -1;
}

// A bound of `p` as the docs and messages print it: an integer key's in full
// (1048576, not 1.04858e+06), a float's in the fewest digits that read back
// as the same double.
std::string bound_text(const Param& p, double v) {
  if (p.type == Type::kInt && std::isfinite(v)) {
    if (v >= 9223372036854775807.0) return "9223372036854775807";
    if (v <= -9223372036854775808.0) return "-9223372036854775808";
    return std::to_string(static_cast<long long>(v));
  }
  std::ostringstream os;
  for (int prec = 6; prec <= 17; ++prec) {
    os.str("");
    os.precision(prec);
    os << v;
    if (!std::isfinite(v) || std::strtod(os.str().c_str(), nullptr) == v) break;
  }
  return os.str();
}

// `v` within p's bounds, else a failure naming them.
void check_range(const Param& p, const std::string& s, double v, const Fail& fail) {
  // no key takes an infinite value: an infinite prior variance or weight only
  // ends a run later as a divergence
  if (std::isinf(v))
    fail("value " + shown(s) + " is infinite; every number in a config is finite (this key: at least " +
         bound_text(p, p.min) + (std::isfinite(p.max) ? ", at most " + bound_text(p, p.max) : std::string()) +
         "), e.g. 1e6 for a very large value");
  if (v >= p.min && v <= p.max) return;
  fail("value " + shown(s) + " is out of range [" + bound_text(p, p.min) + ", " + bound_text(p, p.max) + "]");
}

int64_t parse_int(const Param& p, const std::string& s, const Fail& fail) {
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || end == s.c_str()) fail("expected an integer, got '" + shown(s) + "'");
  if (errno == ERANGE) {
    fail("value " + shown(s) + " is out of range for a 64-bit integer; the allowed range is [" + bound_text(p, p.min) +
         ", " + bound_text(p, p.max) + "]");
  }
  check_range(p, s, static_cast<double>(v), fail);
  return static_cast<int64_t>(v);
}

double parse_float(const Param& p, const std::string& s, const Fail& fail) {
  // YAML 1.2 core schema spellings of infinity and NaN.
  static const std::set<std::string> pos_inf = {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"};
  static const std::set<std::string> neg_inf = {"-.inf", "-.Inf", "-.INF"};
  if (s == ".nan" || s == ".NaN" || s == ".NAN") fail("NaN is not allowed");
  if (pos_inf.count(s) || neg_inf.count(s)) {
    const double v = pos_inf.count(s) ? INFINITY : -INFINITY;
    check_range(p, s, v, fail);
    return v;
  }
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || end == s.c_str()) fail("expected a number, got '" + shown(s) + "'");
  if (std::isnan(v)) fail("NaN is not allowed");
  if (errno == ERANGE && std::isinf(v))
    fail("number " + shown(s) +
         " overflows: it is out of range of a double (magnitude at most 1.8e308); write .inf "
         "for infinity where the key allows it");
  if (errno == ERANGE && std::fabs(v) < DBL_MIN)
    fail("number " + shown(s) +
         " underflows: it is out of range of a double (nonzero magnitudes from 2.2e-308); "
         "write 0 if you mean zero");
  check_range(p, s, v, fail);
  return v;
}

std::string parse_string(const Param& p, const std::string& s, const Fail& fail) {
  if (s.size() > kMaxStringChars)
    fail("the string is " + std::to_string(s.size()) + " characters long; string values are "
         "limited to " + std::to_string(kMaxStringChars) + " characters");
  if (!p.choices.empty()) {
    bool ok = false;
    std::string all;
    for (const auto& c : p.choices) ok |= c == s, all += (all.empty() ? "" : ", ") + c;
    if (!ok) fail("'" + shown(s) + "' is not one of: " + all);
  }
  if (p.key == "output.name" && !s.empty()) check_output_name(s, fail);
  return s;
}

// Parses and validates one scalar for `p`.
Value parse_value(const Param& p, const std::string& text, const std::string& file, int line) {
  const Fail fail = [&](const std::string& msg) { throw ConfigError(file, line, p.key, msg); };
  if (text.size() > 4 * kMaxStringChars + 16)  // room for the quotes and escapes flatten() adds
    fail("the value is " + std::to_string(text.size()) + " characters long; values are limited to " +
         std::to_string(kMaxStringChars) + " characters");
  YAML::Node n;
  try {
    n = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    const bool reserved = !text.empty() && (text[0] == '`' || text[0] == '@');
    fail("cannot parse value '" + shown(text) + "' as YAML (" + e.msg + "): " +
         (reserved ? std::string("YAML reserves ` and @ at the start of a plain value; ") : std::string()) +
         "put a text value in quotes, e.g. --set 'key=\"...\"' or key: '...' in a file");
  }
  // a list of column names ([a, b]) is the comma-separated string
  if (p.type == Type::kString && is_name_list_key(p.key) && n.IsSequence())
    return parse_string(p, join_name_list(n, fail), fail);
  if (!n.IsScalar() && !(p.type == Type::kString && n.IsNull()))
    fail("expected " + std::string(type_name(p.type)) + ", got '" + shown(text) + "'");
  const std::string s = n.IsNull() ? "" : n.Scalar();
  switch (p.type) {
    case Type::kInt: return parse_int(p, s, fail);
    case Type::kFloat: return parse_float(p, s, fail);
    case Type::kString: return parse_string(p, s, fail);
    case Type::kBool:
      if (const int b = bool_spelling(s); b >= 0) return b == 1;
      fail("expected true or false, got '" + shown(s) + "' (accepted, in any case: true/false, yes/no, on/off)");
  }
  return int64_t{0};  // not reached: fail throws
}

struct Entry {
  std::string text, file;
  int line;
};

// 1-based line of a node, or `fallback` when yaml-cpp has no mark for it.
int line_of(const YAML::Node& n, int fallback) {
  const int l = n.Mark().line;
  return l >= 0 ? l + 1 : fallback;
}

// Flattens a YAML map into dotted keys, validating every key against the schema.
// `seen` maps every key and section of this file (dotted) to its line, to
// refuse duplicates.
void flatten(const YAML::Node& node, const std::string& prefix, const std::string& file,
             std::map<std::string, Entry>& out, std::map<std::string, int>& seen, int parent_line) {
  for (const auto& kv : node) {
    const int line = line_of(kv.first, line_of(kv.second, parent_line));
    const std::string where = prefix.empty() ? "at top level" : "in '" + prefix + "'";
    if (!kv.first.IsScalar()) {
      throw ConfigError(file, line, prefix,
                        std::string(kv.first.IsNull() ? "an empty key" : "a complex key (a list or mapping used as a key)") +
                            " " + where + ": keys must be plain names; known keys " + where + ": " +
                            keys_under(prefix) + (prefix.empty() ? ", base" : ""));
    }
    const std::string name = kv.first.Scalar();
    if (name.empty())
      throw ConfigError(file, line, prefix, "an empty key " + where + ": keys must be plain names; known keys " +
                                                where + ": " + keys_under(prefix) + (prefix.empty() ? ", base" : ""));
    const std::string key = prefix.empty() ? name : prefix + "." + name;
    const bool section = is_section(key);
    if (const auto it = seen.find(key); it != seen.end())
      throw ConfigError(file, line, key,
                        std::string("duplicate ") + (section ? "section" : "key") + ": already on line " +
                            std::to_string(it->second) + " and again on line " + std::to_string(line) +
                            " (YAML keys must be unique; the second would silently replace the first). "
                            "Keep one of them" + (section ? " and merge the keys of both into it" : ""));
    seen[key] = line;
    if (prefix.empty() && name == "base") continue;  // handled by the loader
    const YAML::Node& v = kv.second;
    if (section) {
      if (!v.IsMap())
        throw ConfigError(file, line, key, "is a section: expected a mapping of keys (" +
                                               keys_under(key) + ")");
      flatten(v, key, file, out, seen, line);
      continue;
    }
    const Param* p = find_param(key);
    if (!p)
      throw ConfigError(file, line, key,
                        "unknown key" + suggestion(key) + "; known keys " + where + ": " +
                            keys_under(prefix) + (prefix.empty() ? ", base" : ""));
    // a list of names (data.features: [a, b], data.categorical) is the comma-separated string
    const bool name_list = p->type == Type::kString && v.IsSequence() && is_name_list_key(key);
    if (!v.IsScalar() && !v.IsNull() && !name_list)
      throw ConfigError(file, line, key, "expected " + std::string(type_name(p->type)) +
                                             ", got a " + (v.IsMap() ? "mapping" : "list"));
    const std::string joined =
        name_list ? join_name_list(v, [&](const std::string& msg) { throw ConfigError(file, line, key, msg); })
                  : std::string();
    Entry e{name_list ? joined : v.IsNull() ? "" : v.Scalar(), file, line};
    if (name_list || (v.IsScalar() && v.Tag() == "!")) {  // quoted or block strings: keep them strings
      const std::string text = name_list ? joined : v.Scalar();
      YAML::Emitter q;
      q << YAML::DoubleQuoted << text;
      e.text = q.c_str();
    }
    parse_value(*p, e.text.empty() ? "''" : e.text, file, line);     // validate here, even if overridden later
    out[key] = e;
  }
}

// The first line (1-based) whose indentation holds a tab, or 0.
int first_tab_indented_line(const std::string& text) {
  int line = 1;
  bool at_indent = true;
  for (char c : text) {
    if (c == '\n') {
      ++line;
      at_indent = true;
    } else if (at_indent && c == '\t') {
      return line;
    } else if (c != ' ') {
      at_indent = false;
    }
  }
  return 0;
}

// Lines (1-based) that start a YAML document ("---" alone or followed by a space).
std::vector<int> document_marker_lines(const std::string& text) {
  std::vector<int> out;
  std::istringstream in(text);
  int line = 0;
  for (std::string l; std::getline(in, l);) {
    ++line;
    if (l.rfind("---", 0) == 0 && (l.size() == 3 || l[3] == ' ' || l[3] == '\t' || l[3] == '\r'))
      out.push_back(line);
  }
  return out;
}

}  // namespace

std::string read_config_text(const std::string& path, const std::string& referrer, int line,
                             const std::string& key) {
  auto fail = [&](const std::string& msg) {
    if (referrer.empty()) throw ConfigError(path, 0, "", msg);
    throw ConfigError(referrer, line, key, msg);
  };
  const std::string what = referrer.empty() ? "the config file" : "base file '" + path + "'";
  if (path.empty()) fail("the path of " + what + " is empty: give the path of a YAML file");
  std::error_code ec;
  const bool from_stdin = referrer.empty() && path == "-";
  if (!from_stdin && fs::is_directory(path, ec))
    fail("'" + path + "' is a directory, not a YAML file: give the path of a .yaml file" +
         (referrer.empty() ? std::string(" (e.g. --config configs/uci/yacht-whvi.yaml)") : ""));
  if (!from_stdin && describe_path_kind(path).empty())
    fail("cannot read " + what + (referrer.empty() ? "" : " " + path) +
         ": no such file (check the path; relative paths are relative to " +
         (referrer.empty() ? std::string("the current directory") : "the file that names it") + ")");
  std::string text;
  try {
    // --config may be a pipe (--config -, --config <(...)); a base file may not
    text = read_user_file(path, what, kMaxConfigBytes, referrer.empty());
  } catch (const Error& e) {
    fail(e.what());
  }
  if (text.find('\0') != std::string::npos)
    fail(what + " contains NUL bytes: it is not a text YAML file");
  return text;
}

namespace {

// yaml-cpp's wording for the mistakes people make most, said in plain words
// beside it (its own text kept, so nothing is lost).
std::string yaml_in_words(const std::string& msg) {
  static const std::pair<const char*, const char*> kWords[] = {
      {"illegal map value", "a ':' where none can be: a line indented deeper than the key above it, two keys "
                            "on one line, or a value holding ': ' that needs quotes"},
      {"end of map flow not found", "a '{' without its '}'"},
      {"end of sequence flow not found", "a '[' without its ']'"},
      {"end of map not found", "a line whose indentation does not line up with the keys above it"},
      {"end of sequence not found", "list items ('- ') whose indentation does not line up"},
      {"illegal block entry", "a '- ' list item on the line of its key; put the items on the lines below "
                              "it, or write [a, b]"},
      {"block sequence entries are not allowed", "a '- ' list item on the line of its key; put the items on "
                                                 "the lines below it, or write [a, b]"},
      {"illegal EOF in scalar", "a quoted value without its closing quote"},
      {"unknown escape character", "a backslash inside double quotes that YAML does not know; use single "
                                   "quotes for text with backslashes"},
      {"unknown token", "a character YAML cannot start a value with; put the value in quotes"},
  };
  for (const auto& [words, plain] : kWords)
    if (msg.find(words) != std::string::npos) return std::string(plain) + " (yaml-cpp: " + msg + ")";
  return msg;
}

void load_file_entries(const std::string& text, const std::string& source,
                       const std::string& base_dir, std::map<std::string, Entry>& out,
                       std::vector<std::string>& chain) {
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(text);
  } catch (const YAML::DeepRecursion& e) {
    const int lines = static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
    throw ConfigError(source, std::min(e.mark.line + 1, lines), "",
                      "malformed YAML: nesting too deep; a config has sections holding keys, "
                      "two levels (three for model.whvi.*, model.mfg.*, model.mcd.*)");
  } catch (const YAML::ParserException& e) {
    const int error_line = e.mark.line + 1;
    if (const int tab = first_tab_indented_line(text); tab > 0 && tab <= error_line)
      throw ConfigError(source, tab, "",
                        "malformed YAML: a tab is used for indentation; YAML does not allow tabs "
                        "for indentation: indent with spaces");
    throw ConfigError(source, error_line, "", "malformed YAML: " + yaml_in_words(e.msg));
  } catch (const YAML::Exception& e) {
    throw ConfigError(source, e.mark.line + 1, "", "malformed YAML: " + yaml_in_words(e.msg));
  }
  if (docs.size() > 1) {
    const auto markers = document_marker_lines(text);
    const int doc_line = line_of(docs[1], 0);
    int line = doc_line > 0 ? doc_line : 1;
    for (int m : markers)  // the '---' that opens the second document
      if (doc_line == 0 || m <= doc_line) line = m;
    throw ConfigError(source, line, "",
                      "a second YAML document ('---') starts here; a config file holds one document "
                      "(it would be ignored): remove the '---' line and merge the two, or put the "
                      "second in its own file");
  }
  if (docs.empty() || docs[0].IsNull()) return;
  const YAML::Node& root = docs[0];
  if (!root.IsMap()) throw ConfigError(source, 1, "", "expected a mapping of sections at top level");
  std::map<std::string, int> seen;
  try {
    if (const auto b = root["base"]) {
      const int line = line_of(b, 1);
      if (!b.IsScalar()) throw ConfigError(source, line, "base", "expected a file path");
      if (b.Scalar().empty())
        throw ConfigError(source, line, "base",
                          "is empty: give the path of a YAML file (relative to this file) or remove "
                          "the 'base' line");
      const fs::path bp = fs::path(base_dir) / b.Scalar();
      std::error_code ec;
      const fs::path canon_path = fs::weakly_canonical(bp, ec);
      if (ec)
        throw ConfigError(source, line, "base",
                          "cannot read base file " + bp.string() + ": " + ec.message());
      const std::string canon = canon_path.string();
      for (const auto& c : chain)
        if (c == canon) throw ConfigError(source, line, "base", "cycle: " + canon + " includes itself");
      // Each base is a stack frame: a long chain would overflow the stack.
      constexpr size_t kMaxBaseDepth = 32;
      if (chain.size() >= kMaxBaseDepth)
        throw ConfigError(source, line, "base",
                          "more than " + std::to_string(kMaxBaseDepth) +
                              " base files in a chain; a config needs a few: merge the chain into fewer files");
      const std::string base_text = read_config_text(bp.string(), source, line, "base");
      chain.push_back(canon);
      load_file_entries(base_text, bp.string(), bp.parent_path().string(), out, chain);
      chain.pop_back();
    }
    flatten(root, "", source, out, seen, 1);
  } catch (const YAML::Exception& e) {  // anything yaml-cpp refuses that the checks above missed
    throw ConfigError(source, e.mark.line + 1, "", "cannot read this YAML: " + e.msg);
  }
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
    throw ConfigError(source, line, key,
                      "'" + key + "' is a section, not a key: set one of its keys, e.g. " + key +
                          ".<key>=value; keys in '" + key + "': " + keys_under(key));
  if (!p) {
    const auto dot = key.rfind('.');
    const std::string prefix = dot == std::string::npos ? "" : key.substr(0, dot);
    throw ConfigError(source, line, key,
                      "unknown key" + suggestion(key) +
                          (is_section(prefix) ? "; known keys in '" + prefix + "': " + keys_under(prefix)
                                              : "; sections: " + keys_under("")));
  }
  values_[key] = parse_value(*p, text.empty() ? "''" : text, source, line);
  set_keys_.insert(key);
}

bool Config::set_default(const std::string& key, const std::string& text, const std::string& source) {
  if (is_set(key)) return false;
  set(key, text, source);
  set_keys_.erase(key);
  return true;
}

Config Config::parse(const std::string& text, const std::string& source,
                     const std::vector<std::string>& overrides, const std::string& base_dir) {
  Config c = defaults();
  c.source_ = source;
  std::map<std::string, Entry> entries;
  std::vector<std::string> chain;
  load_file_entries(text, source, base_dir, entries, chain);
  for (const auto& [key, e] : entries) {
    c.set(key, e.text, e.file, e.line);
    c.files_.insert(e.file);
  }
  for (const auto& o : overrides) {
    const auto eq = o.find('=');
    if (eq == std::string::npos || eq == 0)
      throw ConfigError("--set", 0, "", "'" + clip(o) + "' is not of the form section.key=value");
    const std::string key = o.substr(0, eq);
    if (!key.empty() && (std::isspace(static_cast<unsigned char>(key.back())) ||
                         std::isspace(static_cast<unsigned char>(key.front()))))
      throw ConfigError("--set", 0, "", "'" + clip(o) + "': write section.key=value with no spaces around '=' "
                        "(e.g. --set model.kind=blr)");
    // YAML would fold a raw line break in a plain value into a space: a path with one would silently change
    if (o.find_first_of("\n\r", eq) != std::string::npos)
      throw ConfigError("--set", 0, o.substr(0, eq),
                        "its value holds a line break; a --set value is one line (write a line break in a "
                        "quoted YAML string, e.g. --set '" + clip(o.substr(0, eq)) + "=\"a\\nb\"')");
    c.set(o.substr(0, eq), o.substr(eq + 1), "--set " + o);
  }
  return c;
}

Config Config::load(const std::string& path, const std::vector<std::string>& overrides) {
  if (is_data_file_name(path))
    throw ConfigError(path, 0, "", std::string("is a data file, not a config: name it in a config, with the line "
                        "`data: {dataset: ") + clip(fs::path(path).filename().string()) + ", target: COLUMN}`, "
                        "and give that config to --config");
  const std::string text = read_config_text(path);
  Config c = parse(text, path, overrides, fs::path(path).parent_path().string());
  c.files_.insert(path);
  if (std::get<std::string>(c.values_.at("output.name")).empty()) {
    const std::string stem = fs::path(path).stem().string();
    check_output_name(stem, [&](const std::string& msg) {
      throw ConfigError(path, 0, "output.name",
                        "is not set, and the default (the config file's name '" + shown(stem) +
                            "') is not usable: " + msg + ". Set output.name in the file or with --set");
    });
    c.values_["output.name"] = stem;
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

std::string Config::describe_markdown(const std::string& appendix) {
  std::ostringstream os;
  os << "# Configuration keys\n\nEvery key a config file (or `--set section.key=value`) may set, with its type, "
        "default, allowed values and meaning. Generated by `whvi config --describe` from the declarations in "
        "the components' option structs (gathered by `src/experiment/schema.cpp`); the test `docs_configuration_current` fails when docs/configuration.md differs "
        "from it (regenerate: `build/whvi config --describe > docs/configuration.md`). A bool is true or false "
        "(also yes/no, on/off, in any case); a list of column names (`data.features`, `data.categorical`) is a "
        "YAML list, `[a, b]`, or comma-separated, `a,b`, in a file and in `--set` alike.\n\n";
  os << "| key | type | default | allowed | meaning |\n|---|---|---|---|---|\n";
  for (const auto& p : schema()) {
    std::string allowed;
    if (!p.choices.empty()) {
      for (const auto& c : p.choices) allowed += (allowed.empty() ? "" : " \\| ") + c;
    } else if (p.type == Type::kInt || p.type == Type::kFloat) {
      allowed = "[" + bound_text(p, p.min) + ", " + bound_text(p, p.max) + "]";
    }
    const char* t = p.type == Type::kInt ? "int" : p.type == Type::kFloat ? "float"
                    : p.type == Type::kBool ? "bool" : "string";
    os << "| `" << p.key << "` | " << t << " | `" << (p.def.empty() ? "\"\"" : p.def) << "` | "
       << allowed << " | " << p.help << " |\n";
  }
  return os.str() + appendix;
}

}  // namespace whvi::config
