#!/usr/bin/env bash
# Attention dumps (`"family": "attention"`, docs/dumps.md): pecheck golden's attention reads back
# exact; outputs a kernel with a real bug would write fail, each with the hint that names it (a
# scale applied twice, PyTorch's top-left causal mask in a decode step, grouped-query heads
# mapped round-robin, a window one key too narrow, causal dropped, T5's relative position reversed or
# its direction misstated, Shaw's reversed or clipped one short); P rounded to bf16 before P.V
# meets rounded-p and not exact; malformed dumps are one line and exit 2.
# Usage: PECHECK=build/pecheck dump_attention.sh
set -euo pipefail
source "$(dirname "$0")/dump_lib.sh"

golden() {  # golden DIR DTYPE CONVENTION [HEADS]
  "$PECHECK" golden --family attention --dtype "$2" --convention "$3" --heads "${4:-4}" --dim 16 \
    --positions 100:120 --seed 3 --out "$tmp/$1" >/dev/null
}
# rewrite DIR BUG: out.npy recomputed in numpy (float64, rounded once to the dump's dtype) with
# the manifest's convention and one bug: scale_twice, top_left, round_robin, window_minus_one,
# not_causal, p_bf16 (P rounded to bf16 before P.V).
rewrite() {
  "$py" - "$tmp/$1" "$2" <<'PY'
import json, sys
import numpy as np
d, bug = sys.argv[1], sys.argv[2]
m = json.load(open(f"{d}/manifest.json"))
c, bf16 = m["convention"], m["dtype"] == "bf16"
def load(name):
    a = np.load(f"{d}/{name}.npy")
    return (a.astype(np.uint32) << 16).view(np.float32).astype(np.float64) if bf16 else a.astype(np.float64)
def to_bf16(x):  # round to nearest even, as uint16 words
    b, one = np.asarray(x, np.float32).view(np.uint32), np.uint32(1)
    return ((b + np.uint32(0x7FFF) + ((b >> np.uint32(16)) & one)) >> np.uint32(16)).astype(np.uint16)
q, k, v = load("q"), load("k"), load("v")
if bug == "p_bf16":
    # Uniform weights over constant values: each row's P is 1/(i+1) rounded, which at 13 and 15 keys
    # errs by 0.75 and 0.875 u the same way in every term, and the output then rounds a further
    # step: 1.33 u of max|V'|, past the exact contract's bound.
    q[:], v[:] = 0, 0.75
    for name, a in (("q", q), ("v", v)):
        np.save(f"{d}/{name}.npy", to_bf16(a) if bf16 else a.astype(np.float32))
nq, H, D = q.shape
n, KV, _ = k.shape
scale = c.get("scale", 1 / np.sqrt(D)) * (1 / np.sqrt(D) if bug == "scale_twice" else 1)
window = c.get("window", 0) - (1 if bug == "window_minus_one" else 0)
causal = c["causal"] and bug != "not_causal"
out = np.zeros_like(q)
for h in range(H):
    g = h % KV if bug == "round_robin" else h // (H // KV)
    for r in range(nq):
        i = r if bug == "top_left" else n - nq + r  # the query's token: top-left counts from key 0
        keys = [j for j in range(n) if (not causal or j <= i) and (window <= 0 or j > i - window)]
        s = np.array([scale * q[r, h] @ k[j, g] for j in keys])
        p = np.exp(s - s.max())
        p /= p.sum()
        if bug == "p_bf16":
            p = (to_bf16(p).astype(np.uint32) << 16).view(np.float32).astype(np.float64)
        out[r, h] = p @ v[keys, g]
np.save(f"{d}/out.npy", to_bf16(out) if bf16 else out.astype(np.float32))
PY
}
validate() {  # validate STATUS NAME DIR [options]: validate --dump DIR, the output in $tmp/NAME.out
  local want=$1 name=$2 dir=$3
  shift 3
  expect "$want" "$name" -- "$PECHECK" validate --dump "$tmp/$dir" "$@"
}
says() { grep -qF -- "$2" "$tmp/$1.out" || { cat "$tmp/$1.out"; fail "$1: output lacks: $2"; }; }

