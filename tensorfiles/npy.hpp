// NPY files (numpy's .npy, format versions 1.0, 2.0 and 3.0): a strict reader and a small writer.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "tensorfiles/array.hpp"

namespace pecheck::tensorfiles {

/// What the dump's manifest says about the storage type, for files whose descr cannot say it:
/// numpy has no bfloat16, so PyTorch dumps store bf16 tensors as raw 2-byte words ('<u2' or '|V2').
enum class StorageHint { none, bf16 };

/// Decodes an NPY file held in memory. `name` names the file in error messages and becomes
/// Array::name. Supported descr: f2 f4 f8 i4 i8 u2 in either byte order ('<', '>', '=' meaning
/// little-endian, or none), and V2 ('|', '<', '>'; '|' and '=' read as little-endian). With
/// StorageHint::bf16 a u2 or V2 array decodes as bf16 bits; without it u2 decodes as integers
/// (ElementType::u16) and V2 is rejected. Other descrs are read as the file says, whatever the
/// hint. Fortran-order data is transposed into C order. Throws FormatError on anything malformed.
Array read_npy(std::span<const std::byte> bytes, std::string_view name, StorageHint hint = StorageHint::none);

/// read_npy on a file's contents (FormatError when it cannot be read or is over 8 GiB). The path
/// names the file in messages and becomes Array::name.
Array read_npy_file(const std::string& path, StorageHint hint = StorageHint::none);

/// NPY version 1.0, little-endian, C order, with the header padded so that the data starts at a
/// multiple of 64 bytes (as numpy does). values are rounded to the element type to nearest, ties
/// to even, overflowing to infinity; a NaN below f64 becomes the quiet NaN (payload dropped). bf16
/// is stored as '<u2' bits, to be read back with StorageHint::bf16. Throws std::invalid_argument
/// when the shape and the value count disagree, a dim is negative, or an integer does not fit.
std::string npy_bytes(const Array& a);

/// Writes npy_bytes(a) to path through a temporary file renamed into place, so that a failed
/// write leaves no partial file. Throws std::runtime_error (one line) when it cannot write.
void write_npy(const std::string& path, const Array& a);

}  // namespace pecheck::tensorfiles
