// Options declared once, beside the component that uses them.
//
// A component's options are one struct whose member initialisers are the
// defaults and whose visit() names each field's key, bounds or allowed values
// and one line of help:
//
//   struct MfgOptions {
//     double prior_var = 0;
//     template <class V> void visit(V& v) {
//       v.num("model.mfg.prior_var", prior_var, 0, kInf, "prior variance of the weights; 0 = 1/fan_in");
//     }
//   };
//
// That one declaration feeds everything else: options::declare<T>() gives
// the schema's entries (the config file's validation, `whvi config
// --describe`), options::keys_read<T>() every key it reads (the fingerprint
// leaves out the options of components a run does not use), and
// options::read<T>(source) fills the struct from the experiment's config for
// the component's factory. A
// component never sees the config: the experiment (src/experiment/resolve.h)
// reads each component's struct once into the run's typed plan, and the
// component's factory takes that struct. A registry holds its kinds' structs
// type-erased as options::Resolved, read by the registration's own
// options::resolve<O>; a struct whose kind names another component (the
// optimiser's rule, the convolution's filter) reads that one's options in its
// finish(const options::Nested&).
//
// A field that reads a key declared by another component (the likelihood
// reads training.steps_fixed_noise) says so with v.use(key, field); an
// options struct that embeds another's (NF-WHVI's WhviOptions) visits it with
// v.part(sub): neither declares the key a second time.
//
// A key added after results were committed says so with v.late() right after
// its declaration: the run fingerprint leaves it out while it is at its
// default (Spec::late), so those results still resume and extend.
//
// When a key acts is declared beside it too, and the run fingerprint (the
// settings that shape a split's numbers, experiment/resolve_fingerprint.cpp)
// is the config minus every key that does not act:
//   v.acts_only_when("model.architecture", {"rff"})   idle unless that value
//   v.idle_when("training.optimizer", {"adam"})        idle at those values
//   v.idle_when_all({{"a", {"x"}}, {"b", {"y"}}})      idle when all hold
//   v.outside_split()                                  never shapes a split
//   v.enters_as("fused")                               in the fingerprint as this text
// A condition's subject is a key (its value as YAML text) or one of the
// plan's resolved facts, named "plan.*" (experiment/resolve_fingerprint.cpp
// lists them: the method, the engine, whether stopping runs, ...).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <typeinfo>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/errors.h"

namespace whvi::options {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

enum class Type { kInt, kFloat, kString, kBool };

// One key of the schema.
struct Spec {
  std::string key;    // dotted path, e.g. "model.width"
  Type type;
  std::string def;    // default, as YAML scalar text
  double min = 0;     // inclusive numeric bounds
  double max = 0;
  std::vector<std::string> choices;  // allowed strings (empty: any)
  std::string help;
  // Added after results were committed: the run fingerprint leaves the key out
  // while it is at its default, so those results still resume and extend.
  bool late = false;
  // When the key does not act (the run fingerprint leaves it out): any clause
  // whose conditions all hold. A condition holds when its subject's value is
  // (in) or is not (!in) one of `values`.
  struct Cond {
    std::string subject;  // a key, or a plan fact "plan.*"
    std::vector<std::string> values;
    bool in = true;
  };
  std::vector<std::vector<Cond>> idle_when{};
  bool outside_split = false;  // output.*, data.splits, ...: never in the fingerprint
  std::string enters_as{};     // where it acts, the fingerprint holds this text, not the value
};

// Where a component's options come from: typed reads by key. Validation
// (types, bounds, allowed values) has happened before anything reads.
class Source {
 public:
  virtual ~Source() = default;
  virtual int64_t get_int(const std::string& key) const = 0;
  virtual double get_float(const std::string& key) const = 0;
  virtual const std::string& get_string(const std::string& key) const = 0;
  virtual bool get_bool(const std::string& key) const = 0;
  // The name errors give the origin by (a config file's path).
  virtual const std::string& source() const = 0;
  // Every key the source holds, declared (its schema): defaults for messages.
  virtual const std::vector<Spec>& declared() const = 0;
};

// Shortest decimal text that reads back as exactly `x` (".inf" / "-.inf" for
// infinities, as YAML writes them).
inline std::string format_double(double x) {
  if (x == kInf) return ".inf";
  if (x == -kInf) return "-.inf";
  char buf[40];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, x);
    if (std::strtod(buf, nullptr) == x) break;
  }
  return buf;
}

