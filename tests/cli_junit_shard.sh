#!/usr/bin/env bash
# CI outputs: `verify --junit` writes XML valid against docs/junit.xsd (with a skipped backend in
# it); `--shard I/N` splits a run so that the shards are disjoint and their union is exactly the
# unsharded run; bad --shard values are one line and exit 2; the gtest binaries honour
# GTEST_TOTAL_SHARDS / GTEST_SHARD_INDEX the same way.
# Usage: PECHECK=build/pecheck PROPERTIES_TEST=build/tests/properties_test cli_junit_shard.sh SOURCE_DIR
set -uo pipefail
pecheck="${PECHECK:?set PECHECK to build/pecheck}"
properties_test="${PROPERTIES_TEST:?set PROPERTIES_TEST to build/tests/properties_test}"
src="${1:?source dir}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

selection=(--property 'rope.*' --cases 10 --seed 5 --quiet)

# The whole run, with avx2 disabled so the report holds skipped testcases too.
PECHECK_DISABLE_AVX2=1 "$pecheck" verify "${selection[@]}" --json "$tmp/all.json" --junit "$tmp/all.xml" >"$tmp/all.txt"
rc=$?
[ "$rc" -eq 0 ] || fail "verify --junit exits $rc: $(tail -3 "$tmp/all.txt")"
xmllint --noout --schema "$src/docs/junit.xsd" "$tmp/all.xml" 2>"$tmp/xmllint.err" ||
  fail "junit report invalid: $(head -5 "$tmp/xmllint.err")"
grep -q '<skipped message="disabled by PECHECK_DISABLE_AVX2"/>' "$tmp/all.xml" || fail "no skipped testcase for avx2"
tests=$(grep -c '<testcase ' "$tmp/all.xml")
results=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["results"]))' "$tmp/all.json")
[ "$tests" -eq "$results" ] || fail "junit has $tests testcases, the run $results results"

# Three shards of the same run: disjoint, and together exactly the run.
for i in 0 1 2; do
  PECHECK_DISABLE_AVX2=1 "$pecheck" verify "${selection[@]}" --shard "$i/3" --json "$tmp/s$i.json" >"$tmp/s$i.txt"
  rc=$?
  [ "$rc" -eq 0 ] || fail "shard $i/3 exits $rc"
  grep -q "shard $i/3" "$tmp/s$i.txt" || fail "shard $i/3 does not say which shard it is"
done
python3 - "$tmp" <<'EOF' || fail "the shards' union is not the run"
import json, sys
d = sys.argv[1]
key = lambda r: (r["property"], r["encoder"], r["dtype"])
same = lambda r: (r["verdict"], r["max_error_u"], r["property_seed"], r["cases"])
whole = {key(r): same(r) for r in json.load(open(f"{d}/all.json"))["results"]}
union = {}
for i in range(3):
    results = json.load(open(f"{d}/s{i}.json"))["results"]
    assert results, f"shard {i} is empty"
    for r in results:
        assert key(r) not in union, f"{key(r)} is in two shards"
        union[key(r)] = same(r)
assert union == whole, f"union differs: {set(union) ^ set(whole)}"
EOF

expect_usage_error() {  # exit 2, exactly one line on stderr
  local what="$1"; shift
  "$pecheck" "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  [ "$rc" -eq 2 ] || fail "$what: exit $rc, expected 2"
  [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "$what: stderr is not one line: $(cat "$tmp/err")"
}
expect_usage_error "shard index = count" verify --shard 3/3 --seed 1
expect_usage_error "shard not I/N" verify --shard a/b --seed 1
expect_usage_error "shard count 0" verify --shard 0/0 --seed 1
expect_usage_error "shard without seed" verify --shard 0/2
expect_usage_error "unwritable junit" verify --property rope.relative --junit /nonexistent/dir/r.xml

# GoogleTest sharding of the catalogue binary: the same partition contract.
filter='--gtest_filter=*rope_relative*:*sinusoidal_bounds*'
"$properties_test" "$filter" | grep -E '^\[ +(OK|SKIPPED) +\] [^0-9]' | sed 's/ (.*//' | sort >"$tmp/gtest_all"
: >"$tmp/gtest_union"
for i in 0 1; do
  GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=$i "$properties_test" "$filter" |
    grep -E '^\[ +(OK|SKIPPED) +\] [^0-9]' | sed 's/ (.*//' >>"$tmp/gtest_union"
done
sort -o "$tmp/gtest_union" "$tmp/gtest_union"
[ -s "$tmp/gtest_all" ] || fail "the gtest filter selected nothing"
cmp -s "$tmp/gtest_all" "$tmp/gtest_union" || fail "gtest shards' union differs from the whole run"

[ "$fails" -eq 0 ] && echo "junit and shard contract: ok"
exit $((fails > 0))
