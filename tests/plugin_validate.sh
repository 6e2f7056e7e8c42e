#!/usr/bin/env bash
# pecheck validate --plugin on the C example (examples/plugin-c) and copies with planted bugs:
# the correct plugin passes (exit 0), a catalogue mutant fails with a counterexample and a replay
# command that fails again (exit 1), fp32 angles are profiled per octave of position with the
# contract they meet, a plugin that flushes subnormals fails unless it declares it
# (PECHECK_FLAG_FTZ), an out-of-bounds write is a crash with the case while the
# other properties are still reported (exit 3), and unusable plugins, or a --contract that governs
# nothing the plugin offers, are one line and exit 2.
set -euo pipefail
src=$1
: "${PECHECK:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

build() {  # build NAME [PLANT]
  cmake -S "$src/examples/plugin-c" -B "$tmp/$1" -G Ninja -DPLANT="${2:-}" >/dev/null
  cmake --build "$tmp/$1" >/dev/null
  echo "$tmp/$1/librope_sinusoidal_plugin.so"
}
expect() {  # expect STATUS NAME -- command...: runs it, output in $tmp/NAME.{out,err}
  local want=$1 name=$2 rc=0
  shift 3
  "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" || rc=$?
  [ "$rc" = "$want" ] || { cat "$tmp/$name.out" "$tmp/$name.err"; fail "$name: exit $rc, expected $want"; }
}
one_line() { [ "$(wc -l <"$tmp/$1.err")" = 1 ] || { cat "$tmp/$1.err"; fail "$1: stderr is not one line"; }; }
has() { grep -qF -- "$2" "$tmp/$1" || { cat "$tmp/$1"; fail "$1 lacks: $2"; }; }
run() { "$PECHECK" validate --cases 15 --seed 7 --quiet "$@"; }

ok=$(build ok)
expect 0 ok -- run --plugin "$ok" --json "$tmp/ok.json"
has ok.out "plugin example-c-rope-sinusoidal"
python3 - "$tmp/ok.json" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
verdicts = {(r["property"], r["dtype"]): r["verdict"] for r in results}
for p in ("rope.agrees_with_reference", "rope.orthogonal", "rope.relative", "sinusoidal.agrees_with_reference",
          "sinusoidal.shift_linearity", "mrope.agrees_with_reference", "mrope.relative"):
    for dt in ("f32", "bf16", "f16"):
        assert verdicts[(p, dt)] == "pass", (p, dt, verdicts[(p, dt)])
assert all(r["cases"] > 0 for r in results if r["verdict"] == "pass")
skips = [r for r in results if r["property"].startswith("alibi.") and r["verdict"] == "skip"]
assert skips and all("does not offer" in r["message"] for r in skips), skips
# The plugin implements unscaled and linear RoPE only: the scaled-rule cases are not offered.
ntk = [r for r in results if r["property"] == "rope.ntk_base"]
assert ntk and all(r["verdict"] == "skip" for r in ntk), ntk
PY

mutant=$(build ignores-rotary-dim PLANT_IGNORE_ROTARY_DIM)
expect 1 mutant -- run --plugin "$mutant" --property 'rope.*'
has mutant.out "FAIL rope.orthogonal / example-c-rope-sinusoidal"
has mutant.out "counterexample (shrunk): rope("
has mutant.out "u at the counterexample (its bound "  # its own error and bound beside the worst
replay=$(grep -m1 "replay: .*rope.orthogonal" "$tmp/mutant.out" | sed 's/^ *replay: //')
[[ $replay == *"validate --plugin $mutant"* ]] || fail "replay does not name the plugin: $replay"
expect 1 replay -- $replay
has replay.out "FAIL rope.orthogonal"

