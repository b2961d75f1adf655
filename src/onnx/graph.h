// An ONNX graph built node by node and written as an ONNX model file
// (`whvi export --format onnx`, experiment/export.cpp). No ONNX or protobuf
// library: the few messages a model needs (ModelProto, GraphProto, NodeProto,
// AttributeProto, TensorProto, ValueInfoProto; onnx/onnx.proto of ONNX 1.12)
// are encoded here by hand, in protobuf's wire format.
//
// Opset 17 (ONNX 1.12, the Debian checker; every current ONNX Runtime runs
// it), IR version 8. Values are float32 unless said; constants become
// initializers. Every node has one output named after its op and a counter,
// so names never clash.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

namespace whvi::onnx {

constexpr int64_t kOpset = 17;
constexpr int64_t kIrVersion = 8;

// An attribute of a node: one float, int, string, or a list of ints or floats.
struct Attr {
  enum class Kind { kFloat, kInt, kString, kInts, kFloats };
  std::string name;
  Kind kind = Kind::kInt;
  double f = 0;
  int64_t i = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  static Attr real(std::string n, double v) { return {std::move(n), Kind::kFloat, v, 0, {}, {}, {}}; }
  static Attr integer(std::string n, int64_t v) { return {std::move(n), Kind::kInt, 0, v, {}, {}, {}}; }
  static Attr text(std::string n, std::string v) { return {std::move(n), Kind::kString, 0, 0, std::move(v), {}, {}}; }
  static Attr list(std::string n, std::vector<int64_t> v) { return {std::move(n), Kind::kInts, 0, 0, {}, std::move(v), {}}; }
};

// ONNX's element types used here (TensorProto.DataType).
enum class Elem : int32_t { kFloat = 1, kInt64 = 7, kBool = 9, kDouble = 11 };

// A dimension of a graph input or output: a size, or a name (a free size, e.g. the rows).
struct Dim {
  int64_t size = -1;
  std::string name;
};

class Graph {
 public:
  // A node of `op` over `inputs` with `attrs`; returns its (one) output's name.
  std::string op(const std::string& type, const std::vector<std::string>& inputs, const std::vector<Attr>& attrs = {});
  // A constant (initializer): a float tensor as float32 (float64 with
  // `as_double`), an integer one as int64.
  std::string constant(const torch::Tensor& t, bool as_double = false);
  std::string scalar(double v, bool as_double = false);  // float32 (or float64) scalar
  std::string ints(const std::vector<int64_t>& v);  // int64 vector
  // The graph's inputs and outputs, in order.
  void input(const std::string& name, Elem type, const std::vector<Dim>& dims);
  void output(const std::string& value, const std::string& name, Elem type, const std::vector<Dim>& dims);
  // A metadata entry of the model (ModelProto.metadata_props).
  void meta(const std::string& key, const std::string& value);
  // The model file's bytes.
  std::string serialise(const std::string& producer_version, const std::string& doc) const;
  size_t nodes() const { return nodes_.size(); }

 private:
  std::vector<std::string> nodes_, initializers_, inputs_, outputs_;
  std::vector<std::pair<std::string, std::string>> meta_;
  int64_t counter_ = 0;
};

// Composite steps several exporters share.
// The unnormalised Walsh-Hadamard transform along the last axis (of size d, a
// power of two) of x: exact (entries ±1), as a product with the Sylvester
// matrix H_d up to d = 64, and above as H_d1 ⊗ ... ⊗ H_dr (factors of at most
// 64) applied axis by axis to x seen as [M, d1, ..., dr].
std::string fwht(Graph& g, const std::string& x, int64_t d);
// A reduction (ReduceSum, ReduceMean, ReduceMax, ReduceMin) over one axis,
// kept or dropped (opset 17 takes ReduceSum's axes as an input, the others'
// as an attribute).
std::string reduce(Graph& g, const std::string& op, const std::string& x, int64_t axis, bool keepdims = false);
// x converted to `to`.
std::string cast(Graph& g, const std::string& x, Elem to);
// x [R, in] @ w [in, out] + b [out] (b may be undefined).
std::string linear(Graph& g, const std::string& x, const torch::Tensor& w, const torch::Tensor& b);
// mu + sd * ε, ε ~ N(0, 1) drawn afresh at every call, of mu's shape (sd broadcast).
std::string gaussian_draw(Graph& g, const std::string& mu, const std::string& sd);

}  // namespace whvi::onnx
