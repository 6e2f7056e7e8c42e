#!/usr/bin/env bash
# Score-bias dumps. ALiBi: golden bias tensors (causal and symmetric, 12 heads: not a power of
# two) validate with the paper's slopes read back; BLOOM's key form validates; slopes from the
# wrong rule (the power-of-two formula applied to 12 heads, a known bug) fail alibi.slopes naming
# the heads. T5: golden biases read back their bucketing (bidirectional and causal, max_distance);
# one entry from the neighbouring bucket fails, named; a stated max_distance the data contradicts
# reads as no bucketing; far from position 0 a wrong entry's distance octave is shown. Shaw: golden scores validate; a table read at p_i - p_j fails, named;
# a stated scale holds where the scores carry it. Malformed dumps are one line and exit 2.
set -euo pipefail
source "$(dirname "$0")/dump_lib.sh"

expect 0 g1 -- "$PECHECK" golden --family alibi --heads 12 --dtype bf16 --positions 0:48,1000,70000 --out "$tmp/ok/causal"
expect 0 g2 -- "$PECHECK" golden --family alibi --heads 8 --dtype f16 --convention causal=0 --positions 0:32 --out "$tmp/ok/sym"
# BLOOM's key form, (heads, 1, n) = slope_h p_j, in f32 from the paper's slopes.
"$py" - "$tmp/ok/key" <<'PY'
import json, os, sys
import numpy as np
d = sys.argv[1]; os.makedirs(d)
h, n = 12, 64
slopes = [2.0 ** (-8 * k / 8) for k in range(1, 9)] + [2.0 ** (-4 * k / 8) for k in (1, 3, 5, 7)]
np.save(f"{d}/key_bias.npy", (np.array(slopes)[:, None, None] * np.arange(n)[None, None, :]).astype(np.float32))
np.save(f"{d}/positions.npy", np.arange(n, dtype=np.int64))
json.dump({"encoder": "key form", "family": "alibi", "dtype": "f32",
           "arrays": {"key_bias": "key_bias.npy", "positions": "positions.npy"}}, open(f"{d}/manifest.json", "w"))
PY
expect 0 ok -- "$PECHECK" validate --dump "$tmp/ok" --quiet
grep -qF "ALiBi, 12 heads, the bias -m |p_i - p_j|; slopes read: 0.5" "$tmp/ok.out" || { cat "$tmp/ok.out"; fail "slopes not read"; }
grep -qF "ALiBi, 12 heads, BLOOM's key bias" "$tmp/ok.out" || { cat "$tmp/ok.out"; fail "key form not read"; }

# The power-of-two formula 2^(-8k/12) for 12 heads: every head's slope is wrong.
"$py" - "$tmp/ok/key" <<'PY'
import sys
import numpy as np
d = sys.argv[1]
a = np.load(f"{d}/key_bias.npy")
wrong = np.array([2.0 ** (-8 * k / 12) for k in range(1, 13)])
np.save(f"{d}/key_bias.npy", (wrong[:, None, None] * np.arange(a.shape[-1])[None, None, :]).astype(np.float32))
PY
expect 1 wrong -- "$PECHECK" validate --dump "$tmp/ok/key" --quiet
grep -qF "slopes are not the paper's for 12 heads: head 0 reads 0.629961, the rule gives 0.5" "$tmp/wrong.out" ||
  { cat "$tmp/wrong.out"; fail "the wrong slopes are not named"; }

malformed() {  # malformed NAME PYTHON-EDIT-OF-MANIFEST TEXT
  rm -rf "$tmp/m"; cp -r "$tmp/ok/sym" "$tmp/m"
  edit "$tmp/m" "$2"
  expect 2 "$1" -- "$PECHECK" validate --dump "$tmp/m"
  one_line "$1" "$3"
}
malformed both "m['arrays']['key_bias']='bias.npy'" 'has "bias" (heads, n, n) or "key_bias" (heads, n), one'
malformed stated "m['convention']={'causal': True}" "states no convention"
malformed shape "m['arrays']['bias']='positions.npy'" "bias must be (heads, n, n)"
# T5: the bucketing read back; positions past max_distance tell 128 from 256.
pos=0:40,100,200,300,700,1500
expect 0 t1 -- "$PECHECK" golden --family t5 --heads 4 --positions "$pos" --out "$tmp/t5/enc"
expect 0 t2 -- "$PECHECK" golden --family t5 --heads 2 --dtype bf16 --convention bidirectional=0,max_distance=256 \
  --positions "$pos" --out "$tmp/t5/dec"
