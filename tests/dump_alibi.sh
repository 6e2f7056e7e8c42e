#!/usr/bin/env bash
# ALiBi dumps: golden bias tensors (causal and symmetric, 12 heads: not a power of two) validate
# with the paper's slopes read back; BLOOM's key form validates; slopes from the wrong rule (the
# power-of-two formula applied to 12 heads, a known bug) fail alibi.slopes naming the heads;
# malformed ALiBi dumps are one line and exit 2.
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
echo "dump_alibi: all expectations held"