# fp32 angles: the verdict names the contract it meets (fp32-angles), where the stricter ones first
# fail, and every law holds under it (the laws comparing calls below that contract's ceiling).
fp32=$(build fp32-angles PLANT_FP32_ANGLES)
expect 0 ladder -- run --plugin "$fp32" --property 'rope.*' --json "$tmp/ladder.json"
has ladder.out "contract rope_apply f32: meets fp32-angles; exact fails at position"
has ladder.out "the laws comparing calls judged below position 524288"
python3 - "$tmp/ladder.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
contracts = {(c["op"], c["dtype"]): c for c in report["contracts"]}
f32 = contracts[("rope_apply", "f32")]
assert f32["met"] == "fp32-angles" and f32["asked"] is None and f32["laws_below"] == 1 << 19, f32
exact = f32["misses"][0]
assert exact["contract"] == "exact" and exact["position"] > 0 and exact["error_u"] > exact["bound_u"] == 2, exact
verdicts = {(r["property"], r["dtype"]): r["verdict"] for r in report["results"]}
for law in ("rope.agrees_with_reference", "rope.relative", "rope.composition", "rope.offset_invariance"):
    assert verdicts[(law, "f32")] == "pass", (law, verdicts[(law, "f32")])
PY
# Held to the exact contract, the catalogue fails it, and the profile says where, octave by
# octave, and which contract it meets (fp32 angles) up to which position it is exact.
expect 1 fp32 -- run --plugin "$fp32" --property 'rope.agrees_with_reference' --contract exact --json "$tmp/fp32.json"
has fp32.out "contract rope_apply f32: meets no named contract (tried exact); exact fails at position"
has fp32.out "profile rope_apply: example-c-rope-sinusoidal at rope(layout=half_split,d=128,rot=128,base=10000)"
has fp32.out "fp32-angles contract met; exact to position"
has fp32.out "over the bound"
python3 - "$tmp/fp32.json" <<'PY'
import json, sys
profiles = json.load(open(sys.argv[1]))["profiles"]
rope = [p for p in profiles if p["operation"] == "rope_apply"]
assert {p["dtype"] for p in rope} == {"f32", "bf16", "f16"}, rope
f32 = next(p for p in rope if p["dtype"] == "f32")["checks"][0]
assert f32["property"] == "rope.agrees_with_reference" and not f32["holds"], f32
assert f32["contract"]["met"] == "fp32-angles" and f32["contract"]["exact_to"] > 0, f32["contract"]
octaves = f32["octaves"]
assert octaves[0]["holds"] and not octaves[-1]["holds"] and octaves[-1]["to"] == 1 << 24, octaves
# One counterexample per failing scaling rule: the plugin offers no scaling and linear, and fp32
# angles break both, each reported with its own counterexample.
row = next(r for r in json.load(open(sys.argv[1]))["results"]
           if r["property"] == "rope.agrees_with_reference" and r["dtype"] == "f32")
first = "none" if "(under none;" in row["message"] else "linear" if "(under linear;" in row["message"] else None
rules = {first} | {o["rule"] for o in row.get("other_rules", [])}
assert rules == {"none", "linear"}, row
assert all(o["counterexample"] and o["message"] for o in row["other_rules"]), row
PY

# A plugin that flushes subnormals (a fast-math build) fails where it meets one, and the failure
# says what it does; declared (PECHECK_FLAG_FTZ), that is its platform's convention and every law
# holds, as under --ftz.
flush=$(build flush PLANT_FLUSH_SUBNORMALS)
expect 1 flush -- run --plugin "$flush" --property 'rope.*' --dtype f32
has flush.out "FAIL rope.agrees_with_reference / example-c-rope-sinusoidal / f32"
has flush.out "it flushes subnormal inputs to zero"
has flush.out "a plugin's PECHECK_FLAG_FTZ"
declared=$(build declared-ftz "PLANT_FLUSH_SUBNORMALS;DECLARE_FTZ")
expect 0 declared -- run --plugin "$declared" --property 'rope.*' --json "$tmp/declared.json"
has declared.out "judged as flushing subnormals to zero"
has declared.out "flushes subnormals to zero (declared: PECHECK_FLAG_FTZ)"
python3 - "$tmp/declared.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
assert report["ftz"] is True, report.get("ftz")
ran = [r for r in report["results"] if r["verdict"] == "pass"]
assert {r["property"] for r in ran} >= {"rope.agrees_with_reference", "rope.orthogonal", "rope.inverse"}, ran
assert all(r["verdict"] in ("pass", "skip") for r in report["results"]), report["results"]
PY

