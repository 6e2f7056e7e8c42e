#!/usr/bin/env bash
# pecheck golden and validate --dump: golden dumps validate, with the convention stated and with
# it left to the fit (which must find it again, for every layout, partial rotary, base, linear
# factor and dtype); a corrupted output fails (exit 1); malformed dumps and golden arguments are
# one line and exit 2, with nothing written.
set -euo pipefail
source "$(dirname "$0")/dump_lib.sh"
unstate() { "$py" -c "import json,sys; p=sys.argv[1]; m=json.load(open(p)); m.pop('convention'); json.dump(m, open(p,'w'))" "$1/manifest.json"; }

# 1. Golden dumps validate, and the fit finds the convention golden wrote.
n=0
while read -r family dim dtype convention want; do
  n=$((n + 1))
  d="$tmp/g$n"
  expect 0 "golden$n" -- "$PECHECK" golden --family "$family" --dim "$dim" --dtype "$dtype" --convention "$convention" \
    --positions 0:70,1000:1003,65536,4000000,16777215 --out "$d"
  expect 0 "stated$n" -- "$PECHECK" validate --dump "$d" --quiet
  unstate "$d"
  expect 0 "fit$n" -- "$PECHECK" validate --dump "$d" --quiet
  grep -q -- "convention: $want" "$tmp/fit$n.out" || { cat "$tmp/fit$n.out"; fail "fit$n: expected '$want'"; }
