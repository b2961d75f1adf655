// ONNX graphs in protobuf's wire format (onnx/graph.h). Field numbers from
// onnx/onnx.proto (ONNX 1.12); repeated scalars are written unpacked, which
// every protobuf parser accepts for proto2 fields.
#include "onnx/graph.h"

#include <cstring>

#include "common/errors.h"

namespace whvi::onnx {
namespace {

// protobuf wire format
void varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}
void key(std::string& out, int field, int wire) { varint(out, (static_cast<uint64_t>(field) << 3) | wire); }
void int_field(std::string& out, int field, int64_t v) {
  key(out, field, 0);
  varint(out, static_cast<uint64_t>(v));
}
void bytes_field(std::string& out, int field, const std::string& v) {
  key(out, field, 2);
  varint(out, v.size());
  out += v;
}
void float_field(std::string& out, int field, float v) {
  key(out, field, 5);
  char b[4];
  std::memcpy(b, &v, 4);  // little-endian on x86-64, as protobuf's fixed32
  out.append(b, 4);
}

std::string attribute(const Attr& a) {
  std::string m;
  bytes_field(m, 1, a.name);
  switch (a.kind) {
    case Attr::Kind::kFloat: float_field(m, 2, static_cast<float>(a.f)), int_field(m, 20, 1); break;
    case Attr::Kind::kInt: int_field(m, 3, a.i), int_field(m, 20, 2); break;
    case Attr::Kind::kString: bytes_field(m, 4, a.s), int_field(m, 20, 3); break;
    case Attr::Kind::kFloats:
      for (float v : a.floats) float_field(m, 7, v);
      int_field(m, 20, 6);
      break;
    case Attr::Kind::kInts:
      for (int64_t v : a.ints) int_field(m, 8, v);
      int_field(m, 20, 7);
      break;
  }
  return m;
}

std::string value_info(const std::string& name, Elem type, const std::vector<Dim>& dims) {
  std::string shape;
  for (const auto& d : dims) {
    std::string dim;
    if (d.name.empty()) int_field(dim, 1, d.size);
    else bytes_field(dim, 2, d.name);
    bytes_field(shape, 1, dim);
  }
  std::string tensor;
  int_field(tensor, 1, static_cast<int32_t>(type));
  bytes_field(tensor, 2, shape);
  std::string type_proto;
  bytes_field(type_proto, 1, tensor);
  std::string m;
  bytes_field(m, 1, name);
  bytes_field(m, 2, type_proto);
  return m;
}

}  // namespace

std::string Graph::op(const std::string& type, const std::vector<std::string>& inputs, const std::vector<Attr>& attrs) {
  const std::string out = type + "_" + std::to_string(counter_++);
  std::string n;
  for (const auto& i : inputs) bytes_field(n, 1, i);
  bytes_field(n, 2, out);
  bytes_field(n, 3, out);
  bytes_field(n, 4, type);
  for (const auto& a : attrs) bytes_field(n, 5, attribute(a));
  nodes_.push_back(std::move(n));
  return out;
}

std::string Graph::constant(const torch::Tensor& t_in, bool as_double) {
  const bool integer = !t_in.is_floating_point();
  const auto type = integer ? torch::kInt64 : as_double ? torch::kFloat64 : torch::kFloat32;
  const auto t = t_in.detach().to(torch::kCPU).to(type).contiguous();
  const std::string name = "const_" + std::to_string(counter_++);
  std::string m;
  for (const auto d : t.sizes()) int_field(m, 1, d);
  int_field(m, 2, static_cast<int32_t>(integer ? Elem::kInt64 : as_double ? Elem::kDouble : Elem::kFloat));
  bytes_field(m, 8, name);
  bytes_field(m, 9, std::string(static_cast<const char*>(t.data_ptr()), t.numel() * t.element_size()));
  initializers_.push_back(std::move(m));
  return name;
}

std::string Graph::scalar(double v, bool as_double) {
  return as_double ? constant(torch::tensor(v, torch::kFloat64), true) : constant(torch::tensor(static_cast<float>(v)));
}

std::string Graph::ints(const std::vector<int64_t>& v) {
  return constant(torch::tensor(v, torch::kInt64));
}

void Graph::input(const std::string& name, Elem type, const std::vector<Dim>& dims) {
  inputs_.push_back(value_info(name, type, dims));
}

