# Shared by the dump test scripts (sourced, after `set -euo pipefail`): a scratch directory $tmp
# removed at exit (kept when KEEP is set), Debian's python as $py, and the checks every script makes.
: "${PECHECK:?}"
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
py=/usr/bin/python3  # Debian's, with numpy, whatever else is first on PATH
fail() { echo "FAIL: $*" >&2; exit 1; }
expect() {  # expect STATUS NAME -- command...: output in $tmp/NAME.{out,err}
  local want=$1 name=$2 rc=0
  shift 3
  "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" || rc=$?
  [ "$rc" = "$want" ] || { cat "$tmp/$name.out" "$tmp/$name.err"; fail "$name: exit $rc, expected $want"; }
}
one_line() {  # one_line NAME TEXT: stderr is exactly one line and holds TEXT
  [ "$(wc -l <"$tmp/$1.err")" = 1 ] || { cat "$tmp/$1.err"; fail "$1: stderr is not one line"; }
  grep -qF -- "$2" "$tmp/$1.err" || { cat "$tmp/$1.err"; fail "$1: stderr lacks: $2"; }
}
edit() {  # edit DIR PYTHON: runs PYTHON on the manifest of DIR as m, and writes it back
  "$py" -c "import json,sys; p=sys.argv[1]; m=json.load(open(p)); exec(sys.argv[2]); json.dump(m, open(p,'w'))" \
    "$1/manifest.json" "$2"
}
refused() {  # refused FROM NAME PYTHON TEXT: a copy of dump FROM as NAME, its manifest edited by
  # PYTHON (as edit), must be refused: exit 2 and one line on stderr holding TEXT
  cp -r "$tmp/$1" "$tmp/$2" && edit "$tmp/$2" "$3"
  expect 2 "$2" -- "$PECHECK" validate --dump "$tmp/$2"
  one_line "$2" "$4"
}