namespace detail {
template <class T, class = void>
struct has_finish : std::false_type {};
template <class T>
struct has_finish<T, std::void_t<decltype(std::declval<T&>().finish())>> : std::true_type {};
}  // namespace detail

// One component's options, read once into the run's plan: the struct O the
// component declared, behind a handle that knows which struct it holds.
class Resolved {
 public:
  Resolved() = default;
  template <class O>
  static Resolved of(O o) {
    Resolved r;
    r.p_ = std::make_shared<const O>(std::move(o));
    r.type_ = &typeid(O);
    return r;
  }
  // The struct; asking for another type is a programming error.
  template <class O>
  const O& as() const {
    WHVI_ASSERT(type_ != nullptr && *type_ == typeid(O));
    return *static_cast<const O*>(p_.get());
  }
  bool empty() const { return p_ == nullptr; }

 private:
  std::shared_ptr<const void> p_;
  const std::type_info* type_ = nullptr;
};

// How a registration reads its options struct: &options::resolve<O>. Only the
// experiment calls it (directly, or through Nested below).
using Resolve = Resolved (*)(const Source&);

// What a struct's finish() is given when its kind names another registered
// component: that component's options, read from the same config.
class Nested {
 public:
  explicit Nested(const Source& src) : src_(src) {}
  Resolved operator()(Resolve resolve) const { return resolve(src_); }
  // Where the config came from, for error messages.
  const std::string& origin() const { return src_.source(); }

 private:
  const Source& src_;
};

namespace detail {
template <class T, class = void>
struct has_finish_from : std::false_type {};
template <class T>
struct has_finish_from<T, std::void_t<decltype(std::declval<T&>().finish(std::declval<const Nested&>()))>>
    : std::true_type {};
}  // namespace detail

// The visitor that collects a struct's declarations (its defaults are the
// struct's current values).
class Declare {
 public:
  void num(const char* key, int64_t& v, double lo, double hi, const char* help) {
    specs.push_back({key, Type::kInt, std::to_string(v), lo, hi, {}, help});
  }
  void num(const char* key, double& v, double lo, double hi, const char* help) {
    specs.push_back({key, Type::kFloat, format_double(v), lo, hi, {}, help});
  }
  // a string from `choices` (empty: any string)
  void pick(const char* key, std::string& v, std::vector<std::string> choices, const char* help) {
    specs.push_back({key, Type::kString, v, 0, 0, std::move(choices), help});
  }
  void text(const char* key, std::string& v, const char* help) { pick(key, v, {}, help); }
  void flag(const char* key, bool& v, const char* help) {
    specs.push_back({key, Type::kBool, v ? "true" : "false", 0, 0, {}, help});
  }
  template <class T>
  void use(const char*, T&) {}
  template <class T>
  void part(T&) {}
  // marks the key declared just before as late (Spec::late)
  void late() { specs.back().late = true; }
  // when the key declared just before acts (Spec::idle_when, ...)
  void acts_only_when(const char* subject, std::vector<std::string> values) {
    specs.back().idle_when.push_back({{subject, std::move(values), false}});
  }
  void idle_when(const char* subject, std::vector<std::string> values) {
    specs.back().idle_when.push_back({{subject, std::move(values), true}});
  }
  void idle_when_all(std::vector<Spec::Cond> all) { specs.back().idle_when.push_back(std::move(all)); }
  void outside_split() { specs.back().outside_split = true; }
  void enters_as(const char* text) { specs.back().enters_as = text; }

  std::vector<Spec> specs;
};

// The visitor that fills a struct from a Source.
class Read {
 public:
  explicit Read(const Source& s) : src_(s) {}
  void num(const char* key, int64_t& v, double, double, const char*) { v = src_.get_int(key); }
  void num(const char* key, double& v, double, double, const char*) { v = src_.get_float(key); }
  void pick(const char* key, std::string& v, const std::vector<std::string>&, const char*) { v = src_.get_string(key); }
  void text(const char* key, std::string& v, const char*) { v = src_.get_string(key); }
  void flag(const char* key, bool& v, const char*) { v = src_.get_bool(key); }
  void use(const char* key, int64_t& v) { v = src_.get_int(key); }
  void use(const char* key, double& v) { v = src_.get_float(key); }
  void use(const char* key, std::string& v) { v = src_.get_string(key); }
  void use(const char* key, bool& v) { v = src_.get_bool(key); }
  void late() {}
  void acts_only_when(const char*, const std::vector<std::string>&) {}
  void idle_when(const char*, const std::vector<std::string>&) {}
  void idle_when_all(const std::vector<Spec::Cond>&) {}
  void outside_split() {}
  void enters_as(const char*) {}
  template <class T>
  void part(T& sub) {
    sub.visit(*this);
    if constexpr (detail::has_finish<T>::value) sub.finish();
    if constexpr (detail::has_finish_from<T>::value) sub.finish(Nested(src_));
  }

