// Runs one property against one encoder in a child process, so that an encoder that crashes,
// aborts or hangs becomes a reported result (verdict crash) and the run goes on.
#pragma once

#include <functional>
#include <string>

#include "harness/property.hpp"
#include "interface/backend.hpp"

namespace pecheck {

/// What an embedding runtime must do around fork(): CPython's PyOS_BeforeFork,
/// PyOS_AfterFork_Parent and PyOS_AfterFork_Child (python/src/), so that its locks and thread
/// states are sane in the child. Empty: nothing.
struct ForkHooks {
  std::function<void()> before, after_in_parent, after_in_child;
};

struct IsolationOptions {
  double timeout_s = 300;  ///< a child still running after this is killed and reported as hung
  ForkHooks hooks;
};

/// What a child process did.
struct ChildOutcome {
  bool reported = false;  ///< it returned and exited 0; payload is what body returned
  std::string payload;
  std::string failure;    ///< otherwise why: a signal, an exit status, a hang, with any noted fault
  std::string last_case;  ///< the case it noted last in the case journal
};

/// Runs body in a forked child with a case journal; what body returns comes back through a pipe.
/// A child still running after timeout_s is killed.
ChildOutcome run_in_child(const std::function<std::string()>& body, double timeout_s, const ForkHooks& hooks = {});

/// Forks; the child makes the encoder from `backend`, runs `property` and sends the result back
/// through a pipe. A signal, a non-zero exit or silence past the timeout gives Verdict::crash
/// with the reason in message.
PropertyResult run_isolated(const Property& property, const Backend& backend, DType dtype, const RunParams& params,
                            const IsolationOptions& options = {});

}  // namespace pecheck
