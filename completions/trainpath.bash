# bash completion for trainpath(1); zsh uses it too (completions/_trainpath).
#
# Nothing here lists a command, an option or a value: they are read from
# `trainpath [CMD [SUB]] --help` of the binary being completed (the word
# typed: trainpath on PATH, or ./build/trainpath) when first needed, and
# kept for the rest of the shell session, so completion cannot drift from
# the binary, and an option added to --help completes with no edit here.
#
#   commands     the rows of `trainpath --help`'s "commands:" block
#   subcommands  the word after "trainpath CMD" in CMD's usage lines
#                (net serve, check facts, report gate, plan interval, ...)
#   options      every -x and --long option CMD's --help names
#   values       from the option's metavar and description in --help:
#                alternatives in a usage line ([--profile quick|standard|extended]),
#                a literal metavar (--during checkpoint), a list in the
#                description ("f32 (default), f64, bf16, f16, i32, i64",
#                "tcp ... or ofi"), a comma list ("check,net,coll,...");
#                "as for trainpath coll" reads coll's; a provider as fi_info
#                prints it: `fi_info -l`'s providers and those --help quotes;
#                FILE- and DIR-like metavars complete paths
#
# Written to run under bash and, sourced in ksh emulation, zsh's bashcompinit:
# no bash-completion helpers are needed, and none of bash's builtins that
# zsh lacks (mapfile, read -a, ${!name}) are used.

# Lists are split on IFS=$'\n' by unquoted expansions on purpose (zsh has
# no mapfile or read -a); the words are --help's and a path's.
# shellcheck disable=SC2046,SC2086,SC2206,SC2207

declare -gA _trainpath_help_cache

# _trainpath_help BIN [WORD...]: `BIN WORD... --help` into _tp_text, cached
# for the session (the binary's path is part of the key, _tp_key).
_trainpath_help() {
    _tp_key="$*"
    if [[ -z ${_trainpath_help_cache[$_tp_key]+set} ]]; then
        _trainpath_help_cache[$_tp_key]=$(LC_ALL=C "$@" --help 2>/dev/null)
    fi
    _tp_text=${_trainpath_help_cache[$_tp_key]}
}

# _trainpath_parse FUNCTION [ARG]: FUNCTION's output for the help text in
# _tp_text into _tp_out, kept beside the text (a TAB parses each once).
_trainpath_parse() {
    local k="$_tp_key"$'\x1f'"$*"
    if [[ -z ${_trainpath_help_cache[$k]+set} ]]; then
        _trainpath_help_cache[$k]=$("$@")
    fi
    _tp_out=${_trainpath_help_cache[$k]}
}

# The commands of `trainpath --help` (its "commands:" block).
_trainpath_commands() {
    awk '/^commands:/ { on = 1; next } on && /^$/ { on = 0 }
         on && /^  [a-z]/ { print $1 }' <<<"$_tp_text"
}

# The subcommands of CMD: the first word after "trainpath CMD" in each usage
# line that is a lowercase word (or words joined by |: lat|bw|bibw|loaded).
_trainpath_subcommands() {
    awk -v cmd="$1" '
        NR > 1 && /^$/ { exit }
        { for (i = 1; i < NF; i++)
              if ($i == "trainpath" && $(i + 1) == cmd && $(i + 2) ~ /^[a-z][a-z|-]*$/) {
                  n = split($(i + 2), w, "|")
                  for (j = 1; j <= n; j++) print w[j]
              } }' <<<"$_tp_text"
}

# Every option --help names: --long ones anywhere, -x ones standing alone.
_trainpath_options() {
    # a command quoted in the prose (`trainpath step --workload`) is
    # another's: its options are not this one's
    sed -E 's/`trainpath [^`]*`//g' <<<"$_tp_text" |
        grep -oE -- '(^|[^A-Za-z0-9_-])--?[A-Za-z0-9][A-Za-z0-9_-]*' |
        sed -E 's/^[^-]*//' | grep -E -- '^(--[a-z0-9][a-z0-9-]*|-[A-Za-z])$' | sort -u
}

