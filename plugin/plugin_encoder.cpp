// A plugin as an encoder under test: each call copies its tensors into guarded storage of the
// dtype, calls the entry point, and checks what came back before anything is believed: the
// sentinels around every buffer, the status, and that every output element was written.
#include <fmt/format.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <vector>

#include "harness/case_journal.hpp"
#include "plugin/guarded_buffer.hpp"
#include "plugin/plugin_host.hpp"
#include "spec/half_bits.hpp"

namespace pecheck::plugin {

namespace {

/// RoPE's spec as the ABI spells it (its LongRoPE lists point into `s`, which must outlive it).
pecheck_rope_spec abi_rope_spec(const RopeSpec& s) {
  const RopeScaling& r = s.scaling;
  const bool longrope = r.kind == RopeScalingKind::longrope;
  return {.head_dim = s.head_dim,
          .rotary_dim = s.rotary_dim,
          .layout = s.layout == RopeLayout::interleaved ? PECHECK_ROPE_INTERLEAVED : PECHECK_ROPE_HALF_SPLIT,
          .scaling = static_cast<std::int32_t>(r.kind),  // the ABI numbers them in our order
          .base = s.base,
          .factor = r.factor,
          .original_max_position = r.original_max_position,
          .seq_len = r.seq_len,
          .beta_fast = r.beta_fast,
          .beta_slow = r.beta_slow,
          .low_freq_factor = r.low_freq_factor,
          .high_freq_factor = r.high_freq_factor,
          .short_factor = longrope ? r.short_factor.data() : nullptr,
          .long_factor = longrope ? r.long_factor.data() : nullptr,
          .attention_factor = r.attention_factor};
}

thread_local std::string g_message;  // the plugin's explanation of its last status

void set_message(const char* m) {
  g_message = m ? m : "";
  for (char& c : g_message)
    if (c == '\n' || c == '\r') c = ' ';  // one line, whatever the plugin wrote
}

const pecheck_host kHost{set_message};

int abi_dtype(DType dt) { return dt == DType::f32 ? PECHECK_F32 : dt == DType::bf16 ? PECHECK_BF16 : PECHECK_F16; }
std::size_t item_size(DType dt) { return dt == DType::f32 ? 4 : 2; }

/// A NaN pattern no arithmetic produces: an output element still holding it was never written.
std::uint32_t poison_bits(DType dt) { return dt == DType::f32 ? 0x7FA5A5A5u : dt == DType::bf16 ? 0x7FA5u : 0x7D5Au; }

/// A memory fault seen after the call: in an isolated child it ends the child, so the run
/// reports a crash with the case; elsewhere (a unit test) it throws.
[[noreturn]] void fault(const std::string& what) {
  if (journal::active()) {
    journal::note_fault(what.c_str());
    std::fflush(nullptr);
    _exit(3);
  }
  throw std::runtime_error(what);
}

/// The buffers of one call, fenced, with the checks after it.
class Call {
 public:
  Call(std::string plugin, DType dt, std::string what) : plugin_(std::move(plugin)), dt_(dt), what_(std::move(what)) {
    g_message.clear();
  }

