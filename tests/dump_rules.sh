#!/usr/bin/env bash
# validate --dump reads every scaling rule, and speaks HF: golden dumps of Llama 3, YaRN, dynamic
# NTK and linear RoPE validate with the convention stated in HF's words (transformers 4's
# rope_theta, partial_rotary_factor, rope_scaling verbatim; transformers 5's rope_parameters, flat
# and keyed by layer type) and with it left to the fit, which must name the
# rule and its parameters (text and JSON fields); a manifest key outside the vocabulary, a rule
# the catalogue lacks, and data the declared dtype cannot hold are one line and exit 2; in a
# directory of dumps the others are still validated.
set -euo pipefail
source "$(dirname "$0")/dump_lib.sh"
positions=0:70,100:8192:97,8192:1000000:4099,4000000,16777215

# 1. Each rule: stated in HF's words it validates; unstated, the fit names it with its parameters.
n=0
while read -r dtype convention want; do
  n=$((n + 1))
  d="$tmp/r$n"
  expect 0 "golden$n" -- "$PECHECK" golden --family rope --dim 128 --heads 1 --dtype "$dtype" \
    --convention "$convention" --positions "$positions" --out "$d"
  # HF's words: rope_theta for base, partial_rotary_factor for rotary_dim, head_dim.
  edit "$d" "c=m['convention']; c['rope_theta']=c.pop('base'); c['partial_rotary_factor']=c.pop('rotary_dim')/128; c['head_dim']=128"
  expect 0 "stated$n" -- "$PECHECK" validate --dump "$d" --quiet
  # transformers 5's words: one rope_parameters dict with rope_theta and partial_rotary_factor inside.
  edit "$d" "c=m['convention']; r=c.pop('rope_scaling', {}); r['rope_theta']=c.pop('rope_theta'); r['partial_rotary_factor']=c.pop('partial_rotary_factor'); c['rope_parameters']=r"
  expect 0 "stated5_$n" -- "$PECHECK" validate --dump "$d" --quiet
  # ... and keyed by layer type, layer_type naming the one the dump holds.
  edit "$d" "c=m['convention']; c['rope_parameters']={'full_attention': c['rope_parameters'], 'sliding_attention': {'rope_theta': 10000}}; c['layer_type']='full_attention'"
  expect 0 "keyed$n" -- "$PECHECK" validate --dump "$d" --quiet
  edit "$d" "m.pop('convention')"
  expect 0 "fit$n" -- "$PECHECK" validate --dump "$d" --quiet --json "$tmp/fit$n.json"
  grep -qF -- "$want" "$tmp/fit$n.out" || { cat "$tmp/fit$n.out"; fail "fit$n: expected '$want'"; }
