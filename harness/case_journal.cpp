#include "harness/case_journal.hpp"

#include <sys/mman.h>

#include <cstring>
#include <new>

namespace pecheck::journal {

namespace {

struct Layout {
  char last_case[12288];
  char fault[4096];
};

Layout* g_active = nullptr;

void copy_bounded(char* dst, std::size_t capacity, const char* src, std::size_t n) {
  if (n >= capacity) n = capacity - 1;
  for (std::size_t i = 0; i < n; ++i) dst[i] = src[i];
  dst[n] = '\0';
}

std::string read_bounded(const char* src, std::size_t capacity) { return std::string(src, strnlen(src, capacity)); }

}  // namespace

bool active() { return g_active != nullptr; }

void note_case(std::string_view description) {
  if (g_active) copy_bounded(g_active->last_case, sizeof g_active->last_case, description.data(), description.size());
}

void note_fault(const char* text) {
  if (!g_active) return;
  std::size_t n = 0;
  while (text[n] != '\0') ++n;  // not strlen: this runs in signal handlers too
  copy_bounded(g_active->fault, sizeof g_active->fault, text, n);
}

Page::Page() {
  memory_ = ::mmap(nullptr, sizeof(Layout), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (memory_ == MAP_FAILED) throw std::bad_alloc();
  std::memset(memory_, 0, sizeof(Layout));
}

Page::~Page() { ::munmap(memory_, sizeof(Layout)); }

void Page::activate() const { g_active = static_cast<Layout*>(memory_); }

std::string Page::last_case() const {
  const auto* l = static_cast<const Layout*>(memory_);
  return read_bounded(l->last_case, sizeof l->last_case);
}

std::string Page::fault() const {
  const auto* l = static_cast<const Layout*>(memory_);
  return read_bounded(l->fault, sizeof l->fault);
}

}  // namespace pecheck::journal
