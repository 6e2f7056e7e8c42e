// Loading a plugin (pecheck/encoder_abi.h) and checking it through the one encoder-under-test
// interface. The parent never maps a plugin: its declaration is probed in a child, and each
// property runs in a child that opens it afresh, so a plugin that crashes while loading is a
// reported result too.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "harness/pins.hpp"
#include "interface/backend.hpp"
#include "pecheck/encoder_abi.h"

namespace pecheck::plugin {

/// Not a usable plugin (no file, not a shared library, no entry symbol, another ABI version, a
/// malformed descriptor): one line, exit status 2.
struct LoadError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The plugin crashed, aborted or hung while loading or describing itself: exit status 3.
struct LoadCrash : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// What a plugin declares of itself.
struct Declaration {
  std::string path;  ///< as dlopen will see it
  std::string name;
  std::uint32_t dtypes = 0;       ///< mask of 1 << PECHECK_F32 ...
  std::uint32_t conventions = 0;  ///< mask of 1 << PECHECK_OP_*: ops that honour the spec
  std::uint32_t ops = 0;          ///< mask of 1 << PECHECK_OP_*: ops with an entry point
  std::uint32_t flags = 0;        ///< mask of PECHECK_FLAG_*: the platform's conventions
  /// What the attention entry point takes (the descriptor's fields; 0 when it ends before them):
  /// a mask of 1 << PECHECK_PE_* (0: every PE), and PECHECK_FORMS_DECLARED | PECHECK_FORM_* (0:
  /// every form).
  std::uint32_t attention_pes = 0;
  std::uint32_t attention_forms = 0;
  std::uint32_t abi_revision = 0;  ///< what it implements of the revisions (PECHECK_ABI_REVISION)

  /// PECHECK_FLAG_FTZ: judged as --ftz judges (RunParams::ftz).
  bool flushes_subnormals() const { return (flags & PECHECK_FLAG_FTZ) != 0; }
};

/// Opens the plugin in a child process and returns its declaration.
Declaration probe(const std::string& path, double timeout_s);

/// Opens the plugin in this process and checks its descriptor (LoadError on any problem).
const pecheck_plugin* open_plugin(const std::string& path);
Declaration declaration_of(const std::string& path, const pecheck_plugin& p);

/// The operations with an entry point, as a mask of 1 << PECHECK_OP_*.
std::uint32_t offered_ops(const pecheck_plugin& p);

/// The M-RoPE entry point, or null when the descriptor (struct_size) ends before it: a plugin
/// built against ABI 1's first header.
decltype(pecheck_plugin::mrope_apply) mrope_entry(const pecheck_plugin& p);
/// The descriptor's abi_revision, 0 when it ends before that field (built against an older header).
std::uint32_t abi_revision(const pecheck_plugin& p);
/// The descriptor's flags, 0 when it ends before that field.
std::uint32_t platform_flags(const pecheck_plugin& p);
/// The descriptor's attention_pes and attention_forms, 0 when it ends before them.
std::uint32_t attention_pes(const pecheck_plugin& p);
std::uint32_t attention_forms(const pecheck_plugin& p);

/// The declaration's attention PEs and forms as the runner reads them (harness/pins.hpp), so that
/// each attention property draws only cases inside them; null when the plugin declares neither.
std::shared_ptr<const Pins> attention_pins(const Declaration& d);
/// "attention takes PEs none, rope; forms grouped_query, decode", or "" when nothing is declared.
std::string attention_declaration_text(const Declaration& d);

/// The ABI's number for an operation, or none (the 2-D operations are not in ABI 1).
std::optional<int> abi_op(Op op);

/// Why the declaration rules an operation in a dtype out (not in ABI 1, not offered, not
/// stored), or nothing: one answer for the encoder's supports() and for validate's skips.
std::optional<std::string> declined(const Declaration& d, Op op, DType dt);

/// The plugin as an encoder under test (opens it in this process).
std::unique_ptr<Encoder> make_encoder(const std::string& path);

/// The plugin as a row of a backend table: available, made by make_encoder in each child.
Backend as_backend(const Declaration& d);

}  // namespace pecheck::plugin