done <<'EOF'
f32 layout=half_split,base=500000,rope_type=llama3,factor=8,low_freq_factor=1,high_freq_factor=4,original_max_position_embeddings=8192 Llama 3 scaling by 8, low_freq_factor 1, high_freq_factor 4
bf16 layout=half_split,base=500000,rope_type=llama3,factor=8,low_freq_factor=1,high_freq_factor=4,original_max_position_embeddings=8192 Llama 3 scaling by 8, low_freq_factor 1, high_freq_factor 4
f32 layout=half_split,base=10000,rope_type=yarn,factor=4,original_max_position_embeddings=4096 YaRN scaling by 4
bf16 layout=interleaved,rotary_dim=64,base=10000,rope_type=linear,factor=4 linear scaling by 4 (fit
EOF
"$py" - "$tmp/fit1.json" "$tmp/fit3.json" <<'PY'
import json, sys
llama = json.load(open(sys.argv[1]))["results"][0]["reading"]
spec = llama["spec"]
assert spec["rule"] == "llama3" and spec["factor"] == 8 and spec["base"] == 500000, spec
assert spec["low_freq_factor"] == 1 and spec["high_freq_factor"] == 4, spec
assert not llama["ambiguous"] and any(t["rule"] == "none" and not t["explains"] for t in llama["tried"]), llama
yarn = json.load(open(sys.argv[2]))["results"][0]["reading"]
assert yarn["spec"]["rule"] == "yarn" and abs(yarn["measured_magnitude"] - 1.1386294) < 1e-6, yarn
PY

# 2. Dynamic NTK: plain RoPE at a larger base when nothing is stated; its length when HF's
#    rope_scaling and rope_theta are.
d="$tmp/dyn"
expect 0 gdyn -- "$PECHECK" golden --family rope --dim 128 --heads 1 --convention \
  layout=half_split,base=10000,rope_type=dynamic,factor=4,original_max_position_embeddings=2048,seq_len=8192 \
  --positions "$positions" --out "$d"
edit "$d" "m['convention']={'rope_theta': 10000, 'rope_scaling': {'rope_type': 'dynamic', 'factor': 4, 'original_max_position_embeddings': 2048}}"
expect 0 dyn -- "$PECHECK" validate --dump "$d" --quiet
grep -qF "dynamic NTK, factor 4, L0 2048, at length L = 8192" "$tmp/dyn.out" || { cat "$tmp/dyn.out"; fail "dynamic NTK's length not read"; }

# 3. A stated rule the data contradicts is said, and fails.
d="$tmp/r1"
edit "$d" "m['convention']={'rope_theta': 500000, 'rope_scaling': {'rope_type': 'linear', 'factor': 8}}"
expect 1 contradicted -- "$PECHECK" validate --dump "$d" --quiet
grep -qF "the stated linear scaling does not explain the pairs; they read as" "$tmp/contradicted.out" ||
  { cat "$tmp/contradicted.out"; fail "the contradiction is not said"; }

# 4. Malformed or unsupported statements: one line, exit 2.
malformed() {  # malformed NAME PYTHON-EDIT TEXT
  rm -rf "$tmp/m"
  cp -r "$tmp/r4" "$tmp/m"
  edit "$tmp/m" "$2"
  expect 2 "$1" -- "$PECHECK" validate --dump "$tmp/m" --json "$tmp/$1.json"
  one_line "$1" "$3"
  [ ! -e "$tmp/$1.json" ] || fail "$1: a report was written"
}
malformed flatkey "m['convention']={'rope_type': 'llama3', 'factor': 8}" 'unknown key "factor"'
malformed scalingkey "m['convention']={'rope_scaling': {'rope_type': 'yarn', 'factor': 4, 'beta': 2}}" 'unknown key "beta"'
malformed longrope "m['convention']={'rope_scaling': {'rope_type': 'longrope', 'factor': 4}}" 'LongRoPE needs "short_factor"'
malformed longl0 "m['convention']={'rope_scaling': {'rope_type': 'longrope', 'factor': 4, 'short_factor': [1], 'long_factor': [2]}}" 'needs "original_max_position_embeddings"'
malformed longlen "m['convention']={'rope_scaling': {'rope_type': 'su', 'factor': 4, 'short_factor': [1, 1], 'long_factor': [2], 'original_max_position_embeddings': 64}}" "short_factor has 2 entries, long_factor 1"
malformed longdim "m['convention']={'rotary_dim': 8, 'rope_scaling': {'rope_type': 'longrope', 'factor': 4, 'short_factor': [1], 'long_factor': [2], 'original_max_position_embeddings': 64}}" "needs rotary_dim / 2 = 4 entries, got 1"
malformed longneg "m['convention']={'rope_scaling': {'rope_type': 'longrope', 'factor': 4, 'short_factor': [1, -1], 'long_factor': [2, 2], 'original_max_position_embeddings': 64}}" "finite and > 0"
malformed truncate "m['convention']={'rope_parameters': {'rope_type': 'linear', 'factor': 4, 'truncate': False}}" '"truncate" does not belong to rope_type "linear", which takes factor'
malformed keyed "m['convention']={'rope_parameters': {'full_attention': {'rope_theta': 1e6}, 'sliding_attention': {'rope_theta': 1e4}}}" 'keyed by layer type (full_attention, sliding_attention): choose one with "layer_type"'
malformed v4v5 "m['convention']={'rope_theta': 10000, 'rope_parameters': {'rope_theta': 500000}}" "convention: rope_parameters.rope_theta 500000 contradicts rope_theta 10000"
malformed headdim "m['convention']={'head_dim': 64}" "convention: head_dim 64"
malformed partial "m['convention']={'rotary_dim': 64, 'partial_rotary_factor': 0.25}" "contradicts partial_rotary_factor"
malformed nofactor "m['convention']={'rope_scaling': {'rope_type': 'llama3'}}" 'needs "factor"'
malformed notbf16 "m['arrays']['y']='y_f64.npy'" "is not a bf16 value"
# 5. manifest --from-hf-config: a Llama 3.1-style config.json gives the convention that
#    validates the Llama 3 dump as stated; a key pecheck does not know in it is exit 2.
cat >"$tmp/config.json" <<'JSON'
{"hidden_size": 256, "num_attention_heads": 2, "max_position_embeddings": 131072, "rope_theta": 500000.0,
 "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                  "original_max_position_embeddings": 8192, "rope_type": "llama3"}}
JSON
expect 0 hfconfig -- "$PECHECK" manifest --from-hf-config "$tmp/config.json"
"$py" - "$tmp/hfconfig.out" "$tmp/r1/manifest.json" <<'PY'
import json, sys
made = json.load(open(sys.argv[1]))
assert made["convention"]["head_dim"] == 128 and made["convention"]["rope_theta"] == 500000, made
m = json.load(open(sys.argv[2]))
m["convention"] = made["convention"]
json.dump(m, open(sys.argv[2], "w"))
PY
expect 0 hfstated -- "$PECHECK" validate --dump "$tmp/r1" --quiet
grep -qF "llama3 as stated" "$tmp/hfstated.out" || { cat "$tmp/hfstated.out"; fail "the HF config's convention was not used"; }
# Phi-3's config: LongRoPE's L0 and factor come from the two context lengths, as in HF.
"$py" -c "import json; json.dump({'hidden_size': 3072, 'num_attention_heads': 32, 'max_position_embeddings': 131072,
  'original_max_position_embeddings': 4096, 'rope_scaling': {'type': 'longrope', 'short_factor': [1.0] * 48,
  'long_factor': [1.0 + i for i in range(48)]}}, open('$tmp/phi3.json', 'w'))"