# The reference's own outputs, in every form the dump takes, read back exact.
golden ref_f32 f32 causal=1,kv_heads=2,queries=3
validate 0 ref_f32 ref_f32 --json "$tmp/ref_f32.json"
says ref_f32 "exact contract met"
says ref_f32 "4 query heads over 2 K/V heads, the last 3 tokens query"
"$py" -c "import json,sys; r=json.load(open(sys.argv[1]))['results'][0]; \
assert r['property']=='attention.agrees_with_reference' and r['contract']['met']=='exact', r" "$tmp/ref_f32.json"
golden ref_bf16 bf16 causal=1,window=5,pe=alibi
validate 0 ref_bf16 ref_bf16
says ref_bf16 "ALiBi inside"
golden ref_full f32 causal=0,scale=0.125 2
validate 0 ref_full ref_full
# RoPE inside (Q and K before rotation), partial, far from position 0: its ladder adds RoPE's rungs.
golden ref_rope f32 causal=1,kv_heads=2,pe=rope,layout=interleaved,base=500000,rotary_dim=8
edit "$tmp/ref_rope" "m['convention']['rope']={'layout':'interleaved','rope_theta':500000,'partial_rotary_factor':0.5}"
validate 0 ref_rope ref_rope
says ref_rope "RoPE inside: rope(layout=interleaved,d=16,rot=8,base=500000)"
says ref_rope "exact contract met"
# The same dump read with the wrong base: no contract.
edit "$tmp/ref_rope" "m['convention']['rope']['rope_theta']=10000"
validate 1 rope_base ref_rope
says rope_base "not even fp32-angles"
# T5's bias inside (HF's position_bias handed to attention), the table given: read back exact; the
# relative position reversed and the direction mode misstated each fail, named.
golden ref_t5 bf16 causal=0,pe=t5,num_buckets=8,max_distance=20
validate 0 ref_t5 ref_t5
says ref_t5 "T5's bias inside (8 buckets, max_distance 20, bidirectional; the table given)"
says ref_t5 "exact contract met"
cp -r "$tmp/ref_t5" "$tmp/t5_reversed"
"$py" -c "import numpy as np,sys; p=np.load(sys.argv[1]); np.save(sys.argv[1], p.max() - p)" "$tmp/t5_reversed/positions.npy"
validate 1 t5_reversed t5_reversed
says t5_reversed "fits T5's bias read at query minus key"
cp -r "$tmp/ref_t5" "$tmp/t5_causal" && edit "$tmp/t5_causal" "m['convention']['t5']['bidirectional']=False"
validate 1 t5_causal t5_causal
says t5_causal "fits T5's bidirectional (encoder) bucketing, not the stated causal"
# At HF's bucketing (32, 128) 20 tokens meet the edge at distance 16, where a log in fp32 may take
# the bucket below: the output recomputed so, in float64 and rounded once, is read as correct.
golden t5_edge f32 causal=0,pe=t5,num_buckets=32,max_distance=128
"$py" - "$tmp/t5_edge" <<'PY'
import sys
import numpy as np
d = sys.argv[1]
q, k, v, table = (np.load(f"{d}/{a}.npy").astype(np.float64) for a in ("q", "k", "v", "table"))
p = np.load(f"{d}/positions.npy")
rel = p[None, :] - p[:, None]                      # key minus query
n = np.abs(rel)
coord = np.log(np.maximum(n, 1) / 8) / np.log(16) * 8
edge = (np.abs(coord - np.round(coord)) < 1e-9) & (np.round(coord) >= 1)
assert edge.any(), "no distance on an edge"
coord = np.where(edge, np.round(coord) - 0.5, coord)  # the bucket below there
bucket = (rel > 0) * 16 + np.where(n < 8, n, np.minimum(8 + np.floor(coord).astype(np.int64), 15))
nq, H, D = q.shape
out = np.zeros_like(q)
for h in range(H):
    s = np.einsum("id,jd->ij", q[:, h], k[:, h]) / np.sqrt(D) + table[bucket, h]
    w = np.exp(s - s.max(axis=1, keepdims=True))
    out[:, h] = (w / w.sum(axis=1, keepdims=True)) @ v[:, h]
np.save(f"{d}/out.npy", out.astype(np.float32))
PY
validate 0 t5_edge t5_edge
# Shaw's relative keys inside (q_i . r(p_j - p_i) added to the scores before scaling, the table
# (2K + 1, head_dim) given): read back exact; the relative position reversed and the distance
# clipped one short (a table of 2K - 1 rows read as if it were padded) each fail, named.
golden ref_shaw f32 causal=1,pe=shaw,max_distance=4
validate 0 ref_shaw ref_shaw
says ref_shaw "Shaw's relative keys inside (max_distance 4; the table given)"
says ref_shaw "exact contract met"
cp -r "$tmp/ref_shaw" "$tmp/shaw_reversed"
"$py" -c "import numpy as np,sys; p=np.load(sys.argv[1]); np.save(sys.argv[1], p.max() - p)" "$tmp/shaw_reversed/positions.npy"
validate 1 shaw_reversed shaw_reversed
says shaw_reversed "fits Shaw's relative keys read at query minus key"
golden shaw_short bf16 causal=0,pe=shaw,max_distance=3
"$py" -c "
import numpy as np, sys
t = np.load(sys.argv[1])
np.save(sys.argv[1], np.concatenate([t[-1:], t, t[:1]]))" "$tmp/shaw_short/table.npy"
edit "$tmp/shaw_short" "m['convention']['shaw']['max_distance']=4"
validate 1 shaw_short shaw_short
says shaw_short "fits Shaw's distance clipped to 3, not 4: the clip is one short"
# numpy's float64 recomputation, rounded once, is as good as the reference's.
golden numpy f32 causal=1,kv_heads=2,queries=3
rewrite numpy none
validate 0 numpy numpy