for d in enc dec; do edit "$tmp/t5/$d" "m.pop('convention')"; done
expect 0 t5 -- "$PECHECK" validate --dump "$tmp/t5" --quiet
grep -qF "convention: T5 bidirectional, 32 buckets, max_distance 128" "$tmp/t5.out" || { cat "$tmp/t5.out"; fail "t5 encoder not read"; }
grep -qF "convention: T5 causal, 32 buckets, max_distance 256" "$tmp/t5.out" || { cat "$tmp/t5.out"; fail "t5 decoder not read"; }
# One entry from the neighbouring bucket: named, and no bucketing explains the dump any more.
"$py" - "$tmp/t5/enc" <<'PY'
import sys
import numpy as np
d = sys.argv[1]
b, t = np.load(f"{d}/bias.npy"), np.load(f"{d}/table.npy")
b[1, 0, 44] = t[30, 1] if b[1, 0, 44] != t[30, 1] else t[29, 1]  # query 0, key at 1500
np.save(f"{d}/bias.npy", b)
PY
edit "$tmp/t5/enc" "m['convention']={'bidirectional': True, 'max_distance': 128}"
expect 1 t5bad -- "$PECHECK" validate --dump "$tmp/t5/enc" --quiet
grep -qF "no T5 bucketing explains every entry" "$tmp/t5bad.out" || { cat "$tmp/t5bad.out"; fail "the bad entry passed"; }
grep -qF "head 1, query 0 key 44 (relative 1500)" "$tmp/t5bad.out" || { cat "$tmp/t5bad.out"; fail "the bad entry is not named"; }
edit "$tmp/t5/dec" "m['convention']={'max_distance': 128}"
expect 1 t5wrong -- "$PECHECK" validate --dump "$tmp/t5/dec" --quiet
grep -qF "no T5 bucketing explains every entry" "$tmp/t5wrong.out" || { cat "$tmp/t5wrong.out"; fail "a wrong max_distance passed"; }
# Far from position 0, a wrong entry at distance 1 is in an octave of distance the table shows
# (the tokens are counted by distance, as the errors are filed), not lost from it.
expect 0 t5_far_golden -- "$PECHECK" golden --family t5 --heads 2 --positions 5000:5040 --out "$tmp/t5far"
"$py" - "$tmp/t5far" <<'PY'
import sys
import numpy as np
d = sys.argv[1]
b, t = np.load(f"{d}/bias.npy"), np.load(f"{d}/table.npy")
b[0, 0, 1] = t[0, 0] if b[0, 0, 1] != t[0, 0] else t[2, 0]  # query 0, key 1: distance 1
np.save(f"{d}/bias.npy", b)
PY
expect 1 t5_far -- "$PECHECK" validate --dump "$tmp/t5far"
grep -qE "^    \[1,2\) .*over the bound" "$tmp/t5_far.out" || { cat "$tmp/t5_far.out"; fail "t5_far: the distance-1 octave is not shown failing"; }
grep -qF "below distance 1;" "$tmp/t5_far.out" || { cat "$tmp/t5_far.out"; fail "t5_far: the summary does not say the octaves are of distance"; }
rm -rf "$tmp/m"; cp -r "$tmp/t5/dec" "$tmp/m"; edit "$tmp/m" "m['convention']={'buckets': 32}"
expect 2 t5key -- "$PECHECK" validate --dump "$tmp/m"
one_line t5key 'unknown key "buckets"'

# Shaw's relative scores: golden's validate (bf16, K = 4, positions past K); the table read at
# p_i - p_j (rows reversed: the sign bug) fails and says so; a stated scale (an attention layer's
# 1/sqrt(d)) holds only where the scores carry it; malformed Shaw dumps are one line, exit 2.
expect 0 shaw_golden -- "$PECHECK" golden --family shaw --dim 16 --dtype bf16 --positions 0:12,40:60:3 --out "$tmp/shaw"
expect 0 shaw -- "$PECHECK" validate --dump "$tmp/shaw" --quiet
grep -qF "convention: Shaw, K = 4 (the table's 2K + 1 rows), head_dim 16, scale 1" "$tmp/shaw.out" ||
  { cat "$tmp/shaw.out"; fail "shaw not read"; }
rm -rf "$tmp/m"; cp -r "$tmp/shaw" "$tmp/m"
"$py" -c "import numpy as np, sys; p = sys.argv[1]; np.save(p, np.load(p)[::-1].copy())" "$tmp/m/table.npy"
expect 1 shaw_reversed -- "$PECHECK" validate --dump "$tmp/m" --quiet
grep -qF "the relative position's sign is reversed" "$tmp/shaw_reversed.out" ||
  { cat "$tmp/shaw_reversed.out"; fail "the reversed table was not named"; }
expect 0 shaw_f32 -- "$PECHECK" golden --family shaw --dim 64 --positions 0:20 --out "$tmp/shaw32"
"$py" -c "import numpy as np, sys; p = sys.argv[1]; np.save(p, (np.load(p) * np.float32(0.125)).astype(np.float32))" \
  "$tmp/shaw32/scores.npy"
expect 1 shaw_unstated -- "$PECHECK" validate --dump "$tmp/shaw32" --quiet
edit "$tmp/shaw32" "m['convention'] = {'scale': 0.125}"
expect 0 shaw_scaled -- "$PECHECK" validate --dump "$tmp/shaw32" --quiet
for case in "even|np.save(d + '/table.npy', np.load(d + '/table.npy')[:8])|an odd row count" \
  "scores|np.save(d + '/scores.npy', np.load(d + '/scores.npy')[:, :5])|the scores must be"; do
  IFS='|' read -r name change message <<<"$case"
  rm -rf "$tmp/m"; cp -r "$tmp/shaw" "$tmp/m"
  "$py" -c "import numpy as np, sys; d = sys.argv[1]; $change" "$tmp/m"
  expect 2 "shaw_$name" -- "$PECHECK" validate --dump "$tmp/m"
  one_line "shaw_$name" "$message"
done
rm -rf "$tmp/m"; cp -r "$tmp/shaw" "$tmp/m"; edit "$tmp/m" "m['convention'] = {'scaling': 0.5}"
expect 2 shaw_key -- "$PECHECK" validate --dump "$tmp/m"
one_line shaw_key 'unknown key "scaling"'
echo "dump_biases: all expectations held"
