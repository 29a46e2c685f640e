#!/usr/bin/env bash
# The Debian package end to end (debian/, scripts/make-deb.sh, as `make deb`
# builds it): it builds as this user from the source tree, holds the binary,
# the man pages, the shell completion, contrib/ and the docs and nothing it
# should not (no library, no headers); its Depends come from the libraries
# the binary links, never from the test or benchmark tools; the binary
# extracted from it runs (--version is meson's, validate --profile quick);
# lintian finds no error or warning (an override, with its reason, would go in
# debian/trainpath.lintian-overrides; none is needed today). Skips where
# dpkg-dev or debhelper are missing.
. "$(dirname "$0")/../lib.sh"

for t in dpkg-buildpackage:dpkg-dev dh:debhelper dpkg-deb:dpkg; do
    command -v "${t%%:*}" >/dev/null || skip_all "${t#*:} is not installed (scripts/install-deps.sh installs it): no package to build"
done

base=$(meson introspect --projectinfo "$SRC/meson.build" |
    /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')
release=$(dpkg-parsechangelog -l "$SRC/debian/changelog" -S Version)
# the package's version is the binary's (docs/install.md, "The version"):
# each commit's package sorts after the one before and after the release
version=$(sh "$SRC/scripts/version.sh" "$SRC" "$base")
arch=$(dpkg --print-architecture)
DEB=$WORK/dist/trainpath_${version}_$arch.deb

# two jobs: the build machine of make check has two cores
t0=$(date +%s)
JOBS=2 "$SRC/scripts/make-deb.sh" "$WORK/dist" "$WORK/pkg" >"$WORK/build.log" 2>&1
rc=$?
echo "# make-deb.sh: exit $rc in $(( $(date +%s) - t0 )) s"
if [ "$rc" -ne 0 ] || [ ! -f "$DEB" ]; then
    not_ok "make-deb.sh builds trainpath_${version}_$arch.deb without root"
    tail -n 40 "$WORK/build.log" | sed 's/^/#   /'
    finish
fi
ok "make-deb.sh builds trainpath_${version}_$arch.deb without root ($(( $(stat -c %s "$DEB") / 1024 )) KiB)"

# --- contents -------------------------------------------------------------
dpkg-deb --contents "$DEB" | awk '{ p = $6; sub(/^\.\//, "/", p); print p }' >"$WORK/contents"
has() { # has PATH: the package holds PATH (says which when it does not)
    grep -qxF -- "$1" "$WORK/contents" && return 0
    echo "# missing from the package: $1"
    return 1
}
check "holds the binary /usr/bin/trainpath" has /usr/bin/trainpath
# the man pages and completion come from meson's install rules (docs/man/,
# completions/); each missing one is named
for page in trainpath trainpath-{net,coll,io,step,plan,check,report,sdc,validate}; do
    check "holds the man page $page(1)" has "/usr/share/man/man1/$page.1.gz"
done
check "holds the bash completion" has /usr/share/bash-completion/completions/trainpath
check "holds the zsh completion" has /usr/share/zsh/vendor-completions/_trainpath
# every file of contrib/ in the tree, under /usr/share/trainpath/contrib
miss=$(cd "$SRC" && find contrib -type f | sort | while read -r f; do
    grep -qxF "/usr/share/trainpath/$f" "$WORK/contents" || echo "/usr/share/trainpath/$f"; done)
check "holds all of contrib/ ($(cd "$SRC" && find contrib -type f | wc -l) files) under /usr/share/trainpath/contrib" test -z "$miss"
[ -z "$miss" ] || echo "$miss" | sed 's/^/#   missing: /'
for d in README.md docs/architecture.md docs/install.md docs/examples/plan.yaml docs/schema/result-v1.json copyright changelog.gz; do
    check "holds the docs: /usr/share/doc/trainpath/$d" has "/usr/share/doc/trainpath/$d"
done
# only what is meant: no file outside these (no static library, no
# headers, no test or bench binaries)
grep -v '/$' "$WORK/contents" | grep -vE '^/usr/bin/trainpath$|^/usr/share/man/man1/trainpath(-[a-z]+)?\.1\.gz$|^/usr/share/bash-completion/completions/trainpath$|^/usr/share/zsh/vendor-completions/_trainpath$|^/usr/share/trainpath/contrib/|^/usr/share/doc/trainpath/|^/usr/share/lintian/overrides/trainpath$' \
    >"$WORK/extra"
check "holds nothing else ($(grep -vc '/$' "$WORK/contents") files)" test ! -s "$WORK/extra"
sed 's/^/#   unexpected: /' "$WORK/extra" | head -20

# --- relations --------------------------------------------------------------
depends=$(dpkg-deb -f "$DEB" Depends)
echo "# Depends: $depends"
echo "# Suggests: $(dpkg-deb -f "$DEB" Suggests)"
links_all() { local l; for l in "$@"; do [[ $depends == *"$l"* ]] || return 1; done; }
check "Depends holds the libraries the binary links (shlibs: libjansson, libfabric, libsodium, libsqlite3)" \
    links_all libjansson libfabric libsodium libsqlite3
strong="$depends, $(dpkg-deb -f "$DEB" Pre-Depends), $(dpkg-deb -f "$DEB" Recommends)"
bad=""
for t in fio iperf3 sockperf qperf chromium libcmocka python3-jsonschema python3-torch cuda nccl; do
    [[ $strong == *"$t"* ]] && bad+=" $t"
done
check "... and no test, benchmark or GPU package in Depends, Pre-Depends or Recommends${bad:+ (found:$bad)}" test -z "$bad"

# --- the binary it ships ----------------------------------------------------
dpkg-deb -x "$DEB" "$WORK/root"
BIN=$WORK/root/usr/bin/trainpath
"$BIN" --version >"$WORK/version.out" 2>&1
rc=$?
sed 's/^/# /' "$WORK/version.out"
check "the extracted binary runs --version (exit $rc)" test "$rc" -eq 0
check "... and shows meson's version $base (a release or $base+git.N.gHASH)" \
    grep -qE "^trainpath ${base//./\\.}(\+git\.[0-9]+\.g[0-9a-f]+(\.dirty)?)?$" "$WORK/version.out"
check "... the package's Version ($(dpkg-deb -f "$DEB" Version)) is the binary's" \
    test "trainpath $(dpkg-deb -f "$DEB" Version)" = "$(head -n 1 "$WORK/version.out")"
if [ "$version" != "$release" ]; then
    check "... and apt upgrades to it from the release $release" dpkg --compare-versions "$version" gt "$release"
    # the next commit's package: N + 1 sorts after this one, whatever the hash
    commits=${version#*+git.}; commits=${commits%%.*}
    check "... and from it to the next commit's (N=$((commits + 1)))" \
        dpkg --compare-versions "$base+git.$((commits + 1)).g0000000" gt "$version"
fi
# as tests/integration/report/validate_quick.sh runs it: 0 or 1 (1 is the
# audit's critical finding on a test machine, a verdict); 2 is a failure
t0=$(date +%s)
"$BIN" validate --profile quick --out "$WORK/vq" >"$WORK/vq.out" 2>&1
rc=$?
echo "# validate --profile quick (the packaged binary): exit $rc in $(( $(date +%s) - t0 )) s"
check "the extracted binary runs validate --profile quick (exit 0 or 1)" test "$rc" -le 1
[ "$rc" -le 1 ] || sed 's/^/#   /' "$WORK/vq.out" | tail -20
# its table: "ok   NAME ..." or "FAIL NAME ..." a test; only the audit
# ("check") may fail on a test machine
check "... every test but the audit passed ($(grep -cE '^ok ' "$WORK/vq.out") ok)" \
    eval '[ "$(grep -cE "^ok " "$WORK/vq.out")" -ge 8 ] && ! grep -E "^FAIL " "$WORK/vq.out" | grep -qvE "^FAIL +check "'
check "... with its documents and report.html" test -f "$WORK/vq/step.json" -a -f "$WORK/vq/report.html"

# --- lintian ----------------------------------------------------------------
if command -v lintian >/dev/null; then
    t0=$(date +%s)
    lintian --fail-on error,warning --display-info --pedantic "$DEB" >"$WORK/lintian.out" 2>&1
    rc=$?
    echo "# lintian: exit $rc in $(( $(date +%s) - t0 )) s, $(grep -cE '^[EWIPX]: ' "$WORK/lintian.out") tags (overridden ones are not shown)"
    grep -vxF 'running with root privileges is not recommended!' "$WORK/lintian.out" | sed 's/^/#   /'
    check "lintian: no error or warning that is not overridden" test "$rc" -eq 0
else
    ok "# SKIP lintian is not installed (scripts/install-deps.sh installs it)"
fi
finish
