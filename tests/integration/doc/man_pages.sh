#!/usr/bin/env bash
# The man pages (docs/man/: made by help2man from the built binary's --help)
# against the binary: a page for trainpath and for every command that
# `trainpath --help` lists; each renders with no warning from man or groff;
# has the sections a user looks for (EXIT STATUS, FILES, EXAMPLES, SEE ALSO);
# names every option that `trainpath CMD --help` and each subcommand's
# --help (net serve, check facts, report gate, ...) name; its examples use
# only options that --help names; and SEE ALSO names no page that is not
# there. TP_MAN_DIR: the pages (meson sets it to the build's docs/man).
. "$(dirname "$0")/../lib.sh"

MAN_DIR=${TP_MAN_DIR:-$(dirname "$TP")/docs/man}
if ! command -v man >/dev/null || ! command -v groff >/dev/null; then
    skip_all "man or groff is not installed"
fi
[ -d "$MAN_DIR" ] || skip_all "no man pages in $MAN_DIR (built without help2man)"

# the options a help text names: --long anywhere, -x standing alone (the
# same reading as the completion's, completions/trainpath.bash)
options_of() {
    grep -oE -- '(^|[^A-Za-z0-9_-])--?[A-Za-z0-9][A-Za-z0-9_-]*' |
        sed -E 's/^[^-]*//' | grep -E -- '^(--[a-z0-9][a-z0-9-]*|-[A-Za-z])$' | sort -u
}
# the subcommands of CMD: the lowercase word after "trainpath CMD" in its
# usage lines (lat|bw|bibw|loaded are four)
subcommands_of() {
    awk -v cmd="$1" 'NR > 1 && /^$/ { exit }
        { for (i = 1; i < NF; i++)
              if ($i == "trainpath" && $(i + 1) == cmd && $(i + 2) ~ /^[a-z][a-z|-]*$/) {
                  n = split($(i + 2), w, "|"); for (j = 1; j <= n; j++) print w[j] } }'
}
# the page as a reader sees it at 80 columns, plain text
render() { LC_ALL=C MANWIDTH=80 man -l "$1" 2>/dev/null | col -bx; }
# help_options FORM...: the options of `trainpath FORM --help` into
# $WORK/opts/FORM (each --help read once: the binary starts slowly under
# the sanitizers); false when --help fails
mkdir -p "$WORK/opts"
help_options() {
    local name="$*" f
    name=${name// /_}
    f=$WORK/opts/${name:-top}
    if [ ! -e "$f" ]; then
        if "$TP" "$@" --help >"$f.help" 2>&1; then
            options_of <"$f.help" >"$f"
        else
            : >"$f"
            echo failed >"$f.failed"
        fi
    fi
    OPTS=$f
    [ ! -e "$f.failed" ]
}

"$TP" --help >"$WORK/top.help"
commands=$(awk '/^commands:/ { on = 1; next } on && /^$/ { on = 0 } on && /^  [a-z]/ { print $1 }' "$WORK/top.help")
check "trainpath --help lists commands (${commands//$'\n'/ })" test -n "$commands"

for cmd in "" $commands; do
    page=trainpath${cmd:+-$cmd}
    file=$MAN_DIR/$page.1
    if [ ! -f "$file" ]; then
        not_ok "$page(1): no page at $file (docs/man/meson.build needs a row for '$cmd')"
        continue
    fi
    # rendered as man-db renders it, and by groff with every warning on
    MANWIDTH=80 man --warnings -l "$file" >"$WORK/$page.txt" 2>"$WORK/$page.warn"
    groff -ww -z -man "$file" 2>>"$WORK/$page.warn"
    if [ -s "$WORK/$page.txt" ] && [ ! -s "$WORK/$page.warn" ]; then
        ok "$page(1) renders with no warning"
    else
        not_ok "$page(1) renders with no warning"
        sed 's/^/#   /' "$WORK/$page.warn" | head -10
    fi
    render "$file" >"$WORK/$page.man"

    want="NAME SYNOPSIS DESCRIPTION EXIT_STATUS FILES EXAMPLES SEE_ALSO"
    missing=""
    for s in $want; do
        grep -qx "${s//_/ }" "$WORK/$page.man" || missing+=" ${s//_/ }"
    done
    check "$page(1) has the sections ${want//_/ }${missing:+ (missing:$missing)}" test -z "$missing"

    # every option of the command's --help and of each subcommand's
    forms=("$cmd")
    if [ -n "$cmd" ]; then
        help_options "$cmd"
        for sub in $(subcommands_of "$cmd" <"$OPTS.help"); do forms+=("$cmd $sub"); done
    fi
    : >"$WORK/$page.opts"
    bad_help=""
    for form in "${forms[@]}"; do
        # shellcheck disable=SC2086
        help_options $form || bad_help+=" '$form --help'"
        cat "$OPTS" >>"$WORK/$page.opts"
    done
    check "trainpath ${cmd:-} --help and its ${#forms[@]} form(s) exit 0${bad_help:+ (failed:$bad_help)}" \
        test -z "$bad_help"
    sort -u -o "$WORK/$page.opts" "$WORK/$page.opts"
    options_of <"$WORK/$page.man" >"$WORK/$page.has"
    missing=$(comm -23 "$WORK/$page.opts" "$WORK/$page.has" | tr '\n' ' ')
    missing=${missing% }
    check "$page(1) names all $(wc -l <"$WORK/$page.opts") options of ${forms[*]/#/trainpath } --help${missing:+ (missing: $missing)}" \
        test -z "$missing"

    # the examples are hand-written (docs/man/$page.h2m): each option they
    # give trainpath must be one its --help names
    awk '/^EXAMPLES$/ { on = 1; next } /^[A-Z][A-Z ]+$/ { on = 0 } on' "$WORK/$page.man" |
        grep -E '(^|[ /])trainpath ' | sed -E 's/.*(^|[ /])trainpath //' >"$WORK/$page.ex"
    stale=""
    while read -r ex_cmd ex_sub rest; do
        help_options "$ex_cmd"
        known=$(cat "$OPTS")
        # a subcommand's --help, where the word after the command is one
        case $ex_sub in [a-z]*) help_options "$ex_cmd" "$ex_sub" && known+=$'\n'$(cat "$OPTS") ;; esac
        for opt in $(options_of <<<" $ex_sub $rest"); do
            grep -qxF -- "$opt" <<<"$known" || stale+=" $ex_cmd:$opt"
        done
    done <"$WORK/$page.ex"
    check "$page(1)'s $(wc -l <"$WORK/$page.ex") examples use only options of --help${stale:+ (unknown:$stale)}" \
        test -s "$WORK/$page.ex" -a -z "$stale"

    # EXIT STATUS says what --help says: the paragraph that starts "Exit",
    # else the codes of trainpath --help that every command shares (words
    # compared without blanks and hyphens: groff breaks lines and words)
    # shellcheck disable=SC2086
    help_options $cmd
    want=$(awk '/^Exit/ { on = 1 } on && /^$/ { exit } on' "$OPTS.help")
    [ -n "$want" ] || want=$(tr '\n' ' ' <"$WORK/top.help" | sed -n 's/.*\(Exit codes: .*\)/\1/p')
    want=$(sed -E '1s/^Exit( codes)?: *//' <<<"$want" | tr -d ' \n-')
    got=$(awk '/^EXIT STATUS$/ { on = 1; next } /^[A-Z][A-Z ]+$/ { on = 0 } on' "$WORK/$page.man" | tr -d ' \n-')
    check "$page(1)'s EXIT STATUS gives the exit codes of its --help" \
        test -n "$want" -a "${got#*"$want"}" != "$got"

    dangling=""
    for ref in $(grep -oE 'trainpath(-[a-z]+)?\(1\)' "$WORK/$page.man" | sort -u); do
        [ -f "$MAN_DIR/${ref%(1)}.1" ] || dangling+=" $ref"
    done
    check "$page(1) refers to no page that is missing${dangling:+ ($dangling)}" test -z "$dangling"
done

finish
