#!/usr/bin/env bash
# `pecheck selftest`: every mutant is killed, by the property named for it among others, the
# correct encoders pass, exit 0, and --json writes {seed, cases, mutants: [...], results: [...]}.
set -uo pipefail
pecheck="${PECHECK:?set PECHECK to build/pecheck}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$pecheck" selftest --seed 1 --quiet --json "$tmp/st.json" >"$tmp/out"
rc=$?
cat "$tmp/out"
[ "$rc" -eq 0 ] || { echo "FAIL: selftest exits $rc"; exit 1; }
"$pecheck" list --json >"$tmp/list.json"
python3 - "$tmp/st.json" "$tmp/list.json" <<'PY' || { echo "FAIL: selftest json"; exit 1; }
import json, sys
doc = json.load(open(sys.argv[1]))
unavailable = {b["name"] for b in json.load(open(sys.argv[2]))["backends"] if not b["available"]}
assert doc["seed"] == 1 and doc["cases"] == 100
assert len(doc["mutants"]) >= 30, len(doc["mutants"])
ids = {r["property"] for r in doc["results"]}
for m in doc["mutants"]:
    for k in ("name", "description", "source", "expected", "killed", "killed_by"):
        assert k in m, k
    assert m["killed"] and m["expected"] in m["killed_by"], m
    assert set(m["killed_by"]) <= ids, m
# The correct encoders pass; only a backend this machine cannot run (cuda without a GPU) skips, or
# one that declines an operation it does not implement (the 2-D relative bias's table read is the
# scalar backend's alone), with that reason.
declines = "relative_bias_2d is a table read, kept to the scalar backend"
for r in doc["results"]:
    skipped = r["verdict"] == "skip" and (r["encoder"] in unavailable or r["message"] == declines)
    assert r["verdict"] == "pass" or skipped, r
assert any(r["verdict"] == "pass" for r in doc["results"])
PY
echo "cli selftest: all checks passed"
