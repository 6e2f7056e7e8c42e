// Runs one property against one encoder in a child process, so that an encoder that crashes,
// aborts or hangs becomes a reported result (verdict crash) and the run goes on.
#pragma once

#include "impl/backend_table.hpp"
#include "properties/property.hpp"

namespace pecheck {

struct IsolationOptions {
  double timeout_s = 300;  ///< a child still running after this is killed and reported as hung
};

/// Forks; the child makes the encoder from `backend`, runs `property` and sends the result back
/// through a pipe. A signal, a non-zero exit or silence past the timeout gives Verdict::crash
/// with the reason in message.
PropertyResult run_isolated(const Property& property, const Backend& backend, DType dtype, const RunParams& params,
                            const IsolationOptions& options = {});

}  // namespace pecheck
