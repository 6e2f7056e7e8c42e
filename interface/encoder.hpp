// The one "encoder under test" interface: pecheck's own backends, the reference instantiated with
// double, the mutants, plugins and dumps are all checked through it. It has one pure virtual
// run() per entry of the operation table (interface/operations.hpp): an encoder implements each
// operation or declines it explicitly, never by a silent default.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

#include "interface/operations.hpp"

namespace pecheck {

/// Whether an encoder offers an operation in a dtype; the reason when it does not.
struct Support {
  bool ok = true;
  std::string reason;
};

/// Thrown by an operation the encoder does not offer: a skip, never a failure.
struct Unsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The entry point of one operation.
template <class Call>
class Runs {
 public:
  virtual ~Runs() = default;
  /// Performs the call: throws Unsupported when declined, std::invalid_argument on a bad spec or
  /// shape, std::out_of_range on a learned position outside the table.
  virtual void run(const Call& call) = 0;
};

namespace detail {
template <class List>
struct RunsEach;
template <class... Calls>
struct RunsEach<OperationList<Calls...>> : Runs<Calls>... {
  using Runs<Calls>::run...;
};
}  // namespace detail

/// Calls an encoder answers many at a time (a Python function with a batch axis: check(batch=)).
/// The runner then runs a property's cases in passes over the same draws. While a pass defers, a
/// call not answered before is noted and left unanswered (its output as the check filled it, an
/// in-place input unchanged), and the case it belongs to counts for nothing; between passes,
/// flush() answers every noted call at once. A pass that deferred nothing is the property's run:
/// each of its calls had its own answer, as if made one at a time.
class CallBatcher {
 public:
  virtual ~CallBatcher() = default;
  /// Starts a pass over the same draws: the calls it makes are answered as before, in the same
  /// order (the same call made twice has two answers); `defer`: a new one waits for flush().
  virtual void begin_pass(bool defer) = 0;
  /// Calls deferred since the pass began.
  virtual long deferred() const = 0;
  /// Answers every deferred call, in as few calls of the encoder as it can.
  virtual void flush() = 0;
};

/// An encoder under test: `enc.run(RopeApply{spec, dtype, heads, positions, x})`.
class Encoder : public detail::RunsEach<Operations> {
 public:
  virtual std::string name() const = 0;
  virtual Support supports(Op op, DType dtype) const = 0;
  /// Null for an encoder that answers each call as it comes (every one but a batched function).
  virtual CallBatcher* batcher() { return nullptr; }
};

/// The one way to decline: throws Unsupported naming the encoder and the operation.
[[noreturn]] void decline(const Encoder& encoder, Op op);

namespace detail {
template <class Base, class Call, bool declined>
struct DeclineIf : Base {};
template <class Base, class Call>
struct DeclineIf<Base, Call, true> : Base {
  using Base::run;
  void run(const Call&) override { decline(*this, Call::op); }
};

template <class Base, class Offered, class... Calls>
struct DeclineOthers {
  using type = Base;
};
template <class Base, class... Offered, class Call, class... Rest>
struct DeclineOthers<Base, OperationList<Offered...>, Call, Rest...> {
  using type = typename DeclineOthers<DeclineIf<Base, Call, !(std::is_same_v<Call, Offered> || ...)>,
                                      OperationList<Offered...>, Rest...>::type;
};
template <class Offered, class List>
struct OfferingBase;
template <class Offered, class... Calls>
struct OfferingBase<Offered, OperationList<Calls...>> {
  using type = typename DeclineOthers<Encoder, Offered, Calls...>::type;
};
}  // namespace detail

/// An encoder that offers only the listed operations and declines every other one, by name: the
/// listed ones stay pure virtual, so forgetting one fails to compile. supports() says yes to the
/// listed operations in every dtype; override it to narrow that.
template <class... Offered>
class Offering : public detail::OfferingBase<OperationList<Offered...>, Operations>::type {
 public:
  Support supports(Op op, DType) const override {
    if ((false || ... || (op == Offered::op))) return {};
    return {false, std::string(op_name(op)) + " is not offered"};
  }
};

namespace detail {
template <class Self, class Base, class... Calls>
struct HandleEach : Base {};
template <class Self, class Base, class Call, class... Rest>
struct HandleEach<Self, Base, Call, Rest...> : HandleEach<Self, Base, Rest...> {
  using HandleEach<Self, Base, Rest...>::run;
  void run(const Call& call) override { static_cast<Self&>(*this).handle(call); }
};
template <class Self, class List>
struct HandledBase;
template <class Self, class... Calls>
struct HandledBase<Self, OperationList<Calls...>> {
  using type = HandleEach<Self, Encoder, Calls...>;
};
}  // namespace detail

/// Implements every operation by one member template `template <class Call> void handle(const
/// Call&)` of Self: for adapters that treat all operations alike (forwarding to another encoder).
template <class Self>
using HandledBy = typename detail::HandledBase<Self, Operations>::type;

}  // namespace pecheck
