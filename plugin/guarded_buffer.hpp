// Memory for the tensors a plugin reads and writes, fenced so that a stray access is caught:
// each buffer ends 64-byte aligned against a PROT_NONE guard page and starts after another, the
// slack between data and guards holds sentinel bytes checked after the call, and inputs are
// sealed read-only. A fault on a guard or on a sealed input is named by a SIGSEGV handler.
#pragma once

#include <cstddef>
#include <string>

namespace pecheck::plugin {

class GuardedBuffer {
 public:
  /// bytes of zeroed data named `name` (reported in faults), between guard pages.
  GuardedBuffer(std::string name, std::size_t bytes);
  ~GuardedBuffer();
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;

  std::byte* data() { return data_; }
  const std::byte* data() const { return data_; }
  std::size_t size() const { return bytes_; }
  const std::string& name() const { return name_; }

  /// Makes the data read-only: an input the plugin must not write.
  void seal();
  /// Empty when every sentinel byte is intact, else where the first overwritten one is
  /// ("3 bytes past the end of out").
  std::string damaged_sentinel() const;

 private:
  std::string name_;
  std::size_t bytes_;
  std::byte* map_ = nullptr;
  std::size_t map_bytes_ = 0, page_ = 0;
  std::byte* data_ = nullptr;
  std::byte* inner_begin_ = nullptr;  ///< first byte after the leading guard page
  std::byte* inner_end_ = nullptr;    ///< the trailing guard page
  int slot_ = -1;                     ///< this buffer's entry in the fault handler's table
};

/// Installs the SIGSEGV/SIGBUS handler that names a guard-page or sealed-input fault in the case
/// journal before the child dies of the signal. Idempotent.
void install_fault_namer();

}  // namespace pecheck::plugin
