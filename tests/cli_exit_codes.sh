#!/usr/bin/env bash
# The CLI's contract (DESIGN.md): exit 0 when every property holds, 2 with one clear line for bad
# usage, the same seed gives the same report, --json writes the documented fields, list --json.
set -uo pipefail
pecheck="${PECHECK:?set PECHECK to build/pecheck}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

expect_usage_error() {  # exit 2, exactly one line on stderr, nothing on stdout
  local what="$1"; shift
  "$pecheck" "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  [ "$rc" -eq 2 ] || fail "$what: exit $rc, expected 2"
  [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "$what: stderr is not one line: $(cat "$tmp/err")"
  [ ! -s "$tmp/out" ] || fail "$what: wrote to stdout: $(head -c 200 "$tmp/out")"
}

expect_usage_error "negative cases" verify --cases -3
expect_usage_error "zero cases" verify --cases 0
expect_usage_error "unknown backend" verify --backend nosuch
expect_usage_error "glob matching nothing" verify --property 'nosuch.*'
expect_usage_error "unknown dtype" verify --dtype f64
expect_usage_error "unknown option" verify --frobnicate
expect_usage_error "no subcommand"
expect_usage_error "unwritable json" verify --property rope.relative --json /nonexistent/dir/r.json
[ ! -e /nonexistent/dir/r.json ] || fail "a json file was written half-way"

expect_usage_error "selftest negative cases" selftest --cases -1
# A selection no mutant is named for would judge nothing: refused, not passed.
expect_usage_error "selftest judging no mutant" selftest --property sinusoidal.bounds --dtype f32 --cases 5
expect_usage_error "zero kernel threads" verify --property rope.relative --threads 0
PECHECK_THREADS=two expect_usage_error "a malformed PECHECK_THREADS" verify --property rope.relative

# Opt-in properties run when named exactly, never through a pattern.
expect_usage_error "a pattern over opt-in properties only" verify --property 'attention.batch*'
grep -q "run when named exactly" "$tmp/err" || fail "the opt-in refusal does not say how to run one: $(cat "$tmp/err")"
"$pecheck" verify --backend scalar --property 'attention.*' --seed 3 --cases 2 --quiet --json "$tmp/att.json" >/dev/null
grep -q '"attention.batch_invariance"' "$tmp/att.json" && fail "a pattern selected the opt-in attention.batch_invariance"
"$pecheck" verify --backend scalar --property attention.batch_invariance --seed 3 --cases 5 --quiet \
  --json "$tmp/bi.json" >/dev/null || fail "attention.batch_invariance named exactly does not run and pass on scalar"
grep -q '"attention.batch_invariance"' "$tmp/bi.json" || fail "attention.batch_invariance named exactly did not run"

for cmd in "--help" "verify --help" "list --help" "selftest --help"; do
  $pecheck $cmd >"$tmp/help" 2>&1 || fail "$cmd exits non-zero"
  grep -q -i usage "$tmp/help" || fail "$cmd prints no usage"
done

"$pecheck" verify --backend scalar --property 'rope.*' --seed 7 --cases 20 --quiet --json "$tmp/a.json" >"$tmp/a.txt"
rc=$?
[ "$rc" -eq 0 ] || fail "verify rope.* on scalar exits $rc"
grep -q "seed 7" "$tmp/a.txt" || fail "the seed is not printed"
"$pecheck" verify --backend scalar --property 'rope.*' --seed 7 --cases 20 --quiet --json "$tmp/b.json" >/dev/null
python3 - "$tmp/a.json" "$tmp/b.json" <<'PY' || fail "json reports differ or lack fields"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for doc in (a, b):
    doc.pop("elapsed_s")
assert a == b, "same seed, different report"
assert a["seed"] == 7
import subprocess, os
listed = json.loads(subprocess.check_output([os.environ["PECHECK"], "list", "--json"]))
expected = sum(len(p["dtypes"]) for p in listed["properties"] if p["id"].startswith("rope."))
assert len(a["results"]) == expected, (len(a["results"]), expected)  # every rope.* property x dtype
for r in a["results"]:
    for k in ("property", "encoder", "dtype", "cases", "max_error_u", "bound_u", "verdict"):
        assert k in r, k
    assert r["verdict"] == "pass" and r["cases"] == 20 and r["max_error_u"] <= r["bound_u"]
PY

# Exit 1: a selftest that cannot kill every mutant it judges (one case each: too few to see them).
"$pecheck" selftest --property rope.agrees_with_reference --dtype f32 --cases 1 --seed 3 --quiet >"$tmp/st.txt" 2>&1
rc=$?
[ "$rc" -eq 1 ] || fail "selftest with surviving mutants exits $rc, expected 1"
grep -q "SURVIVED" "$tmp/st.txt" || fail "surviving mutants are not reported"

"$pecheck" list --json >"$tmp/list.json" || fail "list --json exits non-zero"
python3 - "$tmp/list.json" <<'PY' || fail "list --json schema"
import json, sys
doc = json.load(open(sys.argv[1]))
ids = [p["id"] for p in doc["properties"]]
for required in ("sinusoidal.shift_linearity", "rope.relative", "attention.permutation_equivariance"):
    assert required in ids, required
assert all({"id", "statement", "doc"} <= p.keys() for p in doc["properties"])
names = {b["name"]: b for b in doc["backends"]}
assert names["scalar"]["available"] is True
opt_in = [p["id"] for p in doc["properties"] if p["opt_in"]]
assert opt_in == ["attention.batch_invariance"], opt_in
assert all({"name", "available", "reason"} <= b.keys() for b in doc["backends"])
PY

# A former id still selects its property for one release, and list --json names it as an alias.
"$pecheck" verify --backend scalar --property relative.agrees_with_reference --dtype f32 --cases 5 --seed 2 --quiet \
  --json "$tmp/alias.json" >/dev/null || fail "the former id relative.agrees_with_reference is not accepted"
python3 - "$tmp/alias.json" "$tmp/list.json" <<'PY' || fail "alias of shaw.agrees_with_reference"
import json, sys
results = json.load(open(sys.argv[1]))["results"]
assert [r["property"] for r in results] == ["shaw.agrees_with_reference"], results
listed = {p["id"]: p for p in json.load(open(sys.argv[2]))["properties"]}
assert listed["shaw.agrees_with_reference"]["aliases"] == ["relative.agrees_with_reference"]
assert "relative.agrees_with_reference" not in listed
PY

if [ "$fails" -eq 0 ]; then echo "cli exit codes: all checks passed"; else echo "$fails check(s) failed"; exit 1; fi
