#!/usr/bin/env bash
# The package contract: `cmake --install` into a fresh prefix, then examples/downstream (its own
# RoPE kernel, the catalogue through pecheck::gtest) configures with find_package(pecheck 0.1),
# builds and passes; built with its planted bug (fp32 angles) it fails, naming the property.
# Usage: downstream_install.sh PECHECK_BUILD_DIR SOURCE_DIR
set -uo pipefail
build="${1:?pecheck build dir}" src="${2:?source dir}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; exit 1; }
for f in bin/pecheck lib/cmake/pecheck/pecheckConfig.cmake lib/cmake/pecheck/pecheckConfigVersion.cmake \
         include/pecheck/downstream/gtest.hpp include/pecheck/interface/encoder.hpp; do
  [ -e "$tmp/prefix/$f" ] || fail "not installed: $f"
done
"$tmp/prefix/bin/pecheck" list >/dev/null || fail "the installed CLI does not run"
# The package's link graph: the catalogue and its engine never link pecheck's own kernels.
targets="$tmp/prefix/lib/cmake/pecheck/pecheckTargets.cmake"
for t in gtest properties harness interface; do
  links=$(awk -v t="pecheck::$t" '$0 ~ "set_target_properties\\(" t " " {on=1} on && /INTERFACE_LINK_LIBRARIES/ {print; on=0}' "$targets")
  [ -n "$links" ] || fail "pecheck::$t has no INTERFACE_LINK_LIBRARIES in $targets"
  case "$links" in *pecheck::impl* | *pecheck::cuda* | *CUDA::*) fail "pecheck::$t links pecheck's kernels: $links" ;; esac
done

build_example() {  # name, extra cmake args...
  local name="$1"; shift
  cmake -S "$src/examples/downstream" -B "$tmp/$name" -G Ninja -DCMAKE_PREFIX_PATH="$tmp/prefix" "$@" \
    >"$tmp/$name.configure.log" 2>&1 || { fail "$name: configure failed"; tail -20 "$tmp/$name.configure.log"; return 1; }
  cmake --build "$tmp/$name" >"$tmp/$name.build.log" 2>&1 || { fail "$name: build failed"; tail -20 "$tmp/$name.build.log"; return 1; }
}

if build_example good; then
  "$tmp/good/my_rope_test" >"$tmp/good.out" 2>&1
  rc=$?
  [ "$rc" -eq 0 ] || { fail "the correct kernel fails (exit $rc)"; grep -A6 "Failure" "$tmp/good.out" | head -30; }
  passed=$(grep -c '^\[       OK \] MyRope\.rope_' "$tmp/good.out")
  [ "$passed" -ge 10 ] || fail "only $passed rope properties ran and passed: vacuous?"
  echo "correct kernel: $passed rope properties pass"
  # pecheck::gtest brings the theorems and the harness, never pecheck's own kernels.
  kernels=$(nm -C "$tmp/good/my_rope_test" | grep -E 'pecheck::(avx2|cuda|scalar)::|make_(scalar|avx2|cuda)_encoder|cudaLaunch' | head -3)
  [ -z "$kernels" ] || fail "the downstream binary carries pecheck's kernels: $kernels"
fi

if build_example bug -DPLANT_BUG=ON; then
  "$tmp/bug/my_rope_test" >"$tmp/bug.out" 2>&1
  rc=$?
  [ "$rc" -ne 0 ] || fail "the planted bug (fp32 angles) passes"
  grep -q 'FAILED  \] MyRope.rope_agrees_with_reference__f32' "$tmp/bug.out" ||
    fail "rope.agrees_with_reference does not name the planted bug"
  grep -q 'counterexample (shrunk): rope(' "$tmp/bug.out" || fail "no shrunk counterexample printed"
  grep -q "replay: PECHECK_SEED=" "$tmp/bug.out" || fail "no replay line printed"
  echo "planted bug: $(grep -c 'FAILED  \] MyRope' "$tmp/bug.out") failing tests, e.g. $(grep -m1 'FAILED  \] MyRope' "$tmp/bug.out")"
fi

exit $((fails > 0))
