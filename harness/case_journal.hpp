// The case journal: a page of memory shared between an isolated child and its parent, where the
// child notes the case it is about to run and any memory fault it detects, so that a crash is
// reported with the case that triggered it.
#pragma once

#include <string>
#include <string_view>

namespace pecheck::journal {

/// Whether this process is an isolated child with a journal to write to.
bool active();
/// Notes the case about to run (truncated to the page); a no-op when not active.
void note_case(std::string_view description);
/// Notes what went wrong (an out-of-bounds write, a guard-page hit). Async-signal-safe.
void note_fault(const char* text);

/// The shared page, made by the parent before fork.
class Page {
 public:
  Page();
  ~Page();
  Page(const Page&) = delete;
  Page& operator=(const Page&) = delete;
  /// Called in the child: note_case and note_fault write here from now on.
  void activate() const;
  std::string last_case() const;
  std::string fault() const;

 private:
  void* memory_;
};

}  // namespace pecheck::journal
