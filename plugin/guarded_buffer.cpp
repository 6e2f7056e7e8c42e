#include "plugin/guarded_buffer.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <new>

#include "harness/case_journal.hpp"

namespace pecheck::plugin {

namespace {

constexpr std::byte kSentinel{0xA5};
constexpr std::size_t kAlign = 64;  // what SIMD code may assume of a tensor's start

/// What the signal handler knows of each live buffer; written outside the handler only.
struct Region {
  const std::byte* map_begin;
  const std::byte* inner_begin;
  const std::byte* data_begin;
  const std::byte* data_end;
  const std::byte* inner_end;
  const std::byte* map_end;
  bool sealed;
  char name[48];
};
constexpr int kSlots = 64;
Region g_regions[kSlots];
volatile sig_atomic_t g_used[kSlots];

/// Appends text at *p (bounded by end), for the signal handler: no allocation, no stdio.
void put(char*& p, char* end, const char* text) {
  while (*text && p + 1 < end) *p++ = *text++;
  *p = '\0';
}

void put_number(char*& p, char* end, std::size_t n) {
  char digits[24];
  int k = 0;
  do digits[k++] = static_cast<char>('0' + n % 10);
  while ((n /= 10) != 0);
  while (k > 0 && p + 1 < end) *p++ = digits[--k];
  *p = '\0';
}

void name_fault(int, siginfo_t* info, void*) {
  const auto* addr = static_cast<const std::byte*>(info->si_addr);
  for (int i = 0; i < kSlots; ++i) {
    if (!g_used[i]) continue;
    const Region& r = g_regions[i];
    if (addr < r.map_begin || addr >= r.map_end) continue;
    char text[256];
    char* p = text;
    char* const end = text + sizeof text;
    if (addr >= r.inner_end) {
      put(p, end, "out-of-bounds access ");
      put_number(p, end, static_cast<std::size_t>(addr - r.data_end) + 1);
      put(p, end, " bytes past the end of ");
    } else if (addr < r.inner_begin) {
      put(p, end, "out-of-bounds access ");
      put_number(p, end, static_cast<std::size_t>(r.data_begin - addr));
      put(p, end, " bytes before the start of ");
    } else {
      put(p, end, r.sealed ? "write to the read-only input " : "fault inside ");
    }
    put(p, end, r.name);
    put(p, end, " (guard page)");
    journal::note_fault(text);
    return;  // SA_RESETHAND: the access repeats and the default action ends the child
  }
}

int claim_slot() {
  for (int i = 0; i < kSlots; ++i)
    if (!g_used[i]) return i;
  return -1;  // more live buffers than slots: still guarded, just not named
}

}  // namespace

void install_fault_namer() {
  static bool installed = false;
  if (installed) return;
  struct sigaction sa {};
  sa.sa_sigaction = name_fault;
  sa.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGSEGV, &sa, nullptr);
  ::sigaction(SIGBUS, &sa, nullptr);
  installed = true;
}

GuardedBuffer::GuardedBuffer(std::string name, std::size_t bytes) : name_(std::move(name)), bytes_(bytes) {
  page_ = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t padded = (bytes + kAlign - 1) / kAlign * kAlign;
  const std::size_t inner = std::max<std::size_t>(1, (padded + page_ - 1) / page_) * page_;
  map_bytes_ = inner + 2 * page_;
  void* m = ::mmap(nullptr, map_bytes_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) throw std::bad_alloc();
  map_ = static_cast<std::byte*>(m);
  inner_begin_ = map_ + page_;
  inner_end_ = inner_begin_ + inner;
  if (::mprotect(inner_begin_, inner, PROT_READ | PROT_WRITE) != 0) {
    ::munmap(map_, map_bytes_);
    throw std::bad_alloc();
  }
  data_ = inner_end_ - padded;
  std::memset(inner_begin_, static_cast<int>(kSentinel), inner);
  std::memset(data_, 0, bytes_);
  slot_ = claim_slot();
  if (slot_ >= 0) {
    Region& r = g_regions[slot_];
    r = {map_, inner_begin_, data_, data_ + bytes_, inner_end_, map_ + map_bytes_, false, {}};
    std::snprintf(r.name, sizeof r.name, "%s", name_.c_str());
    g_used[slot_] = 1;
  }
}

GuardedBuffer::~GuardedBuffer() {
  if (slot_ >= 0) g_used[slot_] = 0;
  ::munmap(map_, map_bytes_);
}

void GuardedBuffer::seal() {
  ::mprotect(inner_begin_, static_cast<std::size_t>(inner_end_ - inner_begin_), PROT_READ);
  if (slot_ >= 0) g_regions[slot_].sealed = true;
}

std::string GuardedBuffer::damaged_sentinel() const {
  for (const std::byte* p = data_ - 1; p >= inner_begin_; --p)  // nearest the data first
    if (*p != kSentinel)
      return fmt::format("{} bytes before the start of {}", data_ - p, name_);  // 1: the byte just before
  for (const std::byte* p = data_ + bytes_; p < inner_end_; ++p)
    if (*p != kSentinel)
      return fmt::format("{} bytes past the end of {}", p - (data_ + bytes_) + 1, name_);  // 1: the byte just after
  return {};
}

}  // namespace pecheck::plugin
