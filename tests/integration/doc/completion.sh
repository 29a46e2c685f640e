#!/usr/bin/env bash
# Shell completion (completions/trainpath.bash, read from the binary's
# --help at completion time): its function called as bash calls it, with
# COMP_WORDS and COMP_CWORD set, in a `bash --norc` with bash-completion's
# helpers loaded, for commands, subcommands, options and the values of
# options that are fixed lists (collectives, element types, reduction
# operators, algorithms, launchers, transports, providers from fi_info,
# engines, profiles, tiers); then a real interactive bash, and zsh through
# completions/_trainpath, typing TAB in a tmux terminal.
. "$(dirname "$0")/../lib.sh"

COMP=$SRC/completions/trainpath.bash
# `trainpath` on PATH is the binary under test, as a user's would be
mkdir -p "$WORK/bin" "$WORK/files"
ln -s "$TP" "$WORK/bin/trainpath"
: >"$WORK/files/result.json"
export PATH="$WORK/bin:$PATH"

# tab WORD...: what the completion offers for the command line WORD...
# (the last word is the one under the cursor; "" for a new word), one per
# line, sorted. One `bash --norc` answers every question, so each --help
# is read once, as in a user's shell: it reads the words joined by \x1f
# (and a last "."), and answers with the offers and a line \x1e.
cat >"$WORK/complete.sh" <<'EOF'
[ -r /usr/share/bash-completion/bash_completion ] && . /usr/share/bash-completion/bash_completion
. "$1"
while IFS=$'\x1f' read -r -a COMP_WORDS; do
    unset 'COMP_WORDS[${#COMP_WORDS[@]}-1]'
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1)) COMP_LINE="${COMP_WORDS[*]}" COMP_POINT=${#COMP_LINE}
    COMPREPLY=()
    _trainpath_complete trainpath "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    { printf '%s\n' "${COMPREPLY[@]}" | sort | grep .; printf '\x1e\n'; }
done
EOF
# (in a folder of one file: a path it offers is that file's)
coproc BASHC { cd "$WORK/files" && exec bash --norc --noprofile "$WORK/complete.sh" "$COMP" 2>&1; }
PIDS+=("$BASHC_PID")
tab() {
    local IFS=$'\x1f' line
    printf '%s\x1f.\n' "$*" >&"${BASHC[1]}"
    while IFS= read -r -t 60 line <&"${BASHC[0]}" && [ "$line" != $'\x1e' ]; do
        printf '%s\n' "$line"
    done
}
words() { printf '%s\n' "$@" | sort; }
# offers DESC WANT-WORDS -- WORD...: the completion of WORD... is exactly WANT-WORDS
offers() {
    local desc=$1 want=() got
    shift
    while [ "$1" != "--" ]; do want+=("$1"); shift; done
    shift
    got=$(tab "$@")
    if [ "$got" = "$(words "${want[@]}")" ]; then
        ok "$desc"
    else
        not_ok "$desc"
        echo "#   trainpath ${*:2}<TAB> offered: ${got//$'\n'/ }"
        echo "#   wanted: ${want[*]}"
    fi
}

check "bash --norc sources the completion; 'trainpath' is bound to it" \
    bash --norc --noprofile -c ". '$COMP' && complete -p trainpath | grep -q _trainpath_complete"

offers "trainpath co<TAB> -> coll" coll -- trainpath co
commands=$("$TP" --help | awk '/^commands:/ { on = 1; next } on && /^$/ { on = 0 } on && /^  [a-z]/ { print $1 }')
# shellcheck disable=SC2086
offers "trainpath <TAB> -> every command of trainpath --help" $commands -- trainpath ""
offers "trainpath net <TAB> -> its subcommands" serve lat bw bibw loaded -- trainpath net ""
offers "trainpath report g<TAB> -> gate" gate -- trainpath report g
offers "trainpath net serve --b<TAB> -> its options" --bind --busy-poll -- trainpath net serve --b
offers "trainpath coll --op <TAB> -> the collectives" \
    allreduce reduce-scatter allgather broadcast reduce alltoall sendrecv -- trainpath coll --op ""
offers "trainpath coll -o all<TAB> (short option)" allreduce allgather alltoall -- trainpath coll -o all
offers "trainpath coll --op=al<TAB> (bash splits at =)" allreduce allgather alltoall -- trainpath coll --op = al
offers "trainpath coll --op=al<TAB> (one word, as zsh passes it)" --op=allreduce --op=allgather --op=alltoall -- trainpath coll --op=al
offers "trainpath coll --op = sum --dt<TAB> (the value after = is skipped)" --dtype -- trainpath coll --op = sum --dt
offers "trainpath coll --dtype <TAB> -> the element types" f32 f64 bf16 f16 i32 i64 -- trainpath coll --dtype ""
offers "trainpath coll --redop <TAB> -> the reduction operators" sum prod min max avg -- trainpath coll --redop ""
offers "trainpath coll --algo <TAB> -> the algorithms" \
    auto ring rabenseifner recdoubling dbtree binomial hier bruck pairwise -- trainpath coll --algo ""
offers "trainpath coll --launcher <TAB>" local mpi env -- trainpath coll -n 4 --launcher ""
offers "trainpath coll --intra <TAB> (the list ends at 'fabric between ranks')" shm fabric -- trainpath coll --intra ""
offers "trainpath net lat --mem <TAB> (the list ends at ': messages start')" host cuda -- trainpath net lat h --mem ""
offers "trainpath validate --on-fail <TAB> (after 'allocation: ')" none drain -- trainpath validate --on-fail ""
offers "trainpath coll --backend <TAB>" trainpath mpi nccl -- trainpath coll --backend ""
offers "trainpath step --transport <TAB> (step's --help: as for coll)" tcp ofi -- trainpath step --transport ""
offers "trainpath step --preset <TAB>" resnet50 llm-1.3b unet3d -- trainpath step --preset ""
offers "trainpath io commit --engine <TAB>" auto io_uring psync -- trainpath io commit /tmp --engine ""
offers "trainpath io commit --sync <TAB>" fdatasync fsync dsync -- trainpath io commit --sync ""
offers "trainpath validate --profile <TAB>" quick standard extended -- trainpath validate --profile ""
offers "trainpath validate --tier <TAB>" prolog screen full -- trainpath validate --tier ""
offers "trainpath validate --only check,n<TAB> (a comma list)" check,net -- trainpath validate --only check,n
offers "trainpath coll --sizes <TAB> offers nothing (a size)" -- trainpath coll --sizes ""
offers "trainpath sdc --seed <TAB> offers nothing (a number)" -- trainpath sdc --seed ""
offers "trainpath coll --json FILE<TAB> completes a path" "$WORK/files/result.json" -- trainpath coll --json "$WORK/files/res"
offers "trainpath coll --quiet <TAB>: a flag takes no value" "$WORK/files/result.json" -- trainpath coll --quiet "$WORK/files/res"

# providers: fi_info's, and those --help quotes ('tcp;ofi_rxm', quoted for the command line)
tab trainpath net lat h --provider "" >"$WORK/prov"
want_prov=$( (command -v fi_info >/dev/null && fi_info -l 2>/dev/null | sed -n 's/^\([A-Za-z0-9_]*\):$/\1/p'
    printf '%s\n' 'tcp\;ofi_rxm' 'verbs\;ofi_rxm') | sort -u)
check "trainpath net lat --provider <TAB> -> fi_info -l's providers and 'tcp;ofi_rxm' ($(wc -l <"$WORK/prov") offered)" \
    test "$(cat "$WORK/prov")" = "$want_prov"

# every option of every command: what is offered as its value is a word
# (no prose of the description leaks into the list)
junk=""
for cmd in $commands; do
    for opt in $(tab trainpath "$cmd" --); do
        for v in $(tab trainpath "$cmd" "$opt" ""); do
            case $v in
                /* | */*) ;; # a path
                *) [[ $v =~ ^[a-z0-9][a-z0-9._,-]*(\\\;[a-z0-9_]+)?$ ]] || junk+=" $cmd:$opt:$v" ;;
            esac
        done
    done
