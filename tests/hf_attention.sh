#!/usr/bin/env bash
# PyTorch's and transformers' attention (examples/huggingface/dump_attention.py), dumped and read
# by validate --dump: SDPA prefill in f32, bf16 and f16, grouped-query (enable_gqa), a stated
# scale, 300 tokens; transformers' sdpa_attention_forward (a packed grouped-query decode step, a
# sliding window as a mask), eager_attention_forward, T5's compute_bias handed to SDPA as its
# float mask and Wav2Vec2-BERT's relative_key (Shaw's relative keys) must pass; SDPA's is_causal with a chunk of
# queries against more keys must fail, with the top-left hint. Current stack only (torch 2's SDPA):
# skipped (exit 77) without $PECHECK_HF_PYTHON.
set -euo pipefail
src=$1
: "${PECHECK:?}"
if [ -z "${PECHECK_HF_PYTHON:-}" ]; then
  echo "SKIP: no python with transformers (PECHECK_HF_PYTHON unset: scripts/hf-venv failed or was not run)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$src/examples/huggingface" && "$PECHECK_HF_PYTHON" dump_attention.py "$tmp/dumps") >/dev/null 2>"$tmp/py.err" ||
  { cat "$tmp/py.err"; echo "FAIL: dump_attention.py"; exit 1; }
rc=0
"$PECHECK" validate --dump "$tmp/dumps" --quiet --json "$tmp/r.json" >"$tmp/out" 2>&1 || rc=$?
grep -E "^dump|attention.agrees" "$tmp/out"
[ "$rc" = 1 ] || { cat "$tmp/out"; echo "FAIL: validate exited $rc, expected 1 (one dump has the is_causal pitfall)"; exit 1; }
"$PECHECK_HF_PYTHON" - "$tmp/r.json" "$tmp/dumps/expected.json" <<'PY'
import json, sys
report, made = (json.load(open(p)) for p in sys.argv[1:3])
by = {r["dump"].rsplit("/", 1)[-1]: r for r in report["results"]}
assert set(by) == set(made["dumps"]), sorted(set(by) ^ set(made["dumps"]))
failures = []
for name, want in sorted(made["dumps"].items()):
    r = by[name]
    if r["verdict"] != want["verdict"]:
        failures.append(f"{name}: {r['verdict']}, expected {want['verdict']}: {r['message']}")
    if "hint" in want and want["hint"] not in r["message"]:
        failures.append(f"{name}: the message lacks '{want['hint']}': {r['message']}")
    if want["verdict"] == "pass" and r["contract"]["met"] not in ("exact", "rounded-p"):
        failures.append(f"{name}: contract {r['contract']}")
print("\n".join(failures))
print(f"hf_attention (torch {made['torch']}, transformers {made['transformers']}): {len(by) - len(failures)} of "
      f"{len(by)} dumps read as expected")
sys.exit(1 if failures else 0)
PY
