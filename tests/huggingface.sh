#!/usr/bin/env bash
# transformers' own RoPE for every rope_type it ships, BLOOM's ALiBi, the Marian, XLM and M2M100
# sinusoid tables and T5's buckets (examples/huggingface/dump_hf.py), dumped with no convention
# stated (but Phi-3's LongRoPE factor lists, which only a statement can give): validate --dump must
# read each as expected.json says (RoPE: the rule, the base within 1e-6, the factor, Llama 3's
# frequency factors, the attention factor the module applies, which LongRoPE list the call used,
# the fp32-angles contract; ALiBi: the paper's slopes; sinusoids: layout, frequencies, base,
# M2M100's padding row; T5: the bucketing; M-RoPE: Qwen2-VL's sections and, on 5.x, Qwen3-VL's
# round-robin; 2-D RoPE: Qwen2-VL's vision tower, its pairing and base, and Pixtral's split frequencies). Runs on the transformers of $PECHECK_HF_PYTHON (5.x on the current stack, 4.49 on
# the legacy one). Skipped (exit 77) when no such python was found.
#
# Dumps whose reading waits on pecheck are named in WAITING below with the reason: each is an
# expected failure, printed as XFAIL; one that reads as expected fails the test (XPASS), so that
# its mark goes when the reader learns it.
set -euo pipefail
src=$1
: "${PECHECK:?}"
if [ -z "${PECHECK_HF_PYTHON:-}" ]; then
  echo "SKIP: no python with transformers (PECHECK_HF_PYTHON unset: scripts/hf-venv failed or was not run)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$PECHECK_HF_PYTHON" "$src/examples/huggingface/dump_hf.py" "$tmp/dumps" >/dev/null 2>"$tmp/py.err" ||
  { cat "$tmp/py.err"; echo "FAIL: dump_hf.py"; exit 1; }
rc=0
"$PECHECK" validate --dump "$tmp/dumps" --quiet --json "$tmp/r.json" >"$tmp/out" 2>"$tmp/err" || rc=$?
grep -E "^dump|convention:" "$tmp/out"
# Exit 2 is a dump not read: accepted below only for a waiting one.
[ "$rc" -le 2 ] && [ -s "$tmp/r.json" ] || { cat "$tmp/out" "$tmp/err"; echo "FAIL: validate exited $rc"; exit 1; }