done <<'EOF2'
rope 64 f32 layout=interleaved,base=10000 RoPE interleaved, rotary_dim 64 of 64, base 10000 (fit
rope 128 bf16 layout=half_split,rotary_dim=64,base=500000 RoPE half_split, rotary_dim 64 of 128, base 500000 (fit
rope 96 f16 layout=interleaved,rotary_dim=32,base=1000000 RoPE interleaved, rotary_dim 32 of 96, base 1000000 (fit
rope 64 f32 layout=half_split,base=10000,linear=4 RoPE half_split, rotary_dim 64 of 64, base 10000 (fit
sinusoidal 512 f32 layout=interleaved sinusoid interleaved, Vaswani frequencies, d_model 512, base 10000 (fit
sinusoidal 34 bf16 layout=concatenated,frequencies=fairseq sinusoid concatenated, fairseq frequencies, d_model 34, base 10000 (fit
sinusoidal 64 f16 layout=concatenated,base=500 sinusoid concatenated, Vaswani frequencies, d_model 64, base 500 (fit
EOF2
grep -q "linear scaling by 4 (fit" "$tmp/fit4.out" || { cat "$tmp/fit4.out"; fail "the linear factor was not fitted"; }

# 2. A wrong output fails, octave by octave: dim 0 of every token at position >= 65536 negated.
cp -r "$tmp/g1" "$tmp/bad"
"$py" - "$tmp/bad" <<'PY'
import struct, sys
p = sys.argv[1] + "/y.npy"
b = bytearray(open(p, "rb").read())
start = b.index(b"\n") + 1           # data follow the header line
row = 2 * 64 * 4                     # 2 heads x 64 f32 per token
for token in (73, 74, 75):           # positions 65536, 4000000, 16777215
    off = start + token * row
    (v,) = struct.unpack_from("<f", b, off)
    struct.pack_into("<f", b, off, -v)
open(p, "wb").write(b)
PY
expect 1 bad -- "$PECHECK" validate --dump "$tmp/bad" --json "$tmp/bad.json"
grep -q "holds within 2 u below position 65536" "$tmp/bad.out" || { cat "$tmp/bad.out"; fail "no octave finding"; }
"$py" - "$tmp/bad.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
assert r["property"] == "rope.agrees_with_reference" and r["verdict"] == "fail", r
octaves = {(o["from"], o["to"]): o["holds"] for o in r["octaves"]}
assert octaves[(0, 1)] and octaves[(32, 64)] and not octaves[(65536, 131072)], octaves
assert "position 65536" in r["counterexample"] or "position 4000000" in r["counterexample"] or "position 16777215" in r["counterexample"], r
PY

# 2b. A dump from a platform that flushes subnormals (XLA on CPU): two subnormal inputs at position
# 0 came back 0. Unstated that fails agreement; "ftz": true states the platform and it holds.
rm -rf "$tmp/z"; cp -r "$tmp/g1" "$tmp/z"
"$py" -c "
import numpy as np, sys
d = sys.argv[1]
x, y = np.load(d + '/x.npy'), np.load(d + '/y.npy')
assert x.dtype == np.float32 and x.ndim == 3
x[0, 0, :2] = [1e-39, -2e-39]
y[0, 0, :2] = [0.0, -0.0]
np.save(d + '/x.npy', x); np.save(d + '/y.npy', y)" "$tmp/z"
expect 1 ftzunstated -- "$PECHECK" validate --dump "$tmp/z" --quiet
edit "$tmp/z" "m['ftz']=True"
expect 0 ftzstated -- "$PECHECK" validate --dump "$tmp/z" --quiet --json "$tmp/ftz.json"
grep -qF "flushes subnormals to zero (stated)" "$tmp/ftzstated.out" || { cat "$tmp/ftzstated.out"; fail "ftz not said"; }
grep -q '"ftz": true' "$tmp/ftz.json" || fail "ftz not in the JSON"

# 2c. Such a platform flushes results too: a head of one normal value, FLT_MIN, turned at a
# position past 0, has both components below FLT_MIN, and XLA returns zeros. Unstated that is 1/u;
# stated, flushing explains it (gen::flushed_pair_slack).
rm -rf "$tmp/zr"; cp -r "$tmp/g1" "$tmp/zr"
"$py" -c "
import numpy as np, sys
d = sys.argv[1]
x, y, p = np.load(d + '/x.npy'), np.load(d + '/y.npy'), np.load(d + '/positions.npy')
t = int(np.flatnonzero(p.reshape(-1) != 0)[0])
x[t, 0, :] = 0.0
x[t, 0, 0] = np.finfo(np.float32).tiny
y[t, 0, :] = 0.0
np.save(d + '/x.npy', x); np.save(d + '/y.npy', y)" "$tmp/zr"
expect 1 ftzresultunstated -- "$PECHECK" validate --dump "$tmp/zr" --quiet
edit "$tmp/zr" "m['ftz']=True"
expect 0 ftzresultstated -- "$PECHECK" validate --dump "$tmp/zr" --quiet

# 2d. A learned table's sum too: x + E[pos] = 1.5 FLT_MIN - FLT_MIN cancels below FLT_MIN and
# comes back as zero. Unstated that is 2^23 u; stated, flushing explains it (gen::flushed_value_slack).
"$py" - "$tmp/lz" <<'PY'
import json, os, sys
import numpy as np
d = sys.argv[1]; os.makedirs(d)
tiny = np.finfo(np.float32).tiny
table = np.linspace(-1, 1, 8 * 4, dtype=np.float32).reshape(8, 4)
table[3, 2] = -tiny
positions = np.array([0, 3, 7], dtype=np.int64)
x = np.linspace(0.5, -0.5, 3 * 4, dtype=np.float32).reshape(3, 4)
x[1, 2] = np.float32(1.5) * tiny
y = (x + table[positions]).astype(np.float32)
y[1, 2] = 0.0
for k, v in {"table": table, "x": x, "y": y, "positions": positions}.items():
    np.save(f"{d}/{k}.npy", v)
json.dump({"encoder": "learned, flushed", "family": "learned", "dtype": "f32",
           "arrays": {k: k + ".npy" for k in ("table", "x", "y", "positions")}}, open(f"{d}/manifest.json", "w"))
PY
expect 1 ftzlearnedunstated -- "$PECHECK" validate --dump "$tmp/lz" --quiet
edit "$tmp/lz" "m['ftz']=True"
expect 0 ftzlearnedstated -- "$PECHECK" validate --dump "$tmp/lz" --quiet

# 3. Malformed dumps: one line, exit 2, nothing written.
mk() { rm -rf "$tmp/m"; cp -r "$tmp/g1" "$tmp/m"; }
malformed() {  # malformed NAME TEXT
  expect 2 "$1" -- "$PECHECK" validate --dump "$tmp/m" --json "$tmp/$1.json"
  one_line "$1" "$2"
  [ ! -e "$tmp/$1.json" ] || fail "$1: a report was written"
}
expect 2 nodir -- "$PECHECK" validate --dump "$tmp/none"
one_line nodir "no such directory"
mkdir "$tmp/empty"
expect 2 nomanifest -- "$PECHECK" validate --dump "$tmp/empty"
one_line nomanifest "no manifest.json"
mk; echo '{"family": "rope",' >"$tmp/m/manifest.json"; malformed badjson "not valid JSON"
mk; edit "$tmp/m" "m['family']='sinusoidal2d'"; malformed family "family 'sinusoidal2d' cannot be validated"
mk; edit "$tmp/m" "m['dtype']='f64'"; malformed dtype "unknown dtype 'f64'"
mk; edit "$tmp/m" "del m['arrays']['y']"; malformed norole 'missing "y"'
mk; edit "$tmp/m" "m['arrays']['y']='../y.npy'"; malformed escape "must be a relative path inside the dump"
mk; edit "$tmp/m" "m['axes']='nhx'"; malformed axes 'axes "nhx"'
mk; truncate -s -7 "$tmp/m/y.npy"; malformed truncated "y.npy"
mk; cp "$tmp/g5/table.npy" "$tmp/m/y.npy"; malformed shapes "x and y differ in shape"
mk; edit "$tmp/m" "m['arrays']['positions']='x.npy'"; malformed floatpos "is not an integer"
mk; printf 'not an npy file at all' >"$tmp/m/x.npy"; malformed magic "x.npy"
mk; edit "$tmp/m" "m['arrays']['y']='w.safetensors:y'"; malformed nosafetensors "w.safetensors"
mk; edit "$tmp/m" "m['convention']={'rotary_dim': 65}"; malformed badconvention "rotary_dim must be even"
mk; edit "$tmp/m" "m['ftz']='yes'"; malformed ftztype '"ftz" must be true or false'

npy_header() {  # npy_header FILE DESCR SHAPE: a v1.0 header with no data
  "$py" - "$@" <<'PY'
import sys
path, descr, shape = sys.argv[1:]
h = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
h += " " * (63 - (10 + len(h)) % 64) + "\n"
open(path, "wb").write(b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h.encode())
PY
}
mk; npy_header "$tmp/m/y.npy" '<c8' '(76, 2, 64)'; malformed unknowndtype "y.npy"
grep -q "c8" "$tmp/unknowndtype.err" || fail "the unknown dtype is not named"
mk; npy_header "$tmp/m/y.npy" '<f4' '(4294967296, 4294967296, 4294967296)'; malformed overflow "y.npy"

# safetensors: the same arrays in one file validate; a truncated one is refused.
mk
"$py" - "$tmp/m" <<'PY'
import json, struct, sys
d = sys.argv[1]
def npy(name):  # the golden files: v1.0, '<f4'/'<u2'/'<i8', C order, data after the header line
    b = open(f"{d}/{name}.npy", "rb").read()
    return b[b.index(b"\n") + 1:]
x, y, p = npy("x"), npy("y"), npy("positions")
header = {"x": {"dtype": "F32", "shape": [76, 2, 64], "data_offsets": [0, len(x)]},
          "y": {"dtype": "F32", "shape": [76, 2, 64], "data_offsets": [len(x), len(x) + len(y)]},
          "positions": {"dtype": "I64", "shape": [76], "data_offsets": [len(x) + len(y), len(x) + len(y) + len(p)]}}
h = json.dumps(header).encode()
open(f"{d}/all.safetensors", "wb").write(struct.pack("<Q", len(h)) + h + x + y + p)
m = json.load(open(f"{d}/manifest.json"))
m["arrays"] = {"x": "all.safetensors:x", "y": "all.safetensors:y", "positions": "all.safetensors:positions"}
json.dump(m, open(f"{d}/manifest.json", "w"))
PY
expect 0 safetensors -- "$PECHECK" validate --dump "$tmp/m" --quiet
grep -q "convention: RoPE interleaved, rotary_dim 64 of 64, base 10000 (fit" "$tmp/safetensors.out" ||
  { cat "$tmp/safetensors.out"; fail "safetensors dump not fitted"; }
truncate -s -3 "$tmp/m/all.safetensors"; malformed badsafetensors "all.safetensors"
edit "$tmp/m" "m['arrays']['x']='all.safetensors:q'"; truncate -s +3 "$tmp/m/all.safetensors"
malformed notensor "names tensor 'q'"

# 4. golden's own arguments.
expect 2 gpos -- "$PECHECK" golden --family rope --positions 5:3 --out "$tmp/gp"
one_line gpos "--positions: '5:3'"
expect 2 gbig -- "$PECHECK" golden --family rope --positions 16777216 --out "$tmp/gp"
one_line gbig "[0, 2^24)"
expect 2 gkey -- "$PECHECK" golden --family rope --convention scale=2 --positions 0:4 --out "$tmp/gp"
one_line gkey "unknown key 'scale'"
expect 2 godd -- "$PECHECK" golden --family rope --dim 63 --positions 0:4 --out "$tmp/gp"
one_line godd "head_dim must be even"
expect 2 gfull -- "$PECHECK" golden --family sinusoidal --positions 0:4 --out "$tmp/g1"
one_line gfull "exists and is not empty"
[ ! -e "$tmp/gp" ] || fail "golden left a directory behind"
echo "dump_validate: all expectations held ($n golden conventions)"
