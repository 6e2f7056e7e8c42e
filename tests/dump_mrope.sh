#!/usr/bin/env bash
# validate --dump on M-RoPE dumps (family "mrope"): golden dumps validate with the convention
# stated and with it left to the fit, which must find the section, assignment, layout, rotary_dim
# and base again; a stated section the data contradict fails (exit 1) and says what the data fit;
# malformed positions, conventions and golden arguments are one line and exit 2.
set -euo pipefail
source "$(dirname "$0")/dump_lib.sh"
unstate() { edit "$1" "m.pop('convention')"; }

# 1. Qwen2-VL (sections), Qwen3-VL (round-robin), GLM-4.1V (GPT-J pairs, half the head rotated).
n=0
while read -r dim dtype convention want; do
  n=$((n + 1))
  d="$tmp/g$n"
  expect 0 "golden$n" -- "$PECHECK" golden --family mrope --dim "$dim" --dtype "$dtype" --heads 2 \
    --convention "$convention" --positions 0:16,100:4000:37 --out "$d"
  expect 0 "stated$n" -- "$PECHECK" validate --dump "$d" --quiet
  grep -q "exact contract met" "$tmp/stated$n.out" || { cat "$tmp/stated$n.out"; fail "stated$n: no contract line"; }
  unstate "$d"
  expect 0 "fit$n" -- "$PECHECK" validate --dump "$d" --quiet --json "$tmp/fit$n.json"
  grep -qF -- "convention: $want" "$tmp/fit$n.out" || { cat "$tmp/fit$n.out"; fail "fit$n: expected '$want'"; }