  pecheck_tensor input(std::string name, std::span<const float> values, std::vector<std::int64_t> shape) {
    Slot& s = add(std::move(name), std::move(shape), false);
    encode(s, values);
    s.buffer->seal();
    return s.tensor;
  }
  pecheck_tensor in_out(std::string name, std::span<const float> values, std::vector<std::int64_t> shape) {
    Slot& s = add(std::move(name), std::move(shape), false);
    encode(s, values);
    return s.tensor;
  }
  pecheck_tensor output(std::string name, std::vector<std::int64_t> shape) {
    Slot& s = add(std::move(name), std::move(shape), true);
    const std::uint32_t bits = poison_bits(dt_);
    for (std::size_t i = 0; i < s.elements; ++i)
      std::memcpy(s.buffer->data() + i * item_size(dt_), &bits, item_size(dt_));
    return s.tensor;
  }
  /// The tensor as the call declares it (interface/operations.hpp): an input sealed, an in-place
  /// one writable, an output poisoned until written.
  pecheck_tensor tensor(const TensorArg& t) {
    std::vector<std::int64_t> shape(t.shape.begin(), t.shape.end());
    if (t.role == Role::output) return output(std::string(t.name), std::move(shape));
    if (t.role == Role::in_place) return in_out(std::string(t.name), t.values, std::move(shape));
    return input(std::string(t.name), t.values, std::move(shape));
  }
  const std::int64_t* positions(std::span<const std::int64_t> p) {
    positions_ = std::make_unique<GuardedBuffer>("positions", p.size_bytes());
    if (!p.empty()) std::memcpy(positions_->data(), p.data(), p.size_bytes());
    positions_->seal();
    return reinterpret_cast<const std::int64_t*>(positions_->data());
  }

  /// Checks the fences, the status and the outputs; then copies tensor `index` into out.
  void finish(pecheck_status status, bool invalid_is_out_of_range = false) {
    for (const auto& s : slots_)
      if (auto d = s.buffer->damaged_sentinel(); !d.empty())
        fault(fmt::format("out-of-bounds write: sentinel overwritten {} by {}", d, what_));
    if (positions_)
      if (auto d = positions_->damaged_sentinel(); !d.empty())
        fault(fmt::format("out-of-bounds write: sentinel overwritten {} by {}", d, what_));
    const std::string said = g_message.empty() ? "" : ": " + g_message;
    switch (status) {
      case PECHECK_OK:
        break;
      case PECHECK_UNSUPPORTED:
        throw Unsupported(fmt::format("{} does not offer {}{}", plugin_, what_, said));
      case PECHECK_INVALID:
        if (invalid_is_out_of_range) throw std::out_of_range(fmt::format("{} refused {}{}", plugin_, what_, said));
        throw std::invalid_argument(fmt::format("{} refused {} as invalid{}", plugin_, what_, said));
      case PECHECK_ERROR:
        throw std::runtime_error(fmt::format("{} returned ERROR for {}{}", plugin_, what_, said));
      default:
        throw std::runtime_error(
            fmt::format("{} returned status {}, which ABI {} does not define", plugin_, status, PECHECK_ABI_VERSION));
    }
    const std::uint32_t bits = poison_bits(dt_);
    for (const auto& s : slots_) {
      if (!s.output) continue;
      for (std::size_t i = 0; i < s.elements; ++i) {
        std::uint32_t got = 0;
        std::memcpy(&got, s.buffer->data() + i * item_size(dt_), item_size(dt_));
        if (got == bits)
          throw std::runtime_error(
              fmt::format("{} returned OK but left {}[{}] of {} unwritten", plugin_, s.buffer->name(), i, what_));
      }
    }
  }

  /// Decodes tensor `index` (in the order added) into out.
  void read(std::size_t index, std::span<float> out) const {
    const Slot& s = slots_.at(index);
    const std::byte* p = s.buffer->data();
    for (std::size_t i = 0; i < s.elements; ++i) {
      if (dt_ == DType::f32) {
        std::memcpy(&out[i], p + 4 * i, 4);
      } else {
        std::uint16_t b;
        std::memcpy(&b, p + 2 * i, 2);
        out[i] = static_cast<float>(dt_ == DType::bf16 ? bf16_to_double(b) : f16_to_double(b));
      }
    }
  }

 private:
  struct Slot {
    std::unique_ptr<GuardedBuffer> buffer;
    pecheck_tensor tensor;
    std::size_t elements;
    bool output;
  };

