#!/usr/bin/env bash
# Zero false alarms: the default verification of the correct encoders (every property x encoder x
# dtype, 100 cases) passes at every seed it is run at.
#   false_alarms.sh FIRST LAST            seeds FIRST..LAST (the full sweep: 1 50)
#   false_alarms.sh --commit SRC FROM N   N seeds of the 50, from the FROM-th after the one the
#                                         commit of SRC picks (1 + its hash mod 50; seed 1 outside
#                                         a git checkout): CTest's default budget, which moves
#                                         through all 50 as commits land
set -uo pipefail
pecheck="${PECHECK:?set PECHECK to build/pecheck}"
if [ "${1:-}" = "--commit" ]; then
  src="${2:?source dir}" from="${3:?offset}" count="${4:?count}"
  hash=$(git -C "$src" rev-parse --short=7 HEAD 2>/dev/null || echo 0)
  start=$((16#$hash % 50))
  seeds=$(for i in $(seq 0 $((count - 1))); do echo $(((start + from + i) % 50 + 1)); done)
  echo "commit ${hash}: seeds $(echo $seeds) of the 50 (the full sweep: PECHECK_FULL=1 scripts/test)"
else
  first="${1:?first seed}" last="${2:?last seed}"
  seeds=$(seq "$first" "$last")
fi
failed=()
runs=0
for seed in $seeds; do
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
echo "false alarms: none in $runs seeds ($(echo $seeds))"
