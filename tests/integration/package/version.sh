#!/usr/bin/env bash
# One version (docs/install.md, "The version"): meson.build's project version
# is the one written down; debian/changelog must say the same, and the built
# binary shows it, with the commit on a development build, as
# scripts/version.sh makes it, in --version and in every result document.
. "$(dirname "$0")/../lib.sh"

base=$(meson introspect --projectinfo "$SRC/meson.build" 2>/dev/null |
    /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')
check "meson.build has a project version ('$base')" test -n "$base"

# the first line's version without its epoch and Debian revision (no
# dpkg-dev needed here: debian/changelog's first line is fixed in form)
deb=$(sed -n '1s/^trainpath (\([^)]*\)).*/\1/p' "$SRC/debian/changelog")
up=${deb#*:}
up=${up%-*}
check "debian/changelog's version ($deb, upstream $up) is meson.build's ($base)" test "$up" = "$base"

want=$(sh "$SRC/scripts/version.sh" "$SRC" "$base")
"$TP" --version >"$WORK/v" 2>&1
line=$(head -n 1 "$WORK/v")
check "trainpath --version: 'trainpath $want' (got '$line')" test "$line" = "trainpath $want"
check "... a release or BASE+git.N.gHASH[.dirty]" \
    grep -qE "^trainpath ${base//./\\.}(\+git\.[0-9]+\.g[0-9a-f]+(\.dirty)?)?$" "$WORK/v"

"$TP" plan "$SRC/docs/examples/plan.yaml" --json "$WORK/plan.json" -q >"$WORK/plan.out" 2>&1
check "a result document's tool.version is the same" \
    test "$(json_get "$WORK/plan.json" "d['tool']['version']")" = "$want"
finish
