#!/usr/bin/env bash
# Zero false alarms: the default verification of the correct encoders (every property x encoder x
# dtype, 100 cases) passes for every seed in [FIRST, LAST]. Usage: false_alarms.sh FIRST LAST.
set -uo pipefail
pecheck="${PECHECK:?set PECHECK to build/pecheck}"
first="${1:?first seed}" last="${2:?last seed}"
failed=()
runs=0
for seed in $(seq "$first" "$last"); do
  out=$("$pecheck" verify --seed "$seed" --quiet 2>&1)
  rc=$?
  runs=$((runs + 1))
  if [ "$rc" -ne 0 ]; then
    failed+=("$seed")
    echo "seed $seed: exit $rc"
    echo "$out" | grep -v " pass$" | head -40
  else
    echo "seed $seed: $(echo "$out" | tail -1)"
  fi
done
if [ "${#failed[@]}" -ne 0 ]; then
  echo "FAIL: false alarms at seeds ${failed[*]} (of $runs)"
  exit 1
fi
echo "false alarms: none in $runs seeds ($first..$last)"
