#!/usr/bin/env bash
# examples/pytorch: the seeds' encoders run under PyTorch (Debian's python3-torch, installed by
# scripts/deps), dumped, and validated; the report must state each known finding.
set -euo pipefail
src=$1
: "${PECHECK:?}"
py=/usr/bin/python3  # Debian's python, which has python3-torch (not a pyenv shim first on PATH)
"$py" -c "import torch, numpy" || { echo "FAIL: $py lacks torch or numpy: run scripts/deps" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$py" "$src/examples/pytorch/dump_seeds.py" "$tmp/dumps"
rc=0
"$PECHECK" validate --dump "$tmp/dumps" --json "$tmp/r.json" >"$tmp/out" 2>&1 || rc=$?
cat "$tmp/out"
[ "$rc" = 1 ] || fail "validate exited $rc, expected 1 (the seeds have bugs)"
has() { grep -qF -- "$1" "$tmp/out" || fail "the report lacks: $1"; }

# apply_rope: a correct interleaved RoPE, base 10000, whose fp32 angles lose accuracy with position.
has "convention: RoPE interleaved, rotary_dim 64 of 64, base 10000 (fit"
# RotaryPositionalEmbedding: cos(sin(.)) is no rotation, and no RoPE convention fits it.
has "convention: none fits (RoPE"
has "no known rule explains every pair; nearest:"
# LearnedPositionalEncoding: exact inside its table, refuses positions past it.
has "positions >= max_len = 5000 fail (IndexError"
# RelativePositionEmbedding: its comment says j - i, its code computes i - j.
has "the relative position's sign is reversed"
# PositionalEncoding: the fp32 table, off by ~3.9e-4 up to position 5000.
has "convention: sinusoid interleaved, Vaswani frequencies, d_model 128, base 10000 (fit"
"$py" - "$tmp/r.json" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
by = {(r["dump"].rsplit("/", 1)[-1], r["property"]): r for r in results}

rope = by[("seed-apply-rope", "rope.agrees_with_reference")]
assert rope["verdict"] == "fail", rope
octaves = rope["octaves"]
assert octaves[0]["holds"] and octaves[1]["holds"], octaves[:2]           # positions 0 and 1
assert octaves[-1]["from"] == 32768 and octaves[-1]["max_error_u"] > 1e4, octaves[-1]
errors = [o["max_error_u"] for o in octaves[2:]]
assert errors[-1] > 100 * errors[0], errors                              # it grows with position

cos_sin = by[("seed-rotary-positional-embedding", "rope.orthogonal")]
assert cos_sin["verdict"] == "fail" and cos_sin["max_error_u"] > 1e6, cos_sin

table = by[("seed-positional-encoding", "sinusoidal.agrees_with_reference")]
assert table["verdict"] == "fail", table
last = table["octaves"][-1]
assert last["from"] == 4096 and 3.0e-4 < last["max_abs_error"] < 4.5e-4, last
assert by[("seed-positional-encoding", "sinusoidal.bounds")]["verdict"] == "pass"
assert by[("seed-learned-positional-encoding", "learned.agrees_with_reference")]["verdict"] == "pass"
shaw = by[("seed-relative-position-embedding", "shaw.agrees_with_reference")]
assert shaw["verdict"] == "fail" and shaw["max_error_u"] > 1e3, shaw
assert all(o["holds"] for o in shaw["octaves"] if o["to"] == 1), shaw["octaves"]  # distance 0: i - j = j - i
print("pytorch_seeds: every expected finding is in the report")
PY

# Had the learned module wrapped instead of refusing, the same dump would fail.
learned="$tmp/dumps/seed-learned-positional-encoding"
"$py" -c "import json,sys; p=sys.argv[1]; m=json.load(open(p)); m['past_table']={'refused': False}; json.dump(m, open(p,'w'))" \
  "$learned/manifest.json"
rc=0
"$PECHECK" validate --dump "$learned" >"$tmp/wrap" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "were accepted without an error" "$tmp/wrap" || { cat "$tmp/wrap"; fail "an accepting learned table passed"; }
