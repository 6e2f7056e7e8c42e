#!/usr/bin/env bash
# The operation table's compile-time promise (interface/encoder.hpp): an encoder that offers an
# operation and does not implement it fails to compile; one that implements it compiles, runs,
# offers it and declines the others. Usage: interface_compile.sh CXX SOURCE_DIR
set -uo pipefail
cxx=${1:?compiler} src=${2:?source dir}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
flags=(-std=c++20 -Wall -Wextra -Werror -I"$src")
"$cxx" "${flags[@]}" "$src/tests/compile/offering.cpp" "$src/interface/operations.cpp" -lfmt -o "$tmp/ok" \
  >"$tmp/ok.log" 2>&1 || { cat "$tmp/ok.log"; echo "FAIL: the implementing adapter does not compile"; exit 1; }
"$tmp/ok" || { echo "FAIL: Offering<RopeApply> does not offer RoPE alone"; exit 1; }
if "$cxx" "${flags[@]}" -DFORGET -fsyntax-only "$src/tests/compile/offering.cpp" >"$tmp/bad.log" 2>&1; then
  echo "FAIL: an adapter offering RoPE without implementing it compiles"
  exit 1
fi
grep -q "abstract" "$tmp/bad.log" || { cat "$tmp/bad.log"; echo "FAIL: not refused for the missing run()"; exit 1; }
echo "interface_compile: an unimplemented offered operation is refused at compile time"
