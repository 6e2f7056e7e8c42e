#!/usr/bin/env bash
# `pecheck selftest`, one part of the catalogue at a time (PART, below): every mutant named for
# the part's properties is killed, by that property among others, the correct encoders pass, exit
# 0, and --json writes {seed, cases, mutants: [...], results: [...]}. The parts together hold every
# property exactly once (checked here), so the two CTest entries, run side by side, judge every
# mutant of the catalogue by its named property, as one `pecheck selftest` does; the kill matrix
# of every mutant against every property is that whole run's (docs/mutants.md).
set -uo pipefail
set -f  # the parts are globs for pecheck, not for the shell
pecheck="${PECHECK:?set PECHECK to build/pecheck}"
part="${1:?usage: cli_selftest.sh attention|others}"
declare -A PARTS=([attention]="attention.*" [others]="alibi.* [!a]*")
[ -n "${PARTS[$part]:-}" ] || { echo "FAIL: no part '$part' (attention, others)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$pecheck" list --json >"$tmp/list.json"
# The parts cover the catalogue: every property in exactly one part's globs.
python3 - "$tmp/list.json" "${PARTS[@]}" <<'PY' || { echo "FAIL: the parts do not cover the catalogue once"; exit 1; }
import fnmatch, json, sys
ids = [p["id"] for p in json.load(open(sys.argv[1]))["properties"]]
globs = " ".join(sys.argv[2:]).split()
for i in ids:
    hits = [g for g in globs if fnmatch.fnmatchcase(i, g)]
    assert len(hits) == 1, (i, hits)
PY

n=0
for glob in ${PARTS[$part]}; do
  n=$((n + 1))
  "$pecheck" selftest --seed 1 --quiet --property "$glob" --json "$tmp/st$n.json" >"$tmp/out"
  rc=$?
  cat "$tmp/out"
  [ "$rc" -eq 0 ] || { echo "FAIL: selftest --property '$glob' exits $rc"; exit 1; }
  python3 - "$tmp/st$n.json" "$tmp/list.json" <<'PY' || { echo "FAIL: selftest json ($glob)"; exit 1; }
import json, sys
doc = json.load(open(sys.argv[1]))
unavailable = {b["name"] for b in json.load(open(sys.argv[2]))["backends"] if not b["available"]}
assert doc["seed"] == 1 and doc["cases"] == 100
assert doc["mutants"], "no mutant is named for the selected properties"
ids = {r["property"] for r in doc["results"]}
for m in doc["mutants"]:
    for k in ("name", "description", "source", "expected", "killed", "killed_by"):
        assert k in m, k
    # Only the mutants named for the selection run, each killed by its named property.
    assert m["expected"] in ids and m["killed"] and m["expected"] in m["killed_by"], m
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
done
echo "cli selftest ($part): all checks passed"
