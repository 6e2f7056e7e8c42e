// Names the CPU in every benchmark report: Google Benchmark's context gives the core count, clock
// and caches but not the model, and figures from a Zen 1 and a Zen 4 differ by integer factors.
// The model and family come from CPUID, the ISAs the kernel sets use from their own detection; all
// of it lands in the JSON's "context" (build/bench.json) and in bench/ratio_table.py's header.
#include <benchmark/benchmark.h>
#include <cpuid.h>

#include <cstring>
#include <string>

#include "impl/avx2/kernels.hpp"
#include "impl/avx512/kernels.hpp"

namespace pecheck::bench {
namespace {

/// The brand string of CPUID leaves 0x80000002-4, e.g. "AMD EPYC 9B14 96-Core Processor".
std::string cpu_model() {
  unsigned regs[12] = {};
  for (unsigned leaf = 0; leaf < 3; ++leaf)
    if (!__get_cpuid(0x80000002 + leaf, &regs[4 * leaf], &regs[4 * leaf + 1], &regs[4 * leaf + 2], &regs[4 * leaf + 3]))
      return "unknown";
  char brand[49] = {};
  std::memcpy(brand, regs, 48);
  std::string s(brand);
  const auto first = s.find_first_not_of(' ');
  return first == std::string::npos ? "unknown" : s.substr(first, s.find_last_not_of(' ') - first + 1);
}

/// Family and model as lscpu prints them (base plus extended fields of CPUID leaf 1).
std::string family_and_model() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return "unknown";
  unsigned family = (a >> 8) & 0xf, model = (a >> 4) & 0xf;
  if (family == 0xf) family += (a >> 20) & 0xff;
  if (family == 0x6 || family >= 0xf) model += ((a >> 16) & 0xf) << 4;
  return "family " + std::to_string(family) + ", model " + std::to_string(model);
}

bool has_avx512f() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b >> 16 & 1u);
}

/// Runs before main: the custom context must be set before the benchmarks run.
const bool registered = [] {
  const avx2::Cpu cpu = avx2::availability();
  benchmark::AddCustomContext("cpu_model", cpu_model());
  benchmark::AddCustomContext("cpu_family", family_and_model());
  benchmark::AddCustomContext("kernel_isa", cpu.ok ? "avx2 fma f16c" : "none (" + cpu.reason + ")");
  benchmark::AddCustomContext("cpu_avx512f", has_avx512f() ? "present" : "absent");
  const avx512::Cpu wide = avx512::availability();
  benchmark::AddCustomContext(
      "avx512_kernels", wide.ok ? std::string("f bw vl dq") + (avx512::has_bf16_instructions() ? " bf16" : " (no bf16)")
                                : "skipped (" + wide.reason + ")");
  return true;
}();

}  // namespace
}  // namespace pecheck::bench
