#!/usr/bin/env bash
# 2-D RoPE dumps (`"family": "rope2d"`, docs/dumps.md): pecheck golden's axial RoPE, both
# pairings, read back with nothing stated (layout, pairing and base fitted) and exact; Pixtral's
# split frequencies fitted too; rows and columns exchanged fail and are named, as are frequencies
# stated the wrong kind; a pairing stated wrong fits nothing; malformed dumps are one line and exit 2.
# Usage: PECHECK=build/pecheck dump_rope2d.sh
set -euo pipefail
source "$(dirname "$0")/dump_lib.sh"

golden() {  # golden DIR DTYPE CONVENTION
  "$PECHECK" golden --family rope2d --dtype "$2" --convention "$3" --dim 64 --heads 2 --positions 0:96 \
    --seed 5 --out "$tmp/$1" >/dev/null
}
validate() {  # validate STATUS NAME DIR [options]
  local want=$1 name=$2 dir=$3
  shift 3
  expect "$want" "$name" -- "$PECHECK" validate --dump "$tmp/$dir" --quiet "$@"
}
says() { grep -qF -- "$2" "$tmp/$1.out" || { cat "$tmp/$1.out"; fail "$1: output lacks: $2"; }; }

# Qwen2-VL's vision tower (one RoPE over the head, rotate_half) and per-half axial RoPE, fitted.
golden whole f32 layout=half_split,pairing=whole_head,base=10000,columns=12
edit "$tmp/whole" "del m['convention']"
validate 0 whole whole --json "$tmp/whole.json"
says whole "2-D RoPE half_split, pairing whole_head, head_dim 64"
says whole "base 10000 (fit"
"$py" -c "import json,sys; r={x['property']: x for x in json.load(open(sys.argv[1]))['results']}; \
assert r['rope2d.agrees_with_reference']['contract']['met']=='exact', r" "$tmp/whole.json"
golden half bf16 layout=half_split,pairing=per_half,base=100,columns=12
edit "$tmp/half" "del m['convention']"
validate 0 half half
says half "pairing per_half"
golden inter f32 layout=interleaved,base=10000,columns=12
validate 0 inter inter
says inter "2-D RoPE interleaved"

# Rows and columns exchanged (an encoder that turns the first half by the column): fails, named.
cp -r "$tmp/whole" "$tmp/swapped"
mv "$tmp/swapped/rows.npy" "$tmp/swapped/tmp.npy" && mv "$tmp/swapped/cols.npy" "$tmp/swapped/rows.npy" &&
  mv "$tmp/swapped/tmp.npy" "$tmp/swapped/cols.npy"
validate 1 swapped swapped
says swapped "the axes are swapped"
# A pairing stated wrong: nothing fits under it.
cp -r "$tmp/whole" "$tmp/wrong" && edit "$tmp/wrong" "m['convention']={'pairing':'per_half'}"
validate 1 wrong wrong
says wrong "none fits"

# Pixtral's split frequencies (the column turned by the odd-indexed frequencies of one RoPE of
# width d): read with nothing stated, in both pairings and layouts, and exact; stated shared, the
# report names the split; shared frequencies stated split are named too.
for conv in pairing=whole_head,layout=half_split pairing=per_half,layout=half_split layout=interleaved; do
  golden split f32 "$conv,base=10000,columns=12,frequencies=split"
  edit "$tmp/split" "del m['convention']"
  validate 0 split split --json "$tmp/split.json"
  says split "frequencies split (Pixtral's"
  "$py" -c "import json,sys; r={x['property']: x for x in json.load(open(sys.argv[1]))['results']}; \
assert r['rope2d.agrees_with_reference']['contract']['met']=='exact', r" "$tmp/split.json"
  rm -rf "$tmp/split"
done
golden split bf16 pairing=whole_head,layout=half_split,base=100,columns=12,frequencies=split
edit "$tmp/split" "m['convention']={'frequencies':'shared'}"
validate 1 split_as_shared split
says split_as_shared "the frequencies are split: read so it is 2-D RoPE half_split, pairing whole_head"
cp -r "$tmp/whole" "$tmp/shared_as_split" && edit "$tmp/shared_as_split" "m['convention']={'frequencies':'split'}"
validate 1 shared_as_split shared_as_split
says shared_as_split "the frequencies are shared: read so it is 2-D RoPE half_split, pairing whole_head"

# Bad input: one line, exit 2.
refused inter bad_key "m['convention']['rotary_dim']=16" 'unknown key "rotary_dim"'
refused inter bad_pairing "m['convention']['pairing']='rows_first'" "pairing must be per_half or whole_head"
refused inter bad_frequencies "m['convention']['frequencies']='odd'" "frequencies must be shared or split"
cp -r "$tmp/inter" "$tmp/bad_dim"
"$py" -c "import numpy as np,sys; d=sys.argv[1]; [np.save(f'{d}/{r}.npy', np.load(f'{d}/{r}.npy')[..., :6]) for r in 'xy']" \
  "$tmp/bad_dim"
validate 2 bad_dim bad_dim
one_line bad_dim "must be a multiple of 4 (2 axes of pairs)"
cp -r "$tmp/inter" "$tmp/bad_cols" && "$py" -c "import numpy as np,sys; np.save(sys.argv[1], np.arange(5))" \
  "$tmp/bad_cols/cols.npy"
validate 2 bad_cols bad_cols
echo "dump_rope2d: ok"