expect 0 hfphi3 -- "$PECHECK" manifest --from-hf-config "$tmp/phi3.json"
"$py" -c "import json, sys; r = json.load(open(sys.argv[1]))['convention']['rope_scaling']
assert r['factor'] == 32 and r['original_max_position_embeddings'] == 4096, r" "$tmp/hfphi3.out"
# transformers 5's config.json: rope_parameters, flat or keyed by layer type (--layer-type picks one).
"$py" - "$tmp" <<'PY'
import json, sys
llama = {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
         "original_max_position_embeddings": 8192}
base = {"hidden_size": 256, "num_attention_heads": 2, "max_position_embeddings": 131072}
json.dump(dict(base, rope_parameters=llama), open(sys.argv[1] + "/v5.json", "w"))
json.dump(dict(base, layer_types=["sliding_attention", "full_attention"],
               rope_parameters={"full_attention": llama, "sliding_attention": {"rope_type": "default", "rope_theta": 1e4}}),
          open(sys.argv[1] + "/v5keyed.json", "w"))
json.dump(dict(base, rope_parameters={"rope_type": "yarn", "rope_theta": 1e4, "factor": 4.0, "truncate": False}),
          open(sys.argv[1] + "/v5yarn.json", "w"))
json.dump(dict(base, rope_parameters={"full_attention": {"rope_type": "yarn", "rope_theta": 1e4, "factor": 4.0, "truncate": False}}),
          open(sys.argv[1] + "/v5yarnkeyed.json", "w"))
