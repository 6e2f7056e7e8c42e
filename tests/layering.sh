#!/usr/bin/env bash
# The folder rules of docs/architecture.md, read from its table and checked on every #include "..."
# of the tree: each folder includes only the folders its row allows (and itself), and inside impl/
# the kernel bodies of impl/simd/ include no width's code. One line per violation.
# Usage: layering.sh SOURCE_DIR
set -uo pipefail
cd "${1:?source dir}" || exit 2

# The rules, read from docs/architecture.md's table "What each folder may include": per row, its
# folders (first column) and the folders its second column names before the first ";", "(", "—",
# "only" or "never"; "nothing of pecheck" is none, "everything" any. One "folder: allowed" line each.
rules=$(python3 - docs/architecture.md <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
section = text.split("## What each folder may include", 1)[1].split("\n## ", 1)[0]
for line in section.splitlines():
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(cells) < 2 or not cells[0].startswith("`"):
        continue
    folders = re.findall(r"`([\w/]+)/`", cells[0])
    rule = cells[1]
    if rule.startswith("everything"):
        allowed = "*"
    elif rule.startswith("nothing of pecheck"):
        allowed = ""
    else:
        allowed = " ".join(re.findall(r"`([\w/]+)/`", re.split(r";|\(|—|\bonly\b|\bnever\b", rule)[0]))
    for f in folders:
        print(f"{f}:{allowed}")
PY
)
[ -n "$rules" ] || { echo "no rules read from docs/architecture.md"; exit 1; }
allowed() {  # folder -> the folders its files may include (besides itself); "*" for any, "?" for no row
  local line
  line=$(grep -m1 "^$1:" <<<"$rules") || { echo "?"; return; }
  echo "${line#*:}"
}
# The one sanctioned exception: the list of encoders under test names pecheck's own backends.
exempt="harness/encoders.cpp"

violations=0
checked=0
while IFS= read -r file; do
  folder=${file%%/*}
  [[ $file == python/src/* ]] && folder=python/src
  ok=$(allowed "$folder")
  [ "$ok" = "*" ] && continue
  [ "$ok" = "?" ] && { echo "$file: docs/architecture.md has no row for $folder/"; violations=$((violations + 1)); continue; }
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
done < <(find spec interface reference impl harness properties mutants tensorfiles plugin dumpcheck downstream cli python/src \
           -name '*.hpp' -o -name '*.cpp' -o -name '*.cu' -o -name '*.h' 2>/dev/null | sort)

# dumpcheck/ may read a family's cases and bound from properties/, never a theorem file (its row
# in docs/architecture.md says so in words this script cannot read).
while IFS= read -r file; do
  while IFS= read -r inc; do
    case "$inc" in
      properties/*/*_cases.hpp) ;;
      properties/*)
        echo "$file includes \"$inc\": dumpcheck/ may include a family's cases (properties/*/*_cases.hpp) only"
        violations=$((violations + 1))
        ;;
    esac
  done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$file")
done < <(find dumpcheck -name '*.hpp' -o -name '*.cpp' 2>/dev/null | sort)

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