  Slot& add(std::string name, std::vector<std::int64_t> shape, bool output) {
    if (shape.size() > PECHECK_MAX_RANK) throw std::logic_error("tensor rank above PECHECK_MAX_RANK");
    std::size_t elements = 1;
    for (auto e : shape) elements *= static_cast<std::size_t>(e);
    Slot s{std::make_unique<GuardedBuffer>(std::move(name), elements * item_size(dt_)), {}, elements, output};
    s.tensor.data = s.buffer->data();
    s.tensor.dtype = abi_dtype(dt_);
    s.tensor.rank = static_cast<std::int32_t>(shape.size());
    std::int64_t stride = 1;  // dense, row-major
    for (int k = static_cast<int>(shape.size()) - 1; k >= 0; --k) {
      s.tensor.shape[k] = shape[static_cast<std::size_t>(k)];
      s.tensor.strides[k] = stride;
      stride *= shape[static_cast<std::size_t>(k)];
    }
    slots_.push_back(std::move(s));
    return slots_.back();
  }

  void encode(Slot& s, std::span<const float> values) {
    std::byte* p = s.buffer->data();
    for (std::size_t i = 0; i < s.elements; ++i) {
      if (dt_ == DType::f32) {
        std::memcpy(p + 4 * i, &values[i], 4);
      } else {
        const std::uint16_t b = dt_ == DType::bf16 ? double_to_bf16(values[i]) : double_to_f16(values[i]);
        std::memcpy(p + 2 * i, &b, 2);
      }
    }
  }

  std::string plugin_;
  DType dt_;
  std::string what_;
  std::vector<Slot> slots_;
  std::unique_ptr<GuardedBuffer> positions_;
};

class PluginEncoder final : public Encoder {
 public:
  explicit PluginEncoder(const pecheck_plugin& p)
      : p_(p), decl_(declaration_of("", p)), declared_(attention_pins(decl_)) {
    install_fault_namer();
  }

  std::string name() const override { return decl_.name; }

  Support supports(Op op, DType dt) const override {
    if (auto why = declined(decl_, op, dt)) return {false, std::move(*why)};
    return {};
  }

  void run(const SinusoidalTable& request) override {
    const auto& [s, dt, positions, out] = request;
    request.check();
    const pecheck_sinusoidal_spec c{
        .d_model = s.d_model,
        .layout = s.layout == SinusoidalLayout::interleaved ? PECHECK_SINUSOIDAL_INTERLEAVED
                                                            : PECHECK_SINUSOIDAL_CONCATENATED,
        .frequencies =
            s.frequencies == SinusoidalFrequencies::vaswani ? PECHECK_FREQUENCIES_VASWANI : PECHECK_FREQUENCIES_FAIRSEQ,
        .base = s.base,
        .padding_idx = s.padding_idx};
    Call call(decl_.name, dt, s.describe());
    const auto* pos = call.positions(positions);
    const auto t = call.tensor(tensor_named(request.tensors(), "out"));
    call.finish(p_.sinusoidal_table(&kHost, &c, pos, t));
    call.read(0, out);
  }

  void run(const LearnedAdd& request) override {
    const auto& [s, dt, table, positions, x] = request;
    request.check();
    const pecheck_learned_spec c{s.max_len, s.d_model};
    Call call(decl_.name, dt, s.describe());
    const auto* pos = call.positions(positions);
    const auto declared = request.tensors();
    const auto xt = call.tensor(tensor_named(declared, "x"));
    const auto tt = call.tensor(tensor_named(declared, "table"));
    call.finish(p_.learned_add(&kHost, &c, tt, pos, xt), true);
    call.read(0, x);
  }

  void run(const RopeApply& request) override {
    const auto& [s, dt, heads, positions, x] = request;
    request.check();
    const RopeScaling& r = s.scaling;
    if (r.kind == RopeScalingKind::longrope && abi_revision(p_) < 1)
      throw Unsupported(
          fmt::format("{} does not offer LongRoPE (its descriptor's abi_revision is below 1)", decl_.name));
    const pecheck_rope_spec c = abi_rope_spec(s);
    Call call(decl_.name, dt, s.describe());
    const auto* pos = call.positions(positions);
    const auto xt = call.tensor(tensor_named(request.tensors(), "x"));
    call.finish(p_.rope_apply(&kHost, &c, pos, xt));
    call.read(0, x);
  }