done <<'EOF2'
128 f32 mrope_section=16/24/24,grid=8x8 M-RoPE half_split, rotary_dim 128 of 128, sectioned [16, 24, 24], base 1000000 (fit
128 f32 interleaved=1,mrope_section=24/20/20,base=5000000,grid=12x16 M-RoPE half_split, rotary_dim 128 of 128, interleaved [24, 20, 20], base 5000000 (fit
128 bf16 layout=interleaved,rotary_dim=64,mrope_section=8/12/12,base=10000,grid=8x8 M-RoPE interleaved, rotary_dim 64 of 128, sectioned [8, 12, 12], base 10000 (fit
EOF2
"$py" - "$tmp/fit1.json" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
agreement = next(r for r in results if r["property"] == "mrope.agrees_with_reference")
assert agreement["verdict"] == "pass" and agreement["contract"]["met"] == "exact", agreement
assert agreement["max_error_u"] > 0 and agreement["cases"] == 186, agreement  # 16 + 106 text tokens, 64 patches
PY

# 1b. A batch: two sequences (the second the first's tokens reversed), axes "bnhd" and
# position_ids (3, batch, n), read as one dump of 2n tokens.
rm -rf "$tmp/batch"
cp -r "$tmp/g1" "$tmp/batch"
"$py" - "$tmp/batch" <<'PY'
import json, sys
import numpy as np
d = sys.argv[1]
for role in ("x", "y"):
    a = np.load(f"{d}/{role}.npy")
    np.save(f"{d}/{role}.npy", np.stack([a, a[::-1]]))
p = np.load(f"{d}/positions.npy")
np.save(f"{d}/positions.npy", np.stack([p, p[:, ::-1]], axis=1))
m = json.load(open(f"{d}/manifest.json"))
m["axes"] = "bnhd"
m.pop("convention", None)  # g1 is unstated by now: read from the data
json.dump(m, open(f"{d}/manifest.json", "w"))
PY
expect 0 batch -- "$PECHECK" validate --dump "$tmp/batch" --quiet
grep -qF "M-RoPE, 372 tokens x 2 heads x 128" "$tmp/batch.out" || { cat "$tmp/batch.out"; fail "batch: not 2 x 186 tokens"; }
grep -qF "sectioned [16, 24, 24], base 1000000 (fit" "$tmp/batch.out" || { cat "$tmp/batch.out"; fail "batch: misread"; }

# 2. A stated section the data contradict: Qwen3-VL's data stated as Qwen2-VL's.
cp -r "$tmp/g2" "$tmp/contradicted"
edit "$tmp/contradicted" "m['convention'] = {'rope_parameters': {'rope_theta': 5e6, 'mrope_section': [16, 24, 24]}}"
expect 1 contradicted -- "$PECHECK" validate --dump "$tmp/contradicted"
grep -q "they fit interleaved \[24, 20, 20\]" "$tmp/contradicted.out" ||
  { cat "$tmp/contradicted.out"; fail "contradicted: no hint of what the data fit"; }
grep -qE "^  mrope.agrees_with_reference +FAIL" "$tmp/contradicted.out" ||
  { cat "$tmp/contradicted.out"; fail "contradicted: the failure is not mrope.agrees_with_reference's"; }

# 2b. The convention `pecheck manifest` prints from a Qwen2-VL config (4.x's rope_scaling of type
# "mrope"; 5.x's text_config.rope_parameters) is an M-RoPE manifest the reader takes.
echo '{"hidden_size": 1024, "num_attention_heads": 8, "rope_theta": 1e6,
       "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}}' >"$tmp/v4.json"
echo '{"model_type": "qwen2_vl", "text_config": {"hidden_size": 1024, "num_attention_heads": 8,
       "rope_parameters": {"rope_type": "default", "rope_theta": 1e6, "mrope_section": [16, 24, 24]}}}' >"$tmp/v5.json"
for v in v4 v5; do
  expect 0 "manifest_$v" -- "$PECHECK" manifest --from-hf-config "$tmp/$v.json"
  rm -rf "$tmp/$v"
  cp -r "$tmp/g1" "$tmp/$v"
  "$py" -c "import json,sys; m=json.load(open(sys.argv[1])); c=json.load(open(sys.argv[2])); assert c['family'] == 'mrope', c
m['convention'] = c['convention']; json.dump(m, open(sys.argv[1], 'w'))" "$tmp/$v/manifest.json" "$tmp/manifest_$v.out"
  expect 0 "stated_$v" -- "$PECHECK" validate --dump "$tmp/$v" --quiet
  grep -qF "sectioned [16, 24, 24] (section stated), base 1000000 (stated)" "$tmp/stated_$v.out" ||
    { cat "$tmp/stated_$v.out"; fail "stated_$v: the config's convention was not read as stated"; }
done

# 3. Malformed dumps: one line, exit 2.
cp -r "$tmp/g1" "$tmp/bad"
"$py" -c "import numpy as np, sys; p = sys.argv[1]; np.save(p, np.load(p)[0])" "$tmp/bad/positions.npy"
expect 2 flat_positions -- "$PECHECK" validate --dump "$tmp/bad"
one_line flat_positions "M-RoPE positions must be (3, n) or (3, batch, n)"
for case in "section|{'mrope_section': [16, 24]}|three positive integers" \
  "rule|{'rope_parameters': {'rope_type': 'yarn', 'factor': 4, 'rope_theta': 1e6}}|M-RoPE takes no scaling rule" \
  "key|{'mrope_sections': [16, 24, 24]}|unknown key"; do
  IFS='|' read -r name convention message <<<"$case"
  rm -rf "$tmp/$name"
  cp -r "$tmp/g1" "$tmp/$name"
  edit "$tmp/$name" "m['convention'] = $convention"
  expect 2 "$name" -- "$PECHECK" validate --dump "$tmp/$name"
  one_line "$name" "$message"
done
expect 2 grid -- "$PECHECK" golden --family mrope --positions 0:4 --convention grid=4by4 --out "$tmp/nogrid"
one_line grid "grid must be RxC"
[ ! -e "$tmp/nogrid" ] || fail "golden wrote a dump for a bad --convention"
echo "dump_mrope: ok"
