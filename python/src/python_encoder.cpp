#include "python_encoder.hpp"

#include <fmt/format.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstring>
#include <span>
#include <stdexcept>
#include <type_traits>

#include "spec_dict.hpp"
#include "to_python.hpp"

namespace pecheck::python {

namespace {

using Shape = std::vector<std::size_t>;

/// A NumPy array holding a copy of v: the function may keep or modify it without touching the case.
template <class T>
nb::object numpy_copy(std::span<const T> v, const Shape& shape) {
  T* buffer = new T[std::max<std::size_t>(v.size(), 1)];
  if (!v.empty()) std::memcpy(buffer, v.data(), v.size_bytes());
  nb::capsule owner(buffer, [](void* p) noexcept { delete[] static_cast<T*>(p); });
  return nb::ndarray<nb::numpy, T>(buffer, shape.size(), shape.data(), owner).cast();
}

/// The inputs of one call, by the keyword names of docs/python.md, and where its output goes.
struct Marshalled {
  nb::dict inputs, sizes;
  std::span<float> out;
  Shape out_shape;
};

/// The call's sizes and flags the function is told beside its tensors (docs/python.md).
void add_sizes(const SinusoidalTable& c, nb::dict& sizes) { sizes["d_model"] = c.spec.d_model; }
void add_sizes(const AlibiBias& c, nb::dict& sizes) { sizes["heads"] = c.spec.heads; }
void add_sizes(const Sinusoidal2dTable& c, nb::dict& sizes) { sizes["d_model"] = c.spec.d_model; }
void add_sizes(const RelativeBias2d& c, nb::dict& sizes) { sizes["heads"] = c.spec.heads; }
void add_sizes(const auto&, nb::dict&) {}

/// A call's tensors as its declaration gives them (Call::tensors): every input and in-place tensor
/// copied under its name, the output (or the in-place tensor) where the answer goes.
template <class Call>
Marshalled marshal(const Call& c) {
  Marshalled m;
  for (const TensorArg& t : c.tensors()) {
    const std::string name(t.name);
    if (t.holds_positions)
      m.inputs[name.c_str()] = numpy_copy(t.positions, t.shape);
    else if (t.role != Role::output)
      m.inputs[name.c_str()] = numpy_copy(t.values, t.shape);
    if (t.role != Role::input) m.out = t.result, m.out_shape = t.shape;
  }
  add_sizes(c, m.sizes);
  return m;
}

/// Attention in every form the function declares (spec/attention_forms.hpp), as a plugin of
/// revision 2 takes it: q (queries, heads, head_dim), the last tokens' queries; k and v (n,
/// kv_heads, head_dim); shaw_table with Shaw's PE, t5_table with T5's; `scale` and `window` keywords when declared. A
/// call of a form it does not declare (a property's second call, a decode step say) is declined,
/// naming the form.
Marshalled marshal(const Attention& c, const AttentionForms& forms) {
  if (const auto f = forms.lacking(c.spec))
    throw Unsupported(fmt::format("the call needs {}, and the function does not declare the form '{}' (forms=)",
                                  form_meaning(*f), form_name(*f)));
  Marshalled m = marshal(c);
  m.sizes["causal"] = c.spec.causal;
  if (forms.has(AttentionForm::scale)) m.sizes["scale"] = c.spec.effective_scale();
  if (forms.has(AttentionForm::window)) m.sizes["window"] = c.spec.window;
  return m;
}

/// The last line of a Python exception ("ValueError: ..."), as a traceback ends.
std::string last_line(const nb::python_error& e) {
  std::string type = nb::type_name(e.type()).c_str();
  if (const auto dot = type.rfind('.'); dot != std::string::npos) type = type.substr(dot + 1);
  std::string text = nb::str(e.value()).c_str();
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text.empty() ? type : type + ": " + text;
}

}  // namespace

PythonEncoder::PythonEncoder(Subject s) : s_(std::move(s)) {
  if (s_.batch > 0) session_ = s_.invoke.attr("batch_session")(s_.batch);
}

void PythonEncoder::begin_pass(bool defer) { session_.attr("begin_pass")(defer); }
long PythonEncoder::deferred() const { return nb::cast<long>(session_.attr("deferred")); }
// An exception here is pecheck's or the interpreter's (each call's own is kept as its answer).
void PythonEncoder::flush() { session_.attr("flush")(); }

Support PythonEncoder::supports(Op op, DType dt) const {
  if (op != s_.op) return {false, fmt::format("{} is checked as {}, not {}", s_.name, op_name(s_.op), op_name(op))};
  if (std::find(s_.dtypes.begin(), s_.dtypes.end(), dt) == s_.dtypes.end())
    return {false, fmt::format("{} is not checked in {}", s_.name, dtype_name(dt))};
  return {};
}

template <class Call>
void PythonEncoder::handle(const Call& call) {
  if (Call::op != s_.op) decline(*this, Call::op);
  call.check();
  Marshalled m;
  if constexpr (std::is_same_v<Call, Attention>)
    m = marshal(call, s_.forms);
  else
    m = marshal(call);
  // Batched, the session answers (or defers: None); else the Invoker calls fn at once.
  const nb::object answer = session_.is_valid() ? session_ : s_.invoke;
  nb::object result;
  try {
    result = answer(std::string(op_name(Call::op)), std::string(dtype_name(call.dtype)), m.inputs, m.sizes,
                    s_.passes_spec ? to_python(spec_json(call.spec)) : nb::none(), nb::cast(m.out_shape));
  } catch (nb::python_error& e) {
    const bool unsupported = e.matches(nb::module_::import_("pecheck").attr("Unsupported"));
    const bool index_error = e.matches(PyExc_IndexError);
    const std::string line = last_line(e);  // the exception is the case's result, not the caller's
    if (unsupported) throw Unsupported(fmt::format("{} declined the case: {}", s_.name, line));
    // An index outside a table (nn.Embedding's IndexError) is the refusal the learned operation
    // asks for; any other operation counts it as a failure like every other exception.
    if (index_error) throw std::out_of_range(fmt::format("{} raised {}", s_.name, line));
    throw std::runtime_error(fmt::format("{} raised {}", s_.name, line));
  }
  if (session_.is_valid() && result.is_none())
    return;  // deferred (a batched pass): the output stays as the check filled it
  // pecheck/_invoke.py checked type, shape and dtype; this holds the contract against a change there.
  const auto a = nb::cast<nb::ndarray<const float, nb::c_contig, nb::device::cpu>>(result);
  if (a.size() != m.out.size())
    throw std::logic_error(fmt::format("the invoker returned {} values for {}", a.size(), m.out.size()));
  std::memcpy(m.out.data(), a.data(), m.out.size_bytes());
}

#define PECHECK_PYTHON_HANDLES(Call) template void PythonEncoder::handle<Call>(const Call&);
PECHECK_PYTHON_HANDLES(SinusoidalTable)
PECHECK_PYTHON_HANDLES(LearnedAdd)
PECHECK_PYTHON_HANDLES(RopeApply)
PECHECK_PYTHON_HANDLES(AlibiBias)
PECHECK_PYTHON_HANDLES(ShawScores)
PECHECK_PYTHON_HANDLES(T5Bias)
PECHECK_PYTHON_HANDLES(Attention)
PECHECK_PYTHON_HANDLES(Sinusoidal2dTable)
PECHECK_PYTHON_HANDLES(Rope2dApply)
PECHECK_PYTHON_HANDLES(MropeApply)
PECHECK_PYTHON_HANDLES(RelativeBias2d)
#undef PECHECK_PYTHON_HANDLES

}  // namespace pecheck::python
