#!/usr/bin/env bash
# make deb: the Debian package, built as any user (debian/control says
# Rules-Requires-Root: no, so not even fakeroot is needed). dpkg-buildpackage
# writes beside the tree it builds, so it builds an exported copy in WORKDIR
# (the tracked and untracked-but-not-ignored files of the working tree, as
# they are now: what you see is what is packaged) and copies the .deb files
# into OUTDIR; the clone's parent folder is never written. The export
# carries the version the working tree has (scripts/version.sh), which the
# packaged binary shows. Tests are not run inside: make check runs them.
# usage: make-deb.sh [OUTDIR [WORKDIR]]   (defaults: dist, build-deb)
#   JOBS=N  compile jobs (default: the number of CPUs)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${1:-dist}
work=${2:-build-deb}
jobs=${JOBS:-$(nproc)}

missing=()
for t in dpkg-buildpackage:dpkg-dev dh:debhelper meson:meson; do
    command -v "${t%%:*}" >/dev/null || missing+=("${t#*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "make-deb: missing ${missing[*]} (scripts/install-deps.sh installs them; as root: make deps)" >&2
    exit 2
fi

version=$(dpkg-parsechangelog -l debian/changelog -S Version)
tree_version=$(scripts/version.sh "$root" "$(meson introspect --projectinfo meson.build |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')")
src="$work/trainpath-$version"
rm -rf "$src"
mkdir -p "$src" "$out"

# the export: git's view of the working tree where this is a clone (files
# deleted but not yet committed are skipped), else everything but the build
# folders and results
if git rev-parse --is-inside-work-tree >/dev/null 2>&1 &&
        [ "$(git rev-parse --show-toplevel)" = "$(pwd -P)" ]; then
    git ls-files -z --cached --others --exclude-standard |
        while IFS= read -r -d '' f; do [ -e "$f" ] || [ -L "$f" ] && printf '%s\0' "$f"; done |
        tar --null -T - -cf - | tar -xf - -C "$src"
else
    tar --exclude=./.git --exclude=./build --exclude='./build-*' --exclude=./dist \
        --exclude=./results --exclude="./$work" -cf - . | tar -xf - -C "$src"
fi
echo "$tree_version" >"$src/.version"
# The package's version is the binary's: a build of a commit after the
# release (0.1.0+git.N.gHASH) gets a changelog entry of its own on top of
# the export's debian/changelog, so each commit's package sorts after the
# one before it (N grows) and after the release, and apt upgrades from one
# build to the next. The tree's own changelog is not touched.
if [ "$tree_version" != "$version" ]; then
    when=$(git log -1 --format=%aD 2>/dev/null) || when=$(date -R)
    who=$(dpkg-parsechangelog -l debian/changelog -S Maintainer)
    { printf 'trainpath (%s) unstable; urgency=medium\n\n' "$tree_version"
      printf '  * A build of the tree after %s: %s.\n\n' "$version" "$tree_version"
      printf ' -- %s  %s\n\n' "$who" "$when"
      cat debian/changelog; } >"$src/debian/changelog"
    version=$tree_version
fi
echo "make-deb: building trainpath $version (binary: $tree_version) in $src, $jobs jobs"

t0=$(date +%s)
# nocheck: the tests belong to make check; parallel: the compile's jobs
(cd "$src" && DEB_BUILD_OPTIONS="nocheck parallel=$jobs ${DEB_BUILD_OPTIONS:-}" \
    dpkg-buildpackage -us -uc -b)
debs=("$work"/trainpath*_"$version"_*.deb)
[ -e "${debs[0]}" ] || { echo "make-deb: dpkg-buildpackage made no .deb in $work" >&2; exit 1; }
cp "${debs[@]}" "$out"/
for d in "${debs[@]}"; do echo "make-deb: $out/${d##*/}"; done
echo "make-deb: built in $(( $(date +%s) - t0 )) s"