done
check "the values offered for every option of every command are words${junk:+ (not:$(cut -d' ' -f1-11 <<<"$junk")...)}" \
    test -z "$junk"

# a real terminal: bash reads TAB, the completion answers on the screen
if ! command -v tmux >/dev/null; then
    ok "# SKIP interactive bash and zsh: tmux is not installed"
    finish
fi
SOCK=$WORK/tmux.sock
trap 'tmux -S "$SOCK" kill-server 2>/dev/null; cleanup' EXIT
# screen_has SESSION PATTERN: wait up to 10 s for PATTERN (ERE) on its screen
screen_has() {
    for _ in $(seq 100); do
        tmux -S "$SOCK" capture-pane -p -t "$1" >"$WORK/screen" 2>/dev/null
        grep -qE -- "$2" "$WORK/screen" && return 0
        sleep 0.1
    done
    echo "# '$2' not on the screen of $1:"; sed 's/^/#   /' "$WORK/screen" | grep -v '^#   $'
    return 1
}
keys() { tmux -S "$SOCK" send-keys -t "$@"; }

cat >"$WORK/bashrc" <<EOF
PS1='bash\$ '
[ -r /usr/share/bash-completion/bash_completion ] && . /usr/share/bash-completion/bash_completion
. '$COMP'
EOF
tmux -S "$SOCK" new-session -d -s bash -x 200 -y 50 "env PATH='$PATH' TERM=xterm bash --noprofile --rcfile '$WORK/bashrc' -i"
screen_has bash 'bash\$' || true
# Z typed after TAB shows the space a whole word gets
keys bash 'trainpath co' Tab Z
check "interactive bash: trainpath co<TAB> -> trainpath coll" screen_has bash 'bash\$ trainpath coll Z$'
# (the first TAB inserts the common 'l'; readline lists on two more)
keys bash C-u 'trainpath coll --op=al' Tab Tab Tab
check "interactive bash: trainpath coll --op=al<TAB><TAB><TAB> lists allgather allreduce alltoall" \
    screen_has bash 'allgather +allreduce +alltoall'