 private:
  const Source& src_;
};

// The visitor that lists every key a struct reads: its own, those it uses
// and its parts'.
class Keys {
 public:
  template <class T>
  void num(const char* key, T&, double, double, const char*) {
    keys.push_back(key);
  }
  void pick(const char* key, std::string&, const std::vector<std::string>&, const char*) { keys.push_back(key); }
  void text(const char* key, std::string&, const char*) { keys.push_back(key); }
  void flag(const char* key, bool&, const char*) { keys.push_back(key); }
  template <class T>
  void use(const char* key, T&) {
    keys.push_back(key);
  }
  template <class T>
  void part(T& sub) {
    sub.visit(*this);
  }
  void late() {}
  void acts_only_when(const char*, const std::vector<std::string>&) {}
  void idle_when(const char*, const std::vector<std::string>&) {}
  void idle_when_all(const std::vector<Spec::Cond>&) {}
  void outside_split() {}
  void enters_as(const char*) {}
  std::vector<std::string> keys;
};

// Every key a struct reads (declared, used and its parts').
template <class T>
std::vector<std::string> keys_read() {
  T t;
  Keys k;
  t.visit(k);
  return k.keys;
}

// The schema entries a struct declares (use() and part() fields excluded).
template <class T>
std::vector<Spec> declare() {
  T t;
  Declare d;
  t.visit(d);
  return d.specs;
}

// The struct filled from `src`; then its finish(), where it has one, derives
// what it computes from the values read, and its finish(Nested), where it has
// one, reads what needs other keys: the options of the component its kind
// names (optim::OptimiserOptions builds its update rule).
template <class T>
T read(const Source& src) {
  T t;
  Read r(src);
  t.visit(r);
  if constexpr (detail::has_finish<T>::value) t.finish();
  if constexpr (detail::has_finish_from<T>::value) t.finish(Nested(src));
  return t;
}

// A registration's reader of its options struct O (the Resolve of O).
template <class O>
Resolved resolve(const Source& src) {
  return Resolved::of(read<O>(src));
}

// The registration named `name` in `kinds` (each with a `name` field), or an
// error "<what> '<name>' is not registered; registered: a, b, c".
template <class K>
const K& find_kind(const std::vector<K>& kinds, const std::string& name, const std::string& what) {
  for (const auto& k : kinds)
    if (k.name == name) return k;
  std::string known;
  for (const auto& k : kinds) known += (known.empty() ? "" : ", ") + std::string(k.name);
  throw Error(what + " '" + name + "' is not registered; registered: " + known);
}

// The registrations' names, in registration order.
template <class K>
std::vector<std::string> kind_names(const std::vector<K>& kinds) {
  std::vector<std::string> out;
  for (const auto& k : kinds) out.push_back(k.name);
  return out;
}

// A key's help listing its registered kinds, each with its own help where it
// has one (a `help` field): "mcd, mfg (...), whvi (...)".
template <class K>
std::string kinds_help(const std::vector<K>& kinds) {
  std::string out;
  for (const auto& k : kinds) {
    const std::string help = k.help;
    out += (out.empty() ? "" : ", ") + std::string(k.name) + (help.empty() ? "" : " (" + help + ")");
  }
  return out;
}

// The value of `spec`'s key in `src`, as YAML scalar text (as Spec::def writes a default).
inline std::string value_text(const Source& src, const Spec& spec) {
  switch (spec.type) {
    case Type::kInt: return std::to_string(src.get_int(spec.key));
    case Type::kFloat: return format_double(src.get_float(spec.key));
    case Type::kBool: return src.get_bool(spec.key) ? "true" : "false";
    case Type::kString: return src.get_string(spec.key);
  }
  return "";
}

// Whether `src` holds the declared default of `spec`'s key.
inline bool at_default(const Source& src, const Spec& spec) { return value_text(src, spec) == spec.def; }

// The options of a component that has none.
struct None {
  template <class V>
  void visit(V&) {}
};

// Appends `more` to `to` (a section of the schema).
inline void append(std::vector<Spec>& to, const std::vector<Spec>& more) { to.insert(to.end(), more.begin(), more.end()); }

}  // namespace whvi::options
