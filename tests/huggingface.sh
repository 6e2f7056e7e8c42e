#!/usr/bin/env bash
# transformers' own RoPE for every rope_type, BLOOM's ALiBi and the Marian, XLM and M2M100 sinusoid
# tables (examples/huggingface/dump_hf.py), dumped with no convention stated (but Phi-3's LongRoPE
# factor lists, which only a statement can give): validate --dump must read each as expected.json
# says (RoPE: the rule, the base within 1e-6, the factor, Llama 3's frequency factors, YaRN's
# attention factor, which LongRoPE list the call used and its attention factor, the fp32-angles
# contract; ALiBi: the paper's slopes;
# sinusoids: layout, frequencies, base, M2M100's padding row; T5: the bucketing). Skipped (exit 77) when
# scripts/hf-venv could not provide transformers.
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
"$PECHECK" validate --dump "$tmp/dumps" --quiet --json "$tmp/r.json" >"$tmp/out" || rc=$?
grep -E "^dump|convention:" "$tmp/out"
[ "$rc" -le 1 ] || { cat "$tmp/out"; echo "FAIL: validate exited $rc"; exit 1; }
/usr/bin/python3 - "$tmp/r.json" "$tmp/dumps/expected.json" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
expected = json.load(open(sys.argv[2]))
read = {r["dump"].rsplit("/", 1)[-1]: r["reading"] for r in results if r["property"] == "rope.agrees_with_reference"}
alibi = {name: want for name, want in expected.items() if want.get("family") == "alibi"}
sinusoids = {name: want for name, want in expected.items() if want.get("family") == "sinusoidal"}
t5s = {name: want for name, want in expected.items() if want.get("family") == "t5"}
expected = {name: want for name, want in expected.items() if want.get("family") is None}
assert set(read) == set(expected), (sorted(read), sorted(expected))
# BLOOM's slopes are the paper's, 12 heads (not a power of two) included, and every entry agrees.
by = {(r["dump"].rsplit("/", 1)[-1], r["property"]): r for r in results}
for name in alibi:
    for prop in ("alibi.slopes", "alibi.agrees_with_reference"):
        assert by[(name, prop)]["verdict"] == "pass", by[(name, prop)]
# T5's buckets (bidirectional for the encoder, causal for the decoder) read back, every entry a gather.
for name, want in t5s.items():
    row = by[(name, "t5.agrees_with_reference")]
    assert row["convention"].startswith(want["convention"]) and row["verdict"] == "pass", (name, row)
# Marian's and XLM's tables (float64, rounded once) agree; M2M100's (fp32 angles) reads right and fails.
for name, want in sinusoids.items():
    row = by[(name, "sinusoidal.agrees_with_reference")]
    assert row["convention"].startswith(want["convention"]), (name, row["convention"])
    if "padding" in want:
        assert want["padding"] in row["convention"], (name, row["convention"])
    assert (row["verdict"] == "pass") == want["agrees"], (name, row["verdict"], row["max_error_u"])
for name, want in expected.items():
    spec = read[name]["spec"]
    assert spec is not None and not read[name]["ambiguous"], (name, read[name])
    assert spec["rule"] == want["rule"], (name, spec)
    assert abs(spec["base"] / want["base"] - 1) < 1e-6, (name, spec)
    for key in ("factor", "low_freq_factor", "high_freq_factor", "rotary_dim", "seq_len"):
        if key in want:
            assert spec[key] == want[key], (name, key, spec)
    if want["rule"] == "yarn":
        assert abs(read[name]["measured_magnitude"] - 1.1386294361) < 1e-5, (name, read[name])
    if want["rule"] == "longrope":  # the stated lists; which one was used (seq_len past L0 or not) is read
        assert abs(spec["attention_factor"] - want["attention_factor"]) < 1e-12, (name, spec)
        assert abs(read[name]["measured_magnitude"] - want["attention_factor"]) < 1e-5, (name, read[name])
# HF forms frequencies and angles in fp32 (and, in bf16, stores cos and sin in bf16): the exact
# contract fails far out, the fp32-angles one holds everywhere.
contracts = {r["dump"].rsplit("/", 1)[-1]: r["contract"] for r in results if r["property"] == "rope.agrees_with_reference"}
for name, c in contracts.items():
    assert c["met"] in ("dtype-trig", "fp32-angles"), (name, c)
    if name.endswith("f32"):
        assert c["met"] == "fp32-angles" and c["exact_to"] is not None and c["exact_to"] > 0, (name, c)
print(f"huggingface: {len(expected)} transformers RoPEs read as expected, each meeting the fp32-angles contract; "
      f"{len(alibi)} BLOOM ALiBi dumps with the paper's slopes; {len(sinusoids)} sinusoid tables; {len(t5s)} T5 biases")
PY
# Judged by that contract, every RoPE passes; a wrong base stated for one fails every contract.
rm -rf "$tmp"/dumps/bloom-* "$tmp"/dumps/*-sinusoid "$tmp"/dumps/t5-*
"$PECHECK" validate --dump "$tmp/dumps" --quiet --contract fp32-angles >"$tmp/fp32.out" ||
  { cat "$tmp/fp32.out"; echo "FAIL: transformers' RoPE fails the fp32-angles contract"; exit 1; }
d="$tmp/dumps/default-1e4-f32"
/usr/bin/python3 -c "import json,sys; p=sys.argv[1]; m=json.load(open(p)); m['convention']={'rope_theta': 10001}; json.dump(m, open(p,'w'))" "$d/manifest.json"
rc=0
"$PECHECK" validate --dump "$d" --quiet --contract fp32-angles >"$tmp/wrong.out" || rc=$?
[ "$rc" = 1 ] && grep -qF "no contract met" "$tmp/wrong.out" ||
  { cat "$tmp/wrong.out"; echo "FAIL: a wrong base passed or met a contract"; exit 1; }