keys bash C-u 'trainpath coll --dtype bf' Tab Z
check "interactive bash: --dtype bf<TAB> -> bf16" screen_has bash 'bash\$ trainpath coll --dtype bf16 Z$'
keys bash C-u 'trainpath validate --tier s' Tab Z
check "interactive bash: validate --tier s<TAB> -> screen" screen_has bash 'trainpath validate --tier screen Z$'

if command -v zsh >/dev/null; then
    mkdir -p "$WORK/zdot"
    cat >"$WORK/zdot/.zshrc" <<EOF
PS1='zsh> '
fpath=('$SRC/completions' \$fpath)
autoload -U compinit && compinit -u -d '$WORK/zcompdump'
EOF
    tmux -S "$SOCK" new-session -d -s zsh -x 200 -y 50 "env PATH='$PATH' TERM=xterm ZDOTDIR='$WORK/zdot' zsh -i"
    screen_has zsh 'zsh>' || true
    keys zsh 'trainpath co' Tab Z
    check "interactive zsh: trainpath co<TAB> -> trainpath coll" screen_has zsh 'zsh> trainpath coll Z$'
    keys zsh C-u 'trainpath coll --op all' Tab
    check "interactive zsh: --op all<TAB> lists allgather allreduce alltoall" \
        screen_has zsh 'allgather +allreduce +alltoall'
    keys zsh C-u 'trainpath coll --dtype bf' Tab Z
    check "interactive zsh: --dtype bf<TAB> -> bf16" screen_has zsh 'zsh> trainpath coll --dtype bf16 Z$'
else
    ok "# SKIP interactive zsh: zsh is not installed"
fi

finish
