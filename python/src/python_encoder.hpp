// A Python callable as an encoder under test. Every operation of the table is marshalled the same
// way: its tensors become float32 NumPy arrays (positions int64), its sizes keyword arguments,
// and the Python side (pecheck/_invoke.py) converts them to the framework and dtype the user
// asked for, calls the function and hands back a float32 array of the output's shape, or raises.
// A Python exception is a failed case (std::runtime_error with the exception's last line), except
// pecheck.Unsupported, which declines the case like a plugin's PECHECK_UNSUPPORTED, and
// IndexError, which is std::out_of_range: a learned position outside the table, refused.
#pragma once

#include <nanobind/nanobind.h>

#include <string>
#include <vector>

#include "interface/encoder.hpp"
#include "spec/attention_forms.hpp"

namespace pecheck::python {

namespace nb = nanobind;

struct Subject {
  nb::object invoke;          ///< pecheck._invoke.Invoker: (op, dtype, inputs, sizes, spec, out_shape) -> array
  std::string name;           ///< the function's qualified name, for reports
  Op op;                      ///< the one operation it implements
  std::vector<DType> dtypes;  ///< the dtypes it is checked in
  bool passes_spec = false;   ///< convention="spec": every call also gets the spec, as a dict
  /// The attention forms it takes (check()'s forms=; under a pinned PE RoPE's rule is the pin's).
  AttentionForms forms;
  /// check()'s batch=: 0, each call made as it comes; else fn takes a leading batch axis and is
  /// sent up to this many calls at once (pecheck/_invoke.py's BatchSession).
  int batch = 0;
};

/// The encoder: offers subject.op in subject.dtypes, declines everything else by name. Batched
/// (subject.batch), it answers through a BatchSession, which keeps every answer of the property's
/// passes and sends the calls a pass deferred in as few calls of fn as their shapes allow.
class PythonEncoder final : public HandledBy<PythonEncoder>, public CallBatcher {
 public:
  explicit PythonEncoder(Subject s);
  std::string name() const override { return s_.name; }
  Support supports(Op op, DType dt) const override;
  CallBatcher* batcher() override { return session_.is_valid() ? this : nullptr; }

  void begin_pass(bool defer) override;
  long deferred() const override;
  void flush() override;

  template <class Call>
  void handle(const Call& call);

 private:
  Subject s_;
  nb::object session_;  ///< pecheck._invoke.BatchSession, when batched
};

}  // namespace pecheck::python
