// One kernel call split across threads: contiguous ranges of independent items (the tokens of a
// RoPE or sinusoid call, the query heads of an attention call), each computed by the same code
// whatever range it falls in, so the output is bitwise the same at every thread count.
#pragma once

#include <concepts>
#include <cstddef>
#include <type_traits>

namespace pecheck::parallel {

/// Threads a kernel call may use: set_threads(n) when n > 0, else PECHECK_THREADS (a whole number
/// from 1 to kMaxThreads, read once), else the CPUs this process may run on. Throws
/// std::invalid_argument for a malformed PECHECK_THREADS.
int threads();

inline constexpr int kMaxThreads = 256;

/// n in [1, kMaxThreads] fixes the count for every later call; 0 returns to the default. Throws
/// std::invalid_argument otherwise.
void set_threads(int n);

/// The least work (in the caller's units: elements a call touches, say) worth a range of its own;
/// a call with less runs on the calling thread alone, so a decode step never waits on a wake-up.
inline constexpr std::size_t kDefaultMinRangeWork = std::size_t{1} << 16;

/// For tests: 1 splits every call of more than one item, so ragged splits of small calls are met.
void set_min_range_work(std::size_t work);
std::size_t min_range_work();

/// A borrowed body(begin, end): no allocation, so a call that stays on one thread costs nothing
/// beyond the call itself (a decode step allocates nothing). Valid while the callable it names is.
class RangeBody {
 public:
  template <class F>
  requires(!std::same_as<std::remove_cvref_t<F>, RangeBody> && std::invocable<F&, std::size_t, std::size_t>)
      RangeBody(F&& f)  // NOLINT(google-explicit-constructor): passed as a lambda at every call
      : object_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* o, std::size_t b, std::size_t e) { (*static_cast<std::remove_reference_t<F>*>(o))(b, e); }) {}
  void operator()(std::size_t begin, std::size_t end) const { call_(object_, begin, end); }

 private:
  void* object_;
  void (*call_)(void*, std::size_t, std::size_t);
};

/// Runs body(begin, end) over contiguous ranges that cover [0, items), on up to threads() threads
/// (the caller runs one range itself), with at most items * work_per_item / min_range_work()
/// ranges. Returns once every range has finished; rethrows the first exception one threw. A call
/// made from inside a range, or while another thread's call holds the pool, runs on the calling
/// thread alone. A forked child builds a pool of its own (its parent's threads do not exist there).
void for_ranges(std::size_t items, std::size_t work_per_item, RangeBody body);

}  // namespace pecheck::parallel