# _trainpath_values OPT: what OPT takes, from --help in _tp_text. The first
# line is the kind: flag (takes nothing), unknown, none (a value nothing can
# list: a number, a size), file, dir, ref CMD (as for trainpath CMD), words
# (the lines after it), comma (words joined by commas) or provider (fi_info's
# providers and the words after it).
_trainpath_values() {
    awk -v opt="$1" '
        function trim(s) { gsub(/^ +| +$/, "", s); return s }
        # a list in prose: "a (default), b, or c (...): more" -> a b c; a
        # multi-word item ends the list ("shm or fabric between ranks")
        function prose(d,    n, i, k, w, p, item, had_or, out) {
            while (match(d, /\([^()]*\)/)) d = substr(d, 1, RSTART - 1) substr(d, RSTART + RLENGTH)
            sub(/^[a-z]+( [a-z]+)?: /, "", d)          # "allocation: none or drain"
            if (match(d, /;|: |\. /)) d = substr(d, 1, RSTART - 1)
            gsub(/ +,/, ",", d)
            had_or = d ~ / or /
            gsub(/,? or /, ",", d)
            n = split(d, p, ",")
            out = ""
            for (i = 1; i <= n; i++) {
                item = trim(p[i])
                if (item == "") continue
                w = item; sub(/ .*/, "", w)
                if (w !~ /^[a-z0-9][a-z0-9._-]*$/) return ""
                out = out w "\n"; k++
                if (item ~ / /) break
            }
            return (k >= 3 || (k >= 2 && had_or)) ? out : ""
        }
        { line[NR] = $0 }
        END {
            # -P is read as its long name (-P, --provider; -P/--provider)
            if (opt ~ /^-[A-Za-z]$/)
                for (i = 1; i <= NR; i++)
                    if (match(line[i], opt "(, |/)--[a-z0-9-]+")) {
                        opt = substr(line[i], RSTART, RLENGTH); sub(/^.*(, |\/)/, "", opt)
                        break
                    }
            # the metavar in a usage line: [--opt VALUE] or [--profile a|b|c]
            for (i = 1; i <= NR && line[i] != ""; i++)
                if (match(line[i], "(^|[[ ])" opt "[ =][^] ]+")) {
                    u = substr(line[i], RSTART, RLENGTH); sub(/^.*[ =]/, "", u)
                    break
                }
            # the option row: "  -o, --op COLL   description" and its continuation
            for (i = 1; i <= NR; i++)
                if (match(line[i], "^ +(-[A-Za-z](, |/))?" opt "([ =]|$)")) break
            if (i > NR) {
                for (i = 1; i <= NR; i++)    # named inside a row: --transport T, ...
                    if (match(line[i], "(^|[ ,/])" opt "( [A-Z][A-Z.]*)?(,|$| )")) break
            }
            if (i > NR && u == "") { print "unknown"; exit }
            meta = ""; d = ""
            if (i <= NR) {
                rest = substr(line[i], index(line[i], opt) + length(opt))
                if (rest ~ /^[ =][^ ]/) {
                    meta = substr(rest, 2); sub(/[ ,].*/, "", meta)
                    d = substr(rest, 2 + length(meta))
                } else d = rest
                ind = match(line[i], /[^ ]/)
                # continued: deeper lines, or any line after a row of
                # options that ends with a comma ("--launcher L, ... --intra M,")
                for (j = i + 1; j <= NR && (line[j - 1] ~ /,$/ ||
                        line[j] ~ /^ +[^ -]/ && match(line[j], /[^ ]/) > ind); j++)
                    d = d " " line[j]
                gsub(/ +/, " ", d); d = trim(d)
                if (match(d, /as for trainpath [a-z]+/)) {
                    r = substr(d, RSTART, RLENGTH); sub(/.* /, "", r)
                    print "ref " r; exit
                }
            }
            if (meta == "") meta = u
            if (meta == "" ) { print "flag"; exit }
            if (meta ~ /^[a-z0-9_-]+(\|[a-z0-9_-]+)+$/) {
                print "words"; gsub(/\|/, "\n", meta); print meta; exit
            }
            if (u ~ /^[a-z0-9_-]+(\|[a-z0-9_-]+)+$/) {
                print "words"; gsub(/\|/, "\n", u); print u; exit
            }
            if (meta ~ /^[a-z][a-z0-9_-]*$/) { print "words"; print meta; exit }
            if (d ~ /fi_info/) {
                print "provider"
                while (match(d, /\047[^\047 ]+\047/)) {
                    print substr(d, RSTART + 1, RLENGTH - 2); d = substr(d, RSTART + RLENGTH)
                }
                exit
            }
            if (meta ~ /DIR/) { print "dir"; exit }
            if (meta ~ /FILE|FLEET|PATH|DEV|THRESHOLDS|FACTS|DOC/ || meta == "F") { print "file"; exit }
            if (meta !~ /^(N|MS|PCT|DUR|SIZE)$/) {
                # "groups to run: check,net,coll,io (...)"
                if (match(d, /(^| )[a-z][a-z0-9_-]*(,[a-z][a-z0-9_-]*)(,[a-z][a-z0-9_-]*)+/)) {
                    w = substr(d, RSTART, RLENGTH); sub(/^ /, "", w)
                    print "comma"; gsub(/,/, "\n", w); print w; exit
                }
                p = prose(d)
                if (p != "") { print "words"; printf "%s", p; exit }
            }
            print "none"
        }' <<<"$_tp_text"
}