# Judged by the fp32-angles contract, every RoPE passes; a wrong base stated for one fails every contract.
mkdir "$tmp/ropes"
for d in "$tmp"/dumps/*/; do
  grep -qE '"family": "(m?rope|rope2d)"' "$d/manifest.json" && cp -r "$d" "$tmp/ropes/"
done
"$PECHECK" validate --dump "$tmp/ropes" --quiet --contract fp32-angles --json "$tmp/fp32.json" >"$tmp/fp32.out" 2>&1 || true

"$PECHECK_HF_PYTHON" - "$tmp/r.json" "$tmp/dumps/expected.json" "$tmp/fp32.json" <<'PY'
import json, sys

report, made, fp32 = (json.load(open(p)) for p in sys.argv[1:4])
v5 = int(made["transformers"].split(".")[0]) >= 5
expected = made["dumps"]
name = lambda r: r["dump"].rsplit("/", 1)[-1]

# Dumps whose reading waits on pecheck (none now: the last ones, YaRN's truncate and proportional's
# rotated pairs, waited for validate's JSON reading to carry them).
WAITING = {}

results = report["results"]
unread = {name(u): u["reason"] for u in report.get("not_read", [])}
by = {(name(r), r["property"]): r for r in results}
fp32_by = {(name(r), r["property"]): r for r in fp32["results"]}
fp32_unread = {name(u) for u in fp32.get("not_read", [])}
family = lambda want: want.get("family", "rope")
failures, xfails = [], []


def check(cond, dump, what):
    if not cond:
        raise AssertionError(f"{dump}: {what}")


def check_rope(dump, want):
    check(dump not in unread, dump, f"not read: {unread.get(dump)}")
    reading = by[(dump, "rope.agrees_with_reference")]["reading"]
    spec = reading["spec"]
    check(spec is not None and not reading["ambiguous"], dump, f"read as {by[(dump, 'rope.agrees_with_reference')]['convention']}")
    check(spec["rule"] == want["rule"], dump, f"rule {spec['rule']}, expected {want['rule']}")
    check(abs(spec["base"] / want["base"] - 1) < 1e-6, dump, f"base {spec['base']}, expected {want['base']}")
    for key in ("factor", "low_freq_factor", "high_freq_factor", "rotary_dim", "seq_len", "truncate",
                "rotated_pairs"):
        if key in want:
            check(spec.get(key) == want[key], dump, f"{key} {spec.get(key)}, expected {want[key]}")
    # The attention factor the module applies: the rule's, and the rotated pairs' measured magnitude.
    check(abs(spec["magnitude"] - want["magnitude"]) < 1e-9, dump, f"magnitude {spec['magnitude']}, expected {want['magnitude']}")
    close = 1e-5 if dump.endswith("f32") else 1e-3
    check(abs(reading["measured_magnitude"] - want["magnitude"]) < close, dump, f"measured {reading['measured_magnitude']}")
    if want["rule"] == "longrope":  # the stated lists; which one was used (seq_len past L0 or not) is read
        check(abs(spec["attention_factor"] - want["attention_factor"]) < 1e-12, dump, f"{spec}")
    # HF forms frequencies and angles in fp32 (and, in bf16, stores cos and sin in bf16): the exact
    # contract fails far out, the fp32-angles one holds everywhere.
    c = by[(dump, "rope.agrees_with_reference")]["contract"]
    check(c["met"] in ("dtype-trig", "fp32-angles"), dump, f"contract {c}")
    if dump.endswith("f32"):
        check(c["met"] == "fp32-angles" and c["exact_to"] is not None and c["exact_to"] > 0, dump, f"contract {c}")
    for prop in ("rope.agrees_with_reference", "rope.orthogonal"):
        r = fp32_by.get((dump, prop))
        check(dump not in fp32_unread and r is not None and r["verdict"] == "pass", dump,
              f"{prop} under --contract fp32-angles: {r and (r['verdict'], r['max_error_u'], r['bound_u'])}")


def check_other(dump, want):
    check(dump not in unread, dump, f"not read: {unread.get(dump)}")
    if family(want) == "mrope":  # the section read from the data (named, if bf16 leaves it ambiguous), fp32 angles met
        row = by[(dump, "mrope.agrees_with_reference")]
        check(want["convention"] in row["convention"] and want["base"] in row["convention"], dump, row["convention"])
        check(row["contract"]["met"] in ("dtype-trig", "fp32-angles"), dump, row["contract"])
        if dump.endswith("f32"):
            check("ambiguous" not in row["convention"] and row["contract"]["met"] == "fp32-angles", dump, row)
        for prop in ("mrope.agrees_with_reference", "rope.orthogonal"):
            r = fp32_by.get((dump, prop))
            check(r is not None and r["verdict"] == "pass", dump, f"{prop} under --contract fp32-angles: {r}")
    elif family(want) == "rope2d":  # the pairing read from the data, every pair within fp32 angles
        row = by[(dump, "rope2d.agrees_with_reference")]
        check(row["convention"].startswith(want["convention"]) and "base 10000" in row["convention"], dump,
              row["convention"])
        check(row["contract"]["met"] in ("exact", "dtype-trig", "fp32-angles"), dump, row["contract"])
        if dump.endswith("f32"):  # angles in fp32: exact fails past position 1 or 2, fp32-angles holds
            check(row["contract"]["met"] == "fp32-angles", dump, row["contract"])
        for prop in ("rope2d.agrees_with_reference", "rope.orthogonal"):
            r = fp32_by.get((dump, prop))
            check(r is not None and r["verdict"] == "pass", dump, f"{prop} under --contract fp32-angles: {r}")
    elif family(want) == "alibi":  # BLOOM's slopes are the paper's, 12 heads (not a power of two) included
        for prop in ("alibi.slopes", "alibi.agrees_with_reference"):
            check(by[(dump, prop)]["verdict"] == "pass", dump, by[(dump, prop)])
    elif family(want) == "t5":  # bidirectional for the encoder, causal for the decoder, every entry a gather
        row = by[(dump, "t5.agrees_with_reference")]
        check(row["convention"].startswith(want["convention"]) and row["verdict"] == "pass", dump, row)
    else:  # Marian's and XLM's tables (float64, rounded once) agree; M2M100's (fp32 angles) reads right and fails
        row = by[(dump, "sinusoidal.agrees_with_reference")]
        check(row["convention"].startswith(want["convention"]), dump, row["convention"])
        if "padding" in want:
            check(want["padding"] in row["convention"], dump, row["convention"])
        check((row["verdict"] == "pass") == want["agrees"], dump, (row["verdict"], row["max_error_u"]))


read = {name(r) for r in results} | set(unread)
assert read == set(expected), (sorted(read ^ set(expected)))
assert set(WAITING) <= set(expected), sorted(set(WAITING) - set(expected))
for dump, want in sorted(expected.items()):
    try:
        (check_rope if family(want) == "rope" else check_other)(dump, want)
    except (AssertionError, KeyError) as e:
        if dump in WAITING:
            xfails.append(dump)
            print(f"XFAIL {dump}: waits for {WAITING[dump]} ({e})")
        else:
            failures.append(f"FAIL {e}")
    else:
        if dump in WAITING:
            failures.append(f"XPASS {dump}: reads as expected now; take it out of WAITING ({WAITING[dump]})")
print("\n".join(failures))
ropes = sum(family(w) == "rope" for w in expected.values())
print(f"huggingface (transformers {made['transformers']}): {ropes - len(xfails)} of {ropes} transformers RoPEs read "
      f"as expected, each meeting the fp32-angles contract, {len(xfails)} waiting (XFAIL); "
      f"{len(expected) - ropes} ALiBi, sinusoid, T5, M-RoPE and 2-D RoPE dumps as expected")
sys.exit(1 if failures else 0)
PY

d="$tmp/ropes/default-1e4-f32"
"$PECHECK_HF_PYTHON" -c "import json,sys; p=sys.argv[1]; m=json.load(open(p)); m['convention']={'rope_theta': 10001}; json.dump(m, open(p,'w'))" "$d/manifest.json"
rc=0
"$PECHECK" validate --dump "$d" --quiet --contract fp32-angles >"$tmp/wrong.out" || rc=$?
[ "$rc" = 1 ] && grep -qF "no contract met" "$tmp/wrong.out" ||
  { cat "$tmp/wrong.out"; echo "FAIL: a wrong base passed or met a contract"; exit 1; }