  void run(const AlibiBias& request) override {
    const auto& [s, dt, positions, out] = request;
    request.check();
    const pecheck_alibi_spec c{s.heads, s.causal ? 1 : 0};
    Call call(decl_.name, dt, s.describe());
    const auto* pos = call.positions(positions);
    const auto t = call.tensor(tensor_named(request.tensors(), "out"));
    call.finish(p_.alibi_bias(&kHost, &c, pos, t));
    call.read(0, out);
  }

  void run(const ShawScores& request) override {
    const auto& [s, dt, q, k, table, positions, out] = request;
    request.check();
    const pecheck_shaw_spec c{s.max_distance, s.head_dim};
    Call call(decl_.name, dt, s.describe());
    const auto* pos = call.positions(positions);
    const auto declared = request.tensors();
    const auto ot = call.tensor(tensor_named(declared, "out"));
    const auto qt = call.tensor(tensor_named(declared, "q")), kt = call.tensor(tensor_named(declared, "k"));
    const auto rt = call.tensor(tensor_named(declared, "table"));
    call.finish(p_.shaw_scores(&kHost, &c, qt, kt, rt, pos, ot));
    call.read(0, out);
  }

  void run(const T5Bias& request) override {
    const auto& [s, dt, table, positions, out] = request;
    request.check();
    const pecheck_t5_spec c{s.heads, s.num_buckets, s.max_distance, s.bidirectional ? 1 : 0};
    Call call(decl_.name, dt, s.describe());
    const auto* pos = call.positions(positions);
    const auto declared = request.tensors();
    const auto ot = call.tensor(tensor_named(declared, "out"));
    const auto tt = call.tensor(tensor_named(declared, "table"));
    call.finish(p_.t5_bias(&kHost, &c, tt, pos, ot));
    call.read(0, out);
  }

  void run(const Attention& request) override {
    const auto& [s, dt, positions, q, k, v, pe_table, out] = request;
    request.check();
    // Grouped-query, windowed and decode cases need revision 2's fields: a plugin built before
    // declines them (discarded; its other cases still run) and never reads past what it knows.
    const std::size_t n = positions.size(), nq = s.query_count(n);
    if ((s.kv_count() != s.heads || s.window > 0 || nq != n || s.rope_extended()) && abi_revision(p_) < 2)
      throw Unsupported(
          fmt::format("{} does not offer grouped-query, sliding-window, decode or partial/scaled RoPE "
                      "attention (its descriptor's abi_revision is below 2)",
                      decl_.name));
    if (s.pe == AttentionPE::t5 && abi_revision(p_) < 3)
      throw Unsupported(fmt::format(
          "{} does not offer T5's bias inside attention (its descriptor's abi_revision is below 3)", decl_.name));
    // A call outside what the descriptor declares (a property's second call, a decode step say) is
    // declined, naming what is missing: the plugin said it does not take it.
    if (declared_)
      if (const std::optional<std::string> why = declared_->refuses(s))
        throw Unsupported(fmt::format("{}: the call would {}", decl_.name, *why));
    const RopeSpec rope = s.rope();  // outlives the call: its LongRoPE lists are read through `c.rope`
    const pecheck_rope_spec rope_c = abi_rope_spec(rope);
    const pecheck_t5_spec t5_c{s.heads, s.t5_buckets, s.t5_max_distance, s.t5_bidirectional ? 1 : 0};
    const pecheck_attention_spec c{
        .heads = s.heads,
        .head_dim = s.head_dim,
        .causal = s.causal ? 1 : 0,
        .pe = static_cast<std::int32_t>(s.pe),  // the ABI numbers them in our order
        .scale = s.effective_scale(),
        .pe_base = s.pe_base,
        .rope_layout = s.rope_layout == RopeLayout::interleaved ? PECHECK_ROPE_INTERLEAVED : PECHECK_ROPE_HALF_SPLIT,
        .shaw_max_distance = s.shaw_max_distance,
        .kv_heads = s.kv_count(),
        .window = s.window,
        .queries = static_cast<std::int32_t>(nq),
        .reserved = 0,
        .rope = s.pe == AttentionPE::rope ? &rope_c : nullptr,
        .t5 = s.pe == AttentionPE::t5 ? &t5_c : nullptr};
    Call call(decl_.name, dt, s.describe());
    const auto* pos = call.positions(positions);
    const auto declared = request.tensors();
    const auto ot = call.tensor(tensor_named(declared, "out"));
    const auto qt = call.tensor(tensor_named(declared, "q")), kt = call.tensor(tensor_named(declared, "k")),
               vt = call.tensor(tensor_named(declared, "v"));
    // Declared only with Shaw's or T5's PE; the ABI passes a tensor every time (no rows otherwise).
    const auto rt = s.pe == AttentionPE::shaw ? call.tensor(tensor_named(declared, "shaw_table"))
                    : s.pe == AttentionPE::t5 ? call.tensor(tensor_named(declared, "t5_table"))
                                              : call.input("shaw_table", pe_table, {0, s.head_dim});
    call.finish(p_.attention(&kHost, &c, pos, qt, kt, vt, rt, ot));
    call.read(0, out);
  }

