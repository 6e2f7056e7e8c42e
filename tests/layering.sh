#!/usr/bin/env bash
# The folder rules of docs/architecture.md, checked on every #include "..." of the tree: each
# folder includes only the folders allowed below it (and itself), and inside impl/ the kernel
# bodies of impl/simd/ include no width's code. One line per violation.
# Usage: layering.sh SOURCE_DIR
set -uo pipefail
cd "${1:?source dir}" || exit 2

allowed() {  # folder -> the folders its files may include (besides itself)
  case "$1" in
    spec) echo "" ;;
    interface | reference) echo "spec" ;;
    impl) echo "spec interface" ;;
    harness) echo "spec interface reference" ;;
    properties) echo "spec interface reference harness" ;;
    mutants) echo "spec interface impl" ;;
    tensorfiles) echo "spec" ;;
    plugin | dumpcheck) echo "spec interface reference harness tensorfiles plugin" ;;
    downstream) echo "spec interface reference harness properties" ;;
    *) echo "*" ;;
  esac
}
# The one sanctioned exception: the list of encoders under test names pecheck's own backends.
exempt="harness/encoders.cpp"

violations=0
checked=0
while IFS= read -r file; do
  folder=${file%%/*}
  ok=$(allowed "$folder")
  [ "$ok" = "*" ] && continue
  [ "$file" = "$exempt" ] && continue
  while IFS= read -r inc; do
    checked=$((checked + 1))
    target=${inc%%/*}
    [ "$target" = "$folder" ] && continue
    [ "$inc" = "$target" ] && continue  # a file beside it, no folder
    case " $ok " in *" $target "*) continue ;; esac
    [ -d "$target" ] || continue  # a system or third-party header written with quotes
    echo "$file includes \"$inc\": $folder/ may include only: ${ok:-nothing of pecheck}"
    violations=$((violations + 1))
  done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$file")
done < <(find spec interface reference impl harness properties mutants tensorfiles plugin dumpcheck downstream \
           -name '*.hpp' -o -name '*.cpp' -o -name '*.cu' -o -name '*.h' 2>/dev/null | sort)

# Inside impl/: the width-generic kernel bodies (impl/simd/) include no width, and no width's
# vector code includes another width's (an inline function of impl/avx2/simd.hpp built in an
# AVX-512 unit could be the copy the linker keeps for AVX2 callers: AVX-512 code on an AVX2 CPU).
while IFS= read -r file; do
  sub=${file#impl/}
  sub=${sub%%/*}
  while IFS= read -r inc; do
    case "$sub:$inc" in
      simd:impl/avx2/* | simd:impl/avx512/* | simd:impl/cuda/* | simd:impl/scalar/* | \
        avx512:impl/avx2/simd.hpp | avx2:impl/avx512/simd.hpp | avx2:impl/avx512/detail.hpp)
        echo "$file includes \"$inc\": impl/$sub/ may not include another width's vector code"
        violations=$((violations + 1))
        ;;
    esac
  done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$file")
done < <(find impl/simd impl/avx2 impl/avx512 -name '*.hpp' -o -name '*.cpp' 2>/dev/null | sort)

[ "$checked" -gt 100 ] || { echo "only $checked includes checked: is this the source tree?"; exit 1; }
echo "$checked includes checked, $violations outside the rules"
[ "$violations" -eq 0 ]