void Graph::output(const std::string& value, const std::string& name, Elem type, const std::vector<Dim>& dims) {
  // the value under the output's own name
  std::string n;
  bytes_field(n, 1, value);
  bytes_field(n, 2, name);
  bytes_field(n, 3, name);
  bytes_field(n, 4, "Identity");
  nodes_.push_back(std::move(n));
  outputs_.push_back(value_info(name, type, dims));
}

void Graph::meta(const std::string& k, const std::string& v) { meta_.emplace_back(k, v); }

std::string Graph::serialise(const std::string& producer_version, const std::string& doc) const {
  std::string graph;
  for (const auto& n : nodes_) bytes_field(graph, 1, n);
  bytes_field(graph, 2, "whvi");
  for (const auto& t : initializers_) bytes_field(graph, 5, t);
  for (const auto& i : inputs_) bytes_field(graph, 11, i);
  for (const auto& o : outputs_) bytes_field(graph, 12, o);
  std::string model;
  int_field(model, 1, kIrVersion);
  bytes_field(model, 2, "whvi");
  bytes_field(model, 3, producer_version);
  bytes_field(model, 6, doc);
  bytes_field(model, 7, graph);
  std::string opset;
  bytes_field(opset, 1, "");
  int_field(opset, 2, kOpset);
  bytes_field(model, 8, opset);
  for (const auto& [k, v] : meta_) {
    std::string e;
    bytes_field(e, 1, k);
    bytes_field(e, 2, v);
    bytes_field(model, 14, e);
  }
  return model;
}

namespace {
torch::Tensor sylvester(int64_t d) {  // H_d, symmetric, entries ±1
  auto h = torch::ones({1, 1});
  while (h.size(0) < d) h = torch::cat({torch::cat({h, h}, 1), torch::cat({h, -h}, 1)}, 0);
  return h;
}
}  // namespace

std::string fwht(Graph& g, const std::string& x, int64_t d) {
  WHVI_CHECK(d >= 1 && (d & (d - 1)) == 0, "fwht: ", d, " is not a power of two");
  if (d == 1) return x;
  if (d <= 64) return g.op("MatMul", {x, g.constant(sylvester(d))});
  // H_d = H_d1 ⊗ ... ⊗ H_dr (Sylvester's construction; the first factor on the
  // high bits): x seen as [M, d1, ..., dr], each axis multiplied by its H in turn,
  // the last axis each time, then moved to the front (after r turns the order is back)
  int64_t bits = 0;
  while ((int64_t{1} << bits) < d) ++bits;
  const int64_t r = (bits + 5) / 6;
  std::vector<int64_t> shape = {-1}, perm = {0, r};
  for (int64_t i = 0; i < r; ++i) shape.push_back(int64_t{1} << (bits / r + (i < bits % r ? 1 : 0)));
  for (int64_t i = 1; i < r; ++i) perm.push_back(i);
  const auto original = g.op("Shape", {x});
  auto t = g.op("Reshape", {x, g.ints(shape)});
  for (int64_t i = r; i >= 1; --i) {
    t = g.op("MatMul", {t, g.constant(sylvester(shape[static_cast<size_t>(i)]))});
    t = g.op("Transpose", {t}, {Attr::list("perm", perm)});
  }
  return g.op("Reshape", {t, original});
}

std::string reduce(Graph& g, const std::string& op, const std::string& x, int64_t axis, bool keepdims) {
  const auto keep = Attr::integer("keepdims", keepdims ? 1 : 0);
  if (op == "ReduceSum") return g.op(op, {x, g.ints({axis})}, {keep});
  return g.op(op, {x}, {Attr::list("axes", {axis}), keep});
}

std::string cast(Graph& g, const std::string& x, Elem to) {
  return g.op("Cast", {x}, {Attr::integer("to", static_cast<int64_t>(to))});
}

std::string linear(Graph& g, const std::string& x, const torch::Tensor& w, const torch::Tensor& b) {
  const auto y = g.op("MatMul", {x, g.constant(w)});
  return b.defined() ? g.op("Add", {y, g.constant(b)}) : y;
}

std::string gaussian_draw(Graph& g, const std::string& mu, const std::string& sd) {
  const auto eps = g.op("RandomNormalLike", {mu});
  return g.op("Add", {mu, g.op("Mul", {sd, eps})});
}

}  // namespace whvi::onnx