# The libfabric providers of this host, as `fi_info -l` lists them.
_trainpath_providers() {
    command -v fi_info >/dev/null && fi_info -l 2>/dev/null | sed -n 's/^\([A-Za-z0-9_]*\):$/\1/p'
}

# COMPREPLY from words matching cur, each quoted for the command line
# ('tcp;ofi_rxm' -> tcp\;ofi_rxm).
_trainpath_reply() {
    local cur=$1 w
    shift
    COMPREPLY=()
    for w in "$@"; do
        [[ -n $w && $w == "$cur"* ]] || continue
        printf -v w '%q' "$w"
        COMPREPLY+=("$w")
    done
}

# _trainpath_files CUR f|d: the files (f) or folders (d) that CUR begins.
_trainpath_files() {
    local IFS=$'\n'
    COMPREPLY=($(compgen -"$2" -- "$1"))
    type compopt &>/dev/null && compopt -o filenames 2>/dev/null
}

# Complete the value of OPT (of BIN CMD [SUB]) from what --help says of it.
_trainpath_value() {
    local cur=$1 opt=$2 bin=$3 IFS=$'\n' kind
    local -a vals
    shift 3
    _trainpath_help "$bin" "$@"
    _trainpath_parse _trainpath_values "$opt"
    vals=($_tp_out)
    kind=${vals[0]%% *}
    [[ $kind == ref ]] && vals+=("${vals[0]#ref }")
    vals=("${vals[@]:1}")
    case $kind in
        words) _trainpath_reply "$cur" "${vals[@]}" ;;
        comma) # complete the item after the last comma of cur
            local head=${cur%,*} tail=${cur##*,} w
            [[ $cur == *,* ]] || head=""
            COMPREPLY=()
            for w in "${vals[@]}"; do
                [[ $w == "$tail"* ]] && COMPREPLY+=("${head:+$head,}$w")
            done
            type compopt &>/dev/null && compopt -o nospace 2>/dev/null ;;
        provider)
            _trainpath_parse _trainpath_providers
            _trainpath_reply "$cur" $(printf '%s\n' "${vals[@]}" $_tp_out | sort -u) ;;
        file) _trainpath_files "$cur" f ;;
        dir) _trainpath_files "$cur" d ;;
        ref) _trainpath_value "$cur" "$opt" "$bin" "${vals[0]}" ;;
        *) COMPREPLY=() ;;
    esac
}