# Real bugs: each fails, and the hint names it.
golden twice f32 causal=1
rewrite twice scale_twice
validate 1 twice twice
says twice "the output fits scale 0.0625, not the default 0.25"
golden top_left f32 causal=1,queries=2
rewrite top_left top_left
validate 1 top_left top_left
says top_left "fits the causal mask aligned top-left"
golden rr f32 causal=1,kv_heads=2
rewrite rr round_robin
validate 1 rr rr
says rr "round-robin"
golden narrow f32 causal=1,window=6
rewrite narrow window_minus_one
validate 1 narrow narrow
says narrow "fits a window of 5 keys, not 6"
golden full f32 causal=1
rewrite full not_causal
validate 1 full full
says full "fits full (non-causal) attention, not the stated causal"

# P rounded to bf16 where it meets V (flash-attention's bf16 P.V): rounded-p, not exact. Uniform
# weights over constant values make the rounding show (see rewrite).
golden p_bf16 bf16 causal=1,kv_heads=2
rewrite p_bf16 p_bf16
validate 1 p_exact p_bf16
says p_exact "rounded-p contract met"
! grep -q "the output fits" "$tmp/p_exact.out" || fail "p_exact: a hint for a dump that meets rounded-p"
validate 0 p_rounded p_bf16 --contract rounded-p

# Bad input: one line, exit 2, nothing written.
golden bad f32 causal=1,kv_heads=2
refused bad bad_key "m['convention']['softcap']=30" 'unknown key "softcap"'
refused bad bad_window "m['convention']={'window':4}" 'a window needs "causal": true'
refused bad bad_fa "m['convention']['window_size']=[4,2]" "is not a causal sliding window"
refused bad bad_rope "m['convention']['pe']='rope'" 'pe "rope" needs "rope"'
refused bad bad_t5 "m['convention']['pe']='t5'" 'pe "t5" needs "t5"'
refused ref_t5 bad_t5_key "m['convention']['t5']['is_decoder']=True" 'unknown key "is_decoder"'
refused bad bad_shaw "m['convention']['pe']='shaw'" 'pe "shaw" needs "shaw"'
refused ref_shaw bad_shaw_k "m['convention']['shaw']['max_distance']=-1" "max_distance must be an integer"
refused ref_shaw bad_shaw_t5 "m['convention']['t5']={'num_buckets':8}" '"t5" is stated but pe is "shaw"'
cp -r "$tmp/ref_shaw" "$tmp/bad_shaw_table" && edit "$tmp/bad_shaw_table" "m['convention']['shaw']['max_distance']=5"
validate 2 bad_shaw_table bad_shaw_table
one_line bad_shaw_table "must be (2 max_distance + 1, head_dim) = (11, 16)"
cp -r "$tmp/ref_t5" "$tmp/bad_table" && "$py" -c "import numpy as np,sys; np.save(sys.argv[1], np.load(sys.argv[1])[:4])" \
  "$tmp/bad_table/table.npy"
validate 2 bad_table bad_table
one_line bad_table "must be (num_buckets, heads) = (8, 4)"
cp -r "$tmp/bad" "$tmp/bad_shape" && cp "$tmp/ref_full/out.npy" "$tmp/bad_shape/out.npy"
validate 2 bad_shape bad_shape
one_line bad_shape "out must have q's shape"
golden three f32 causal=1 3
cp -r "$tmp/bad" "$tmp/bad_heads" && cp "$tmp/three/k.npy" "$tmp/three/v.npy" "$tmp/bad_heads/"
validate 2 bad_heads bad_heads
one_line bad_heads "3 K/V heads do not divide q's 4 heads"
# flash-attention's window_size [left, 0] is Mistral's window of left + 1 keys.
cp -r "$tmp/ref_bf16" "$tmp/fa_window" && edit "$tmp/fa_window" "del m['convention']['window']; m['convention']['window_size']=[4,0]"
validate 0 fa_window fa_window
says fa_window "window 5"

# rounded-p governs attention: refused for a set of position encodings only.
"$PECHECK" golden --family alibi --positions 0:8 --heads 2 --out "$tmp/alibi" >/dev/null
validate 2 alibi_rp alibi --contract rounded-p
one_line alibi_rp "governs attention"
echo "dump_attention: ok"
