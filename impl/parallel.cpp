// A pool of worker threads for impl/parallel.hpp: started on first use, grown when more threads
// are asked for, never destroyed (a forked child and the exit path would otherwise join threads
// that are not there).
#include "impl/parallel.hpp"

#include <fmt/format.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <vector>

namespace pecheck::parallel {

namespace {

int cpus_available() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

int from_environment() {
  const char* text = std::getenv("PECHECK_THREADS");
  if (text == nullptr || *text == '\0') return 0;
  const std::string_view s(text);
  int n = 0;
  const auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (error != std::errc{} || end != s.data() + s.size() || n < 1 || n > kMaxThreads)
    throw std::invalid_argument(
        fmt::format("PECHECK_THREADS must be a whole number from 1 to {}, got '{}'", kMaxThreads, s));
  return n;
}

std::atomic<int> g_asked{0};
std::atomic<std::size_t> g_min_range_work{kDefaultMinRangeWork};

/// Set on a thread while it runs a range: a nested call stays on it.
thread_local bool t_inside_range = false;

class Pool {
 public:
  /// Runs range(i) for every i < ranges on the caller and up to `helpers` workers.
  void run(std::size_t ranges, std::size_t helpers, const std::function<void(std::size_t)>& range) {
    std::unique_lock lock(m_);
    // A new worker starts from the generation before this job's, so it takes part in this one.
    while (workers_.size() < helpers) workers_.emplace_back([this, seen = generation_] { work(seen); });
    job_ = &range;
    ranges_ = ranges;
    next_ = 0;
    finished_ = 0;
    ++generation_;
    wake_.notify_all();
    take_ranges(lock);
    done_.wait(lock, [&] { return finished_ == ranges_; });
    job_ = nullptr;
  }

  /// Held by the one call using the pool; another thread's call runs alone instead of waiting.
  std::mutex busy;

 private:
  void take_ranges(std::unique_lock<std::mutex>& lock) {
    while (next_ < ranges_) {
      const std::size_t i = next_++;
      const std::function<void(std::size_t)>& job = *job_;
      lock.unlock();
      job(i);  // never throws: for_ranges catches inside
      lock.lock();
      if (++finished_ == ranges_) done_.notify_all();
    }
  }

  void work(std::uint64_t seen) {
    t_inside_range = true;
    std::unique_lock lock(m_);
    for (;;) {
      wake_.wait(lock, [&] { return generation_ != seen; });
      seen = generation_;
      if (job_ != nullptr) take_ranges(lock);
    }
  }

  std::mutex m_;
  std::condition_variable wake_, done_;
  const std::function<void(std::size_t)>* job_ = nullptr;
  std::size_t ranges_ = 0, next_ = 0, finished_ = 0;
  std::uint64_t generation_ = 0;
  std::vector<std::thread> workers_;
};

/// This process's pool: a child forked while a parent's pool existed builds its own.
Pool& pool() {
  static std::mutex guard;
  static Pool* current = nullptr;
  static pid_t owner = 0;
  std::lock_guard lock(guard);
  if (current == nullptr || owner != ::getpid()) {
    current = new Pool;  // the parent's pool, if any, is left as it is: its threads are not here
    owner = ::getpid();
  }
  return *current;
}

}  // namespace

int threads() {
  if (const int asked = g_asked.load(); asked > 0) return asked;
  static const int from_env = from_environment();
  static const int cpus = cpus_available();
  return std::min(from_env > 0 ? from_env : cpus, kMaxThreads);
}

void set_threads(int n) {
  if (n < 0 || n > kMaxThreads)
    throw std::invalid_argument(
        fmt::format("thread count must be from 1 to {} (0: the default), got {}", kMaxThreads, n));
  g_asked.store(n);
}

void set_min_range_work(std::size_t work) { g_min_range_work.store(std::max<std::size_t>(work, 1)); }
std::size_t min_range_work() { return g_min_range_work.load(); }

void for_ranges(std::size_t items, std::size_t work_per_item, RangeBody body) {
  if (items == 0) return;
  const std::size_t per_item = std::max<std::size_t>(work_per_item, 1);
  const std::size_t by_work =
      per_item > SIZE_MAX / items ? items : std::max<std::size_t>(items * per_item / min_range_work(), 1);
  const std::size_t ranges = std::min({static_cast<std::size_t>(threads()), items, by_work});
  if (ranges <= 1 || t_inside_range) return body(0, items);
  Pool& p = pool();
  std::unique_lock busy(p.busy, std::try_to_lock);
  if (!busy.owns_lock()) return body(0, items);

  std::exception_ptr first;
  std::mutex first_guard;
  const std::function<void(std::size_t)> range = [&](std::size_t i) {
    const bool was_inside = t_inside_range;
    t_inside_range = true;
    try {
      body(items * i / ranges, items * (i + 1) / ranges);
    } catch (...) {
      std::lock_guard lock(first_guard);
      if (!first) first = std::current_exception();
    }
    t_inside_range = was_inside;
  };
  p.run(ranges, ranges - 1, range);
  if (first) std::rethrow_exception(first);
}

}  // namespace pecheck::parallel