# The completion function (complete -F): COMPREPLY for the word
# COMP_WORDS[COMP_CWORD] of a trainpath command line. Finds the command and
# subcommand typed, then offers the value of the option before the cursor,
# options, subcommands, or a positional argument (a host for net, else a path).
_trainpath_complete() {
    local cword=$COMP_CWORD cur=${COMP_WORDS[COMP_CWORD]} bin=${COMP_WORDS[0]}
    local prev=${COMP_WORDS[COMP_CWORD-1]} IFS=$'\n' _tp_text _tp_key _tp_out i w cmd="" sub=""
    bin=${bin/#\~/$HOME}
    command -v "$bin" >/dev/null || return 0
    # --opt=value: COMP_WORDBREAKS splits it into --opt, =, value
    if [[ $cur == = ]]; then
        cur="" prev=${COMP_WORDS[cword-1]}
    elif [[ $prev == = ]]; then
        prev=${COMP_WORDS[cword-2]}
    fi

    # the command and its subcommand: the first words that are not options
    # (skipping an option's value, as --help says which take one)
    for ((i = 1; i < cword; i++)); do
        w=${COMP_WORDS[i]}
        [[ $w == = ]] && continue
        if [[ -z $cmd ]]; then
            [[ $w == -* ]] || cmd=$w
            continue
        fi
        if [[ $w == -* ]]; then
            _trainpath_help "$bin" $cmd $sub
            [[ $w == *=* ]] && continue
            _trainpath_parse _trainpath_values "$w"
            case ${_tp_out%%$'\n'*} in
                flag | unknown) ;;
                *) [[ ${COMP_WORDS[i+1]} == = ]] && ((i++))
                   ((i++)) ;;
            esac
            continue
        fi
        if [[ -z $sub ]]; then
            _trainpath_help "$bin" "$cmd"
            _trainpath_parse _trainpath_subcommands "$cmd"
            [[ $'\n'$_tp_out$'\n' == *$'\n'"$w"$'\n'* ]] && sub=$w
        fi
        [[ -n $sub ]] && break
    done

    if [[ -z $cmd ]]; then
        _trainpath_help "$bin"
        if [[ $cur == -* ]]; then
            _trainpath_parse _trainpath_options
            _trainpath_reply "$cur" $_tp_out
        else
            _trainpath_reply "$cur" $(_trainpath_commands)
        fi
        return 0
    fi

    _trainpath_help "$bin" $cmd $sub
    if [[ $cur == --*=* ]]; then # one word where = does not split (zsh)
        _trainpath_value "${cur#*=}" "${cur%%=*}" "$bin" $cmd $sub
        COMPREPLY=("${COMPREPLY[@]/#/${cur%%=*}=}")
        return 0
    fi
    if [[ $prev == -* && $prev != "$cur" ]]; then
        _trainpath_parse _trainpath_values "$prev"
        case ${_tp_out%%$'\n'*} in
            flag | unknown) ;;
            *) _trainpath_value "$cur" "$prev" "$bin" $cmd $sub; return 0 ;;
        esac
    fi
    if [[ $cur == -* ]]; then
        _trainpath_parse _trainpath_options
        _trainpath_reply "$cur" $_tp_out
        return 0
    fi
    if [[ -z $sub ]]; then
        local subs
        _trainpath_parse _trainpath_subcommands "$cmd"
        subs=$_tp_out
        if [[ -n $subs ]]; then
            _trainpath_reply "$cur" $subs
            # a command whose usage also takes a file first (plan FILE)
            if grep -qE "trainpath $cmd [A-Z]" <<<"$_tp_text"; then
                local -a subs_offered=("${COMPREPLY[@]}")
                _trainpath_files "$cur" f
                COMPREPLY+=("${subs_offered[@]}")
            fi
            return 0
        fi
    fi
    # a positional argument: the server's HOST of net, else a path
    if grep -qE "trainpath $cmd ([a-z|]*\|)?$sub([|][a-z|]*)? HOST" <<<"$_tp_text"; then
        COMPREPLY=($(compgen -A hostname -- "$cur"))
    else
        _trainpath_files "$cur" f
    fi
    return 0
}

complete -F _trainpath_complete trainpath
