#include "plugin/plugin_host.hpp"

#include <dlfcn.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "harness/isolation.hpp"

namespace pecheck::plugin {

namespace {

constexpr std::uint32_t kKnownDtypes = (1u << PECHECK_F32) | (1u << PECHECK_BF16) | (1u << PECHECK_F16);
constexpr std::uint32_t kKnownOps = (1u << (PECHECK_OP_MROPE_APPLY + 1)) - 1;
constexpr std::uint32_t kKnownFlags = PECHECK_FLAG_FTZ;
constexpr std::uint32_t kKnownPes = (1u << (PECHECK_PE_T5 + 1)) - 1;
constexpr std::uint32_t kKnownForms = PECHECK_FORMS_DECLARED | ((1u << kAttentionForms.size()) - 1);
// The ABI's form bits are spec/attention_forms.hpp's order, and its PE numbers AttentionPE's.
static_assert(PECHECK_FORM_GROUPED_QUERY == 1u << static_cast<unsigned>(AttentionForm::grouped_query) &&
              PECHECK_FORM_WINDOW == 1u << static_cast<unsigned>(AttentionForm::window) &&
              PECHECK_FORM_DECODE == 1u << static_cast<unsigned>(AttentionForm::decode) &&
              PECHECK_FORM_SCALE == 1u << static_cast<unsigned>(AttentionForm::scale) &&
              PECHECK_FORM_ROPE_RULES == 1u << static_cast<unsigned>(AttentionForm::rope_rules));
static_assert(PECHECK_PE_NONE == static_cast<int>(AttentionPE::none) &&
              PECHECK_PE_SINUSOIDAL == static_cast<int>(AttentionPE::sinusoidal) &&
              PECHECK_PE_ROPE == static_cast<int>(AttentionPE::rope) &&
              PECHECK_PE_ALIBI == static_cast<int>(AttentionPE::alibi) &&
              PECHECK_PE_SHAW == static_cast<int>(AttentionPE::shaw) &&
              PECHECK_PE_T5 == static_cast<int>(AttentionPE::t5));
constexpr AttentionPE kPes[] = {AttentionPE::none,  AttentionPE::sinusoidal, AttentionPE::rope,
                                AttentionPE::alibi, AttentionPE::shaw,       AttentionPE::t5};
/// The PEs inside attention a plugin below revision 3 may take: T5's came with revision 3.
constexpr std::uint32_t kRevision2Pes = (1u << (PECHECK_PE_SHAW + 1)) - 1;

/// dlopen searches the library path for a bare name; a user means the file in this directory.
std::string dlopen_path(const std::string& path) { return path.find('/') == std::string::npos ? "./" + path : path; }

}  // namespace

decltype(pecheck_plugin::mrope_apply) mrope_entry(const pecheck_plugin& p) {
  return p.struct_size >= offsetof(pecheck_plugin, mrope_apply) + sizeof p.mrope_apply ? p.mrope_apply : nullptr;
}

std::uint32_t abi_revision(const pecheck_plugin& p) {
  return p.struct_size >= offsetof(pecheck_plugin, abi_revision) + sizeof p.abi_revision ? p.abi_revision : 0;
}

std::uint32_t platform_flags(const pecheck_plugin& p) {
  return p.struct_size >= offsetof(pecheck_plugin, flags) + sizeof p.flags ? p.flags : 0;
}

std::uint32_t attention_pes(const pecheck_plugin& p) {
  return p.struct_size >= offsetof(pecheck_plugin, attention_pes) + sizeof p.attention_pes ? p.attention_pes : 0;
}

std::uint32_t attention_forms(const pecheck_plugin& p) {
  return p.struct_size >= offsetof(pecheck_plugin, attention_forms) + sizeof p.attention_forms ? p.attention_forms : 0;
}

std::shared_ptr<const Pins> attention_pins(const Declaration& d) {
  // Every PE (0) means every one its revision knows: below 3, all but T5's.
  const std::uint32_t mask = d.attention_pes != 0 ? d.attention_pes : d.abi_revision < 3 ? kRevision2Pes : 0;
  if (mask == 0 && d.attention_forms == 0) return nullptr;
  auto pins = std::make_shared<Pins>();
  if (mask != 0) {
    std::vector<AttentionPE> pes;
    for (AttentionPE pe : kPes)
      if (mask >> static_cast<unsigned>(pe) & 1u) pes.push_back(pe);
    pins->attention_pes = pes;
  }
  if (d.attention_forms != 0) pins->attention_forms = AttentionForms{d.attention_forms & ~PECHECK_FORMS_DECLARED};
  return pins;
}

std::string attention_declaration_text(const Declaration& d) {
  std::string pes, forms;
  for (AttentionPE pe : kPes)
    if (d.attention_pes >> static_cast<unsigned>(pe) & 1u) pes += (pes.empty() ? "" : ", ") + std::string(pe_name(pe));
  for (AttentionForm f : kAttentionForms)
    if (d.attention_forms >> static_cast<unsigned>(f) & 1u)
      forms += (forms.empty() ? "" : ", ") + std::string(form_name(f));
  std::string t;
  if (d.attention_pes != 0) t = "PEs " + pes;
  if (d.attention_forms != 0)
    t += (t.empty() ? "" : "; ") + ("forms " + (forms.empty() ? "none beyond the plain one" : forms));
  return t.empty() ? t : "attention declares " + t;
}

std::uint32_t offered_ops(const pecheck_plugin& p) {
  const void* entries[] = {
      reinterpret_cast<const void*>(p.sinusoidal_table), reinterpret_cast<const void*>(p.learned_add),
      reinterpret_cast<const void*>(p.rope_apply),       reinterpret_cast<const void*>(p.alibi_bias),
      reinterpret_cast<const void*>(p.shaw_scores),      reinterpret_cast<const void*>(p.t5_bias),
      reinterpret_cast<const void*>(p.attention),        reinterpret_cast<const void*>(mrope_entry(p))};
  std::uint32_t mask = 0;
  for (int op = 0; op <= PECHECK_OP_MROPE_APPLY; ++op)
    if (entries[op]) mask |= 1u << op;
  return mask;
}

const pecheck_plugin* open_plugin(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    throw LoadError(fmt::format("plugin '{}': no such file", path));
  void* handle = ::dlopen(dlopen_path(path).c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) throw LoadError(fmt::format("plugin '{}' cannot be loaded: {}", path, ::dlerror()));
  void* symbol = ::dlsym(handle, PECHECK_PLUGIN_SYMBOL);
  if (!symbol)
    throw LoadError(fmt::format("plugin '{}' has no symbol {} (not a pecheck plugin? see pecheck/encoder_abi.h)", path,
                                PECHECK_PLUGIN_SYMBOL));
  const pecheck_plugin* p = reinterpret_cast<pecheck_plugin_entry>(symbol)();
  if (!p) throw LoadError(fmt::format("plugin '{}': {}() returned no descriptor", path, PECHECK_PLUGIN_SYMBOL));
  if (p->abi_version != PECHECK_ABI_VERSION)
    throw LoadError(fmt::format("plugin '{}' was built against plugin ABI version {}; this pecheck speaks version {}",
                                path, p->abi_version, PECHECK_ABI_VERSION));
  if (p->struct_size < PECHECK_PLUGIN_V1_MIN_SIZE)
    throw LoadError(fmt::format("plugin '{}': descriptor of {} bytes, ABI version {} needs at least {}", path,
                                p->struct_size, PECHECK_ABI_VERSION, PECHECK_PLUGIN_V1_MIN_SIZE));
  if (!p->name || !*p->name) throw LoadError(fmt::format("plugin '{}': descriptor has no name", path));
  if (p->dtypes == 0 || (p->dtypes & ~kKnownDtypes))
    throw LoadError(fmt::format("plugin '{}': dtype mask {:#x} is empty or names unknown dtypes", path, p->dtypes));
  if (p->conventions & ~kKnownOps)
    throw LoadError(fmt::format("plugin '{}': convention mask {:#x} names unknown operations", path, p->conventions));
  if (platform_flags(*p) & ~kKnownFlags)
    throw LoadError(
        fmt::format("plugin '{}': flags {:#x} name unknown platform conventions", path, platform_flags(*p)));
  if (attention_pes(*p) & ~kKnownPes)
    throw LoadError(
        fmt::format("plugin '{}': attention_pes {:#x} names unknown position encodings", path, attention_pes(*p)));
  if ((attention_forms(*p) & ~kKnownForms) ||
      (attention_forms(*p) != 0 && !(attention_forms(*p) & PECHECK_FORMS_DECLARED)))
    throw LoadError(
        fmt::format("plugin '{}': attention_forms {:#x} names unknown forms or lacks PECHECK_FORMS_DECLARED", path,
                    attention_forms(*p)));
  if (offered_ops(*p) == 0) throw LoadError(fmt::format("plugin '{}' offers no operation", path));
  return p;
}

Declaration declaration_of(const std::string& path, const pecheck_plugin& p) {
  const std::uint32_t ops = offered_ops(p);
  return {.path = path,
          .name = p.name,
          .dtypes = p.dtypes,
          .conventions = p.conventions & ops,
          .ops = ops,
          .flags = platform_flags(p),
          .attention_pes = attention_pes(p),
          .attention_forms = attention_forms(p),
          .abi_revision = abi_revision(p)};
}

Declaration probe(const std::string& path, double timeout_s) {
  const ChildOutcome child = run_in_child(
      [&] {
        try {
          const Declaration d = declaration_of(path, *open_plugin(path));
          return nlohmann::json{{"name", d.name},
                                {"dtypes", d.dtypes},
                                {"conventions", d.conventions},
                                {"ops", d.ops},
                                {"flags", d.flags},
                                {"attention_pes", d.attention_pes},
                                {"attention_forms", d.attention_forms},
                                {"abi_revision", d.abi_revision}}
              .dump();
        } catch (const LoadError& e) {
          return nlohmann::json{{"error", e.what()}}.dump();
        }
      },
      timeout_s);
  if (!child.reported) throw LoadCrash(fmt::format("plugin '{}' failed while loading: {}", path, child.failure));
  const auto j = nlohmann::json::parse(child.payload);
  if (j.contains("error")) throw LoadError(j.at("error").get<std::string>());
  return {.path = path,
          .name = j.at("name").get<std::string>(),
          .dtypes = j.at("dtypes").get<std::uint32_t>(),
          .conventions = j.at("conventions").get<std::uint32_t>(),
          .ops = j.at("ops").get<std::uint32_t>(),
          .flags = j.at("flags").get<std::uint32_t>(),
          .attention_pes = j.at("attention_pes").get<std::uint32_t>(),
          .attention_forms = j.at("attention_forms").get<std::uint32_t>(),
          .abi_revision = j.at("abi_revision").get<std::uint32_t>()};
}

std::optional<int> abi_op(Op op) {
  switch (op) {
    case Op::sinusoidal_table:
      return PECHECK_OP_SINUSOIDAL_TABLE;
    case Op::learned_add:
      return PECHECK_OP_LEARNED_ADD;
    case Op::rope_apply:
      return PECHECK_OP_ROPE_APPLY;
    case Op::alibi_bias:
      return PECHECK_OP_ALIBI_BIAS;
    case Op::shaw_scores:
      return PECHECK_OP_SHAW_SCORES;
    case Op::t5_bias:
      return PECHECK_OP_T5_BIAS;
    case Op::attention:
      return PECHECK_OP_ATTENTION;
    case Op::mrope_apply:
      return PECHECK_OP_MROPE_APPLY;
    case Op::sinusoidal2d_table:
    case Op::rope2d_apply:
    case Op::relative_bias_2d:
      return std::nullopt;
  }
  return std::nullopt;
}

std::optional<std::string> declined(const Declaration& d, Op op, DType dt) {
  const auto bit = abi_op(op);
  if (!bit) return fmt::format("plugin ABI {} has no {}", PECHECK_ABI_VERSION, op_name(op));
  if (!(d.ops >> *bit & 1u)) return fmt::format("{} does not offer {}", d.name, op_name(op));
  if (!(d.dtypes >> static_cast<int>(dt) & 1u)) return fmt::format("{} does not store {}", d.name, dtype_name(dt));
  return std::nullopt;
}

Backend as_backend(const Declaration& d) {
  return {d.name, fmt::format("plugin {}", d.path),
          [] {
            return Availability{true, ""};
          },
          [path = d.path] { return make_encoder(path); }};
}

}  // namespace pecheck::plugin