oob=$(build oob-write PLANT_OOB_WRITE)
expect 3 oob -- run --plugin "$oob" --dtype f32 --json "$tmp/oob.json"
has oob.out "CRASH sinusoidal.agrees_with_reference / example-c-rope-sinusoidal / f32"
has oob.out "past the end of out"
has oob.out "while running: sinusoidal(layout="
python3 - "$tmp/oob.json" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
verdicts = {r["property"]: r for r in results}
for p in ("sinusoidal.agrees_with_reference", "sinusoidal.bounds", "sinusoidal.shift_linearity"):
    r = verdicts[p]
    assert r["verdict"] == "crash" and "past the end of out" in r["message"], r
    assert r["counterexample"].startswith("sinusoidal("), r
# The run went on: the RoPE properties were still run and reported.
for p in ("rope.agrees_with_reference", "rope.relative", "rope.orthogonal"):
    assert verdicts[p]["verdict"] == "pass", verdicts[p]
PY

abi=$(build abi2 PLANT_ABI_VERSION=2)
expect 2 abi -- run --plugin "$abi"
one_line abi
has abi.err "built against plugin ABI version 2; this pecheck speaks version 1"

noentry=$(build noentry PLANT_NO_ENTRY)
expect 2 noentry -- run --plugin "$noentry"
one_line noentry
has noentry.err "has no symbol pecheck_plugin_v1"

# A contract that governs nothing the plugin offers is bad usage, said before anything runs: the
# example has no attention, the only operation rounded-p governs.
expect 2 rounded -- run --plugin "$ok" --contract rounded-p
one_line rounded
has rounded.err "--contract rounded-p: none of the properties selected on plugin example-c-rope-sinusoidal"
[ ! -s "$tmp/rounded.out" ] || { cat "$tmp/rounded.out"; fail "rounded: printed a run before its usage error"; }
expect 0 exact -- run --plugin "$ok" --contract exact --property 'sinusoidal.agrees_with_reference'

expect 2 missing -- run --plugin "$tmp/no-such.so"
one_line missing
has missing.err "no such file"
echo "not a library" >"$tmp/text.so"
expect 2 text -- run --plugin "$tmp/text.so"
one_line text
has text.err "cannot be loaded"

# A descriptor of ABI 1's first size (before mrope_apply was appended) loads and offers no M-RoPE.
first=$(build v1-first V1_FIRST_DESCRIPTOR)
expect 0 first -- run --plugin "$first" --property 'mrope.*' --json "$tmp/first.json"
python3 - "$tmp/first.json" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
assert results and all(r["verdict"] == "skip" and "does not offer mrope_apply" in r["message"] for r in results), results
PY

# The attention example, written against ABI revision 2: it passes every attention property,
# grouped-query, windowed and decode cases included; with the mask aligned top-left its decode
# calls fail; built as revision 1 it loads and is sent none of those cases.
attention_of() { echo "$(dirname "$1")/libattention_plugin.so"; }
att=$(attention_of "$ok")
expect 0 att -- run --plugin "$att" --property 'attention.*' --json "$tmp/att.json"
has att.out "plugin example-c-attention"
python3 - "$tmp/att.json" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
assert results and all(r["verdict"] == "pass" and r["cases"] > 0 for r in results), \
    [r for r in results if r["verdict"] != "pass"]
ids = {r["property"] for r in results}
for p in ("attention.gqa_repeat_equivalence", "attention.window_limits", "attention.decode_equivalence"):
    assert p in ids, ids
