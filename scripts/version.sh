#!/bin/sh
# The version a build of trainpath shows (`trainpath --version`, every result
# document, the control handshake). Its one source is meson's project version
# in meson.build; this adds where the build came from, so two binaries of the
# same release line can be told apart:
#   - a git clone at the tag vBASE, clean:      BASE
#   - any other commit, or uncommitted changes: BASE+git.N.gHASH[.dirty]
#     (N commits since the last v* tag, or since the first commit without one)
#   - an exported tree (scripts/make-deb.sh):   the .version file it wrote
#   - neither (a plain tarball):                BASE
# meson's vcs_tag runs it on every build (src/meson.build), so a new commit
# changes the version without a reconfigure, and only src/core/version.c
# recompiles.
# usage: version.sh SOURCE_ROOT BASE_VERSION
set -u
src=$1
base=$2

# An export carries the version of the tree it was made from; it wins even
# when the export lies inside another clone (git would answer for that one).
if [ -f "$src/.version" ]; then
    head -n 1 "$src/.version"
    exit 0
fi

# Only a clone whose top is this tree speaks for it.
top=$(git -C "$src" rev-parse --show-toplevel 2>/dev/null) &&
    [ "$(cd "$top" && pwd -P)" = "$(cd "$src" && pwd -P)" ] || { echo "$base"; exit 0; }

if d=$(git -C "$src" describe --tags --long --match 'v[0-9]*' --dirty=.dirty 2>/dev/null); then
    # vTAG-N-gHASH[.dirty]
    dirty=""
    case $d in *.dirty) dirty=.dirty; d=${d%.dirty} ;; esac
    hash=${d##*-g}
    d=${d%-g*}
    n=${d##*-}
    tag=${d%-*}
    if [ "$tag" = "v$base" ] && [ "$n" = 0 ] && [ -z "$dirty" ]; then
        echo "$base"
    else
        echo "$base+git.$n.g$hash$dirty"
    fi
else
    d=$(git -C "$src" describe --always --dirty=.dirty 2>/dev/null) || { echo "$base"; exit 0; }
    n=$(git -C "$src" rev-list --count HEAD 2>/dev/null) || n=0
    echo "$base+git.$n.g$d"
fi