PY
for config in v5 v5keyed; do
  layer=(); [ "$config" = v5 ] || layer=(--layer-type full_attention)
  expect 0 "hf$config" -- "$PECHECK" manifest --from-hf-config "$tmp/$config.json" "${layer[@]}"
  "$py" - "$tmp/hf$config.out" "$tmp/r1/manifest.json" <<'PY'
import json, sys
made = json.load(open(sys.argv[1]))
m = json.load(open(sys.argv[2]))
m["convention"] = made["convention"]
json.dump(m, open(sys.argv[2], "w"))
PY
  expect 0 "hf${config}stated" -- "$PECHECK" validate --dump "$tmp/r1" --quiet
  grep -qF "llama3 as stated" "$tmp/hf${config}stated.out" || { cat "$tmp/hf${config}stated.out"; fail "$config: the config's convention was not used"; }
done
expect 2 hfnolayer -- "$PECHECK" manifest --from-hf-config "$tmp/v5keyed.json"
one_line hfnolayer "rope_parameters is keyed by layer type (full_attention, sliding_attention): choose one with --layer-type NAME"
expect 2 hfbadlayer -- "$PECHECK" manifest --from-hf-config "$tmp/v5keyed.json" --layer-type global
one_line hfbadlayer "--layer-type global: $tmp/v5keyed.json's rope_parameters has the layer types full_attention, sliding_attention"
# YaRN's L0 defaults to max_position_embeddings, as transformers 5 fills it; truncate is kept.
expect 0 hfyarn -- "$PECHECK" manifest --from-hf-config "$tmp/v5yarn.json"
"$py" -c "import json, sys; r = json.load(open(sys.argv[1]))['convention']['rope_parameters']
assert r['original_max_position_embeddings'] == 131072 and r['truncate'] is False, r" "$tmp/hfyarn.out"
# A layer type's own truncate is one transformers 5 never reads: refused, not silently changed.
expect 2 hfyarnkeyed -- "$PECHECK" manifest --from-hf-config "$tmp/v5yarnkeyed.json" --layer-type full_attention
one_line hfyarnkeyed "rope_parameters.full_attention.truncate is false, but transformers 5 reads truncate from the top"
sed -i 's/"rope_type": "llama3"/"rope_type": "llama3", "finetuned": true/' "$tmp/config.json"
expect 2 hfbad -- "$PECHECK" manifest --from-hf-config "$tmp/config.json"
grep -qF 'unknown key "finetuned"' "$tmp/hfbad.err" || { cat "$tmp/hfbad.err"; fail "the unknown key is not named"; }

# 6. A directory with one unreadable dump among good ones: the good ones are validated and
#    reported, the bad one is one line on stderr and in not_read, and the exit status is 2.
mkdir "$tmp/dir"
cp -r "$tmp/r2" "$tmp/dir/a-good"
cp -r "$tmp/r4" "$tmp/dir/b-bad"
edit "$tmp/dir/b-bad" "m['convention']={'rope_scaling': {'rope_type': 'su', 'factor': 4}}"
expect 2 mixed -- "$PECHECK" validate --dump "$tmp/dir" --quiet --json "$tmp/mixed.json"
[ "$(wc -l <"$tmp/mixed.err")" = 1 ] || { cat "$tmp/mixed.err"; fail "mixed: stderr is not one line"; }
grep -qF "b-bad/manifest.json" "$tmp/mixed.err" || { cat "$tmp/mixed.err"; fail "mixed: the bad dump is not named"; }
grep -qF "Llama 3 scaling by 8" "$tmp/mixed.out" || { cat "$tmp/mixed.out"; fail "mixed: the good dump was not read"; }
"$py" - "$tmp/mixed.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert [x["dump"].rsplit("/", 1)[-1] for x in r["not_read"]] == ["b-bad"], r["not_read"]
assert {x["dump"].rsplit("/", 1)[-1] for x in r["results"]} == {"a-good"}, r["results"]
PY
echo "dump_rules: all expectations held ($n rules read)"