PY
# Its descriptor declares the PEs it applies (none, RoPE): every attention property draws only
# those, and no case is declined for its PE (a few still are for a RoPE scaling rule it lacks:
# the forms say partial or scaled RoPE, not which rules); the first line says what it declares.
has att.out "attention declares PEs none, rope"
python3 - "$tmp/att.json" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    drawn = set(r.get("distribution", {}))
    assert r["cases"] == 15 and not drawn & {"sinusoidal", "alibi", "shaw"}, r
    assert not any(f"pe={pe}" in r.get("message", "") for pe in ("sinusoidal", "alibi", "shaw")), r
PY
# Without the declaration (a plugin built before the field) it is drawn every PE of its revision
# (2: all but T5's) and declines the sinusoid, ALiBi and Shaw case by case: counted, and still a
# pass over the rest.
undeclared=$(attention_of "$(build undeclared PLANT_UNDECLARED)")
expect 0 undeclared -- run --plugin "$undeclared" --property 'attention.*' --json "$tmp/undeclared.json"
python3 - "$tmp/undeclared.json" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
assert any("not offered by the encoder" in r.get("message", "") for r in results), results
# Revision 2 (its declared revision) predates T5 inside attention: no T5 case is drawn for it.
assert not any("t5" in r.get("distribution", {}) for r in results), results
PY
# Declaring grouped-query heads and windows only (no decode calls, no stated scale, no partial or
# scaled RoPE): decode_equivalence is not applicable and says which form is missing; the
# properties whose cases can do without those forms run in full.
noforms=$(attention_of "$(build forms-gqa-window 'DECLARE_FORMS=3')")
expect 0 noforms -- run --plugin "$noforms" --property 'attention.*' --json "$tmp/noforms.json"
has noforms.out "forms grouped_query, window"
python3 - "$tmp/noforms.json" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
decode = [r for r in results if r["property"] == "attention.decode_equivalence"]
assert decode and all(r["verdict"] == "skip" and "form 'decode'" in r["message"] for r in decode), decode
for p in ("attention.gqa_repeat_equivalence", "attention.window_limits", "attention.agrees_with_reference"):
    rows = [r for r in results if r["property"] == p]
    assert rows and all(r["verdict"] == "pass" and r["cases"] == 15 for r in rows), rows
PY
topleft=$(attention_of "$(build top-left PLANT_MASK_TOP_LEFT)")
expect 1 topleft -- run --plugin "$topleft" --property 'attention.decode_equivalence'
has topleft.out "FAIL attention.decode_equivalence / example-c-attention"
has topleft.out "counterexample (shrunk): attention("
rev1=$(attention_of "$(build revision-1 PLANT_REVISION=1)")
expect 0 rev1 -- run --plugin "$rev1" --property 'attention.*' --json "$tmp/rev1.json"
python3 - "$tmp/rev1.json" <<'PY'
import json, sys
results = {(r["property"], r["dtype"]): r for r in json.load(open(sys.argv[1]))["results"]}
for (p, dt), r in results.items():
    if p in ("attention.gqa_repeat_equivalence", "attention.window_limits", "attention.decode_equivalence"):
        assert r["verdict"] == "skip" and "abi_revision is below 2" in r["message"], r
    else:  # the others run on the cases it offers (a draw of 15 may leave none: a skip)
        assert r["verdict"] in ("pass", "skip"), r
assert any(r["verdict"] == "pass" for r in results.values()), results
# The report says what a revision-1 plugin was never sent (properties/coverage.hpp).
coverage = json.load(open(sys.argv[1]))["coverage"]
attention = [c for c in coverage if c["op"] == "attention"]
assert len(attention) == 1 and attention[0]["cases"] > 0, coverage
for form in ("grouped-query", "window", "queries < keys"):
    assert form in attention[0]["never_exercised"], attention
PY

crash=$(build abort-on-load PLANT_ABORT_ON_LOAD)
expect 3 crash -- run --plugin "$crash"
has crash.err "failed while loading: crashed: signal 6"
echo "plugin_validate: all expectations held"
