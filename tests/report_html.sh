#!/usr/bin/env bash
# `pecheck report --html` writes one self-contained page that renders: headless Chromium loads it
# (no network: nothing is fetched), its DOM holds the verdict matrix and every chart, and its
# screenshot is a real picture, not a blank page. Usage: PECHECK=build/pecheck report_html.sh
set -uo pipefail
pecheck="${PECHECK:?set PECHECK to build/pecheck}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
chromium=$(command -v chromium || command -v chromium-browser) || { echo "FAIL: chromium not installed (scripts/deps)"; exit 1; }

"$pecheck" report --html "$tmp/r.html" --cases 5 --seed 1 --quiet >"$tmp/out.txt" 2>&1
rc=$?
[ "$rc" -eq 0 ] || fail "report exits $rc: $(tail -3 "$tmp/out.txt")"
[ -s "$tmp/r.html" ] || { fail "no page written"; exit 1; }
# Self-contained: no scripts, and nothing referenced outside the page but SVG's namespace name.
grep -q '<script' "$tmp/r.html" && fail "the page has a script"
grep -oE '(src|href)="[^"]*"' "$tmp/r.html" | grep -q . && fail "the page references a file or URL"

flags=(--headless=new --no-sandbox --disable-gpu --hide-scrollbars --window-size=1400,3600)
"$chromium" "${flags[@]}" --dump-dom "file://$tmp/r.html" >"$tmp/dom.html" 2>"$tmp/chromium.err"
svgs=$(grep -o '<svg' "$tmp/dom.html" | wc -l)
rows=$(grep -o '<tr>' "$tmp/dom.html" | wc -l)
[ "$svgs" -ge 6 ] || fail "rendered DOM has $svgs SVG pictures, expected 6 (3 error charts, 2 heatmaps, the offset chart)"
[ "$rows" -ge 40 ] || fail "the verdict matrix has $rows rows, expected a row per property"
grep -q 'naive fp32 angle' "$tmp/dom.html" || fail "the fp32-angle baseline is not drawn"

"$chromium" "${flags[@]}" --screenshot="$tmp/r.png" "file://$tmp/r.html" >/dev/null 2>>"$tmp/chromium.err"
size=$(stat -c %s "$tmp/r.png" 2>/dev/null || echo 0)
# A blank 1400x3600 page compresses to a few KiB; the charts and heatmaps make it hundreds.
[ "$size" -ge 100000 ] || fail "screenshot is $size bytes: blank or not rendered ($(tail -2 "$tmp/chromium.err"))"
[ "$(head -c 8 "$tmp/r.png" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] || fail "screenshot is not a PNG"
[ -n "${PECHECK_KEEP_REPORT:-}" ] && cp "$tmp/r.html" "$tmp/r.png" "$PECHECK_KEEP_REPORT"/

# A plugin's page (its verdicts and its RoPE profile, one chart per dtype) and a dump directory's.
plugin="${PLUGIN:?set PLUGIN to the example plugin}"
"$pecheck" report --html "$tmp/p.html" --plugin "$plugin" --cases 5 --seed 1 --quiet >"$tmp/p.txt" 2>&1 ||
  fail "report --plugin exits $?: $(tail -3 "$tmp/p.txt")"
"$chromium" "${flags[@]}" --dump-dom "file://$tmp/p.html" >"$tmp/p.dom" 2>>"$tmp/chromium.err"
[ "$(grep -o '<svg' "$tmp/p.dom" | wc -l)" -ge 6 ] || fail "the plugin page lacks its 3 profile charts and the 3 others"
grep -q 'example-c-rope-sinusoidal' "$tmp/p.dom" || fail "the plugin page does not name the plugin"
grep -q 'naive fp32 angle' "$tmp/p.dom" || fail "the plugin page lacks the fp32-angle baseline"
"$pecheck" golden --family rope --dim 64 --dtype bf16 --positions 0:64,1000,65536,16777215 --out "$tmp/dumps/a" >/dev/null
"$pecheck" report --html "$tmp/d.html" --dump "$tmp/dumps" --quiet >"$tmp/d.txt" 2>&1 ||
  fail "report --dump exits $?: $(tail -3 "$tmp/d.txt")"
"$chromium" "${flags[@]}" --dump-dom "file://$tmp/d.html" >"$tmp/d.dom" 2>>"$tmp/chromium.err"
[ "$(grep -o '<svg' "$tmp/d.dom" | wc -l)" -ge 4 ] || fail "the dump page lacks its profile chart and the 3 others"
grep -q 'rope.agrees_with_reference' "$tmp/d.dom" || fail "the dump page lacks its verdicts"

[ "$fails" -eq 0 ] && echo "report renders: $svgs pictures, $rows table rows, screenshot $size bytes; plugin and dump pages too"
exit $((fails > 0))