  void run(const MropeApply& request) override {
    if (!mrope_entry(p_)) decline(*this, Op::mrope_apply);
    request.check();
    const MropeSpec& s = request.spec;
    const pecheck_mrope_spec c{
        .head_dim = s.head_dim,
        .layout = s.layout == RopeLayout::interleaved ? PECHECK_ROPE_INTERLEAVED : PECHECK_ROPE_HALF_SPLIT,
        .assignment =
            s.assignment == MropeAssignment::interleaved ? PECHECK_MROPE_INTERLEAVED : PECHECK_MROPE_SECTIONED,
        .mrope_section = {s.mrope_section[0], s.mrope_section[1], s.mrope_section[2]},
        .base = s.base};
    // HF's position_ids (3, n): the temporal, height and width rows one after the other.
    std::vector<std::int64_t> rows(request.temporal.begin(), request.temporal.end());
    rows.insert(rows.end(), request.height.begin(), request.height.end());
    rows.insert(rows.end(), request.width.begin(), request.width.end());
    Call call(decl_.name, request.dtype, s.describe());
    const auto* pos = call.positions(rows);
    const auto xt = call.tensor(tensor_named(request.tensors(), "x"));
    call.finish(mrope_entry(p_)(&kHost, &c, pos, xt));
    call.read(0, request.x);
  }

  // The ABI has no 2-D operation: declined by name, so a plugin is never checked on them.
  void run(const Sinusoidal2dTable&) override { decline(*this, Op::sinusoidal2d_table); }
  void run(const Rope2dApply&) override { decline(*this, Op::rope2d_apply); }
  void run(const RelativeBias2d&) override { decline(*this, Op::relative_bias_2d); }

 private:
  const pecheck_plugin& p_;
  Declaration decl_;
  std::shared_ptr<const Pins> declared_;  ///< what its attention declares (read once), or null
};

static_assert(PECHECK_SCALING_LONGROPE == static_cast<int>(RopeScalingKind::longrope));
static_assert(PECHECK_PE_SHAW == static_cast<int>(AttentionPE::shaw) &&
              PECHECK_PE_T5 == static_cast<int>(AttentionPE::t5));

}  // namespace

std::unique_ptr<Encoder> make_encoder(const std::string& path) {
  return std::make_unique<PluginEncoder>(*open_plugin(path));
}

}  // namespace pecheck::plugin
