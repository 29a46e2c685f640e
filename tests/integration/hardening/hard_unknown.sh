#!/usr/bin/env bash
# Hardening, class 5: a check that cannot see must not pass. trainpath check
# on a folder that is no snapshot (empty, /tmp-like) is refused UNKNOWN (3);
# on a snapshot whose proc/ and sys/ hold nothing, the rules that need the
# unseen facts are UNKNOWN and so is the audit (a CRITICAL finding of what
# was seen outranks it: without proc/sys the RDMA node is still critical,
# its sysctl rules UNKNOWN); a --results folder that
# does not exist (or is a file, or comes with --facts) is refused; a policy
# results folder that cannot be read makes SEC-RESULTS-SECRETS UNKNOWN, not
# PASS. In every case the result document's status.exit_code is the
# process's exit status (bad policy, critical audit, unknown). `check rules
# extra` exits 2 naming the argument.
. "$(dirname "$0")/../lib.sh"

FX=$SRC/tests/fixtures/check
mkdir -p "$WORK/empty" "$WORK/tmplike/.X11-unix" "$WORK/tmplike/results" \
    "$WORK/hollow/proc" "$WORK/hollow/sys" "$WORK/results"
echo "not a kernel file" >"$WORK/tmplike/notes.txt"
echo "x" >"$WORK/tmplike/results/run.json"
echo "a file" >"$WORK/afile"
# a snapshot without proc/sys: every sysctl unseen, the rest as the fixture
cp -r "$FX/node-rdma" "$WORK/nosysctl"
rm -rf "$WORK/nosysctl/proc/sys"
printf 'role: compute\nplanes:\n  managment:\n    cidrs: [10.0.0.0/24]\n' >"$WORK/typo.yaml"
cat >"$WORK/target.yaml" <<'YAML'
role: storage
planes:
  storage:
    cidrs: ["fd00:2::/64"]
    interfaces: [eth0]
    mtu_min: 1500
    services:
      - {name: nvmet-tcp, port: 4420}
YAML
cat >"$WORK/gone.yaml" <<YAML
role: compute
results: [$WORK/no-such-results]
planes:
  management:
    cidrs: [10.0.0.0/24]
    interfaces: [eth0]
    services:
      - {name: sshd, port: 22}
YAML

# the document's status.exit_code is the process's exit status, and its
# status message or a finding says the pattern (the documents are checked
# against the schema together, at the end)
DOCS=()
doc_agrees() { # doc_agrees DOC RC PATTERN
    [ -s "$1" ] || { echo "# no document $1"; return 1; }
    DOCS+=("$1")
    local ex
    ex=$(json_get "$1" "d['status']['exit_code']")
    [ "$ex" = "$2" ] || { echo "# status.exit_code $ex, process exit $2"; return 1; }
    PAT=$3 json_run "$1" "
import os, re
says = [d['status']['message']] + [f['evidence'] for f in r.get('findings', [])]
sys.exit(0 if any(re.search(os.environ['PAT'], s) for s in says) else 1)" ||
        { echo "# neither the status nor a finding says '$3'"; return 1; }
}

# exit code | pattern (output and document) | arguments (--json DOC is added)
cases=(
    "3|--root .*/empty: not a snapshot: neither proc/ nor sys/|check --root $WORK/empty"
    "3|--root .*/tmplike: not a snapshot|check --root $WORK/tmplike"
    "3|--root .*/tmplike/: not a snapshot|check --policy $WORK/target.yaml --root $WORK/tmplike/"
    "3|could not see it \(interfaces: no sys/class/net\)|check --root $WORK/hollow"
    "2|could not see it \(sysctl: no proc/sys\)|check --root $WORK/nosysctl"
    "3|--results /nonexistent: No such file|check --root $FX/node-rdma --results /nonexistent"
    "3|--results .*/afile: not a folder|check --root $FX/node-rdma --results $WORK/afile"
    "3|not with --facts|check --facts $FX/node-rdma.json --results $WORK/results"
    "3|typo.yaml:3:3: planes.managment|check --policy $WORK/typo.yaml --root $FX/node-rdma"
    "3|unknown option|check --root $FX/node-rdma --bogus"
    "2|nqn.2024-01.io.example:open: allow_any_host 1|check --policy $WORK/target.yaml --root $FX/target-open"
)
i=0
for c in "${cases[@]}"; do
    IFS='|' read -r want pat args <<<"$c"
    i=$((i + 1))
    doc=$WORK/case$i.json
    # shellcheck disable=SC2086
    timeout 20 "$TP" check --json "$doc" ${args#check } >"$WORK/out" 2>&1
    rc=$?
    if [ "$rc" -eq "$want" ] && grep -qE -- "$pat" "$WORK/out" && doc_agrees "$doc" "$rc" "$pat"; then
        ok "trainpath $args -> exit $want, the document's exit_code too, '$pat'"
    else
        not_ok "trainpath $args -> exit $want, '$pat' (got exit $rc)"
        sed 's/^/#   /' "$WORK/out" | grep -vE '^#   (PASS|SKIP) ' | head -8
    fi
done

# the hollow snapshot: an audit that ran (status ok) but saw nothing: UNKNOWN
check "hollow snapshot: the audit ran, its verdict UNKNOWN, no rule PASSes or FAILs" test "$(json_run "$WORK/case4.json" "
st = [f['status'] for f in r['findings']]
print(d['status']['ok'], r['nagios']['word'], r['summary']['unknown'] > 10, st.count('PASS') + st.count('FAIL'))")" = "True UNKNOWN True 0"
check "... TIME-SYNC and SEC-LISTEN-PLANE are UNKNOWN, not SKIP" test "$(json_get "$WORK/case4.json" "
' '.join(f['status'] for f in r['findings'] if f['id'] in ('TIME-SYNC', 'SEC-LISTEN-PLANE'))")" = "UNKNOWN UNKNOWN"
check "... and its facts name the unseen parts" test "$(json_get "$WORK/case4.json" "
{m['part'] for m in r['facts']['missing'] if m.get('unseen')} >= {'interfaces', 'listeners', 'sysctl', 'time'}")" = True
check "without proc/sys: the kernel sysctl rules UNKNOWN, the others as the fixture (KERN-PTRACE)" \
    test "$(json_get "$WORK/case5.json" "[f['status'] for f in r['findings'] if f['id'] == 'KERN-PTRACE'][0]")" = UNKNOWN
check "the critical audit: status ok, verdict CRITICAL, exit_code 2" test "$(json_get "$WORK/case11.json" "
d['status']['ok'], r['nagios']['code'], d['status']['exit_code']")" = "True 2 2"
check "the bad policy: status usage, exit_code 3" test "$(json_get "$WORK/case9.json" "
d['status']['code'], d['status']['exit_code']")" = "usage 3"

# a results folder the policy names but that is not there: the secrets rule
# cannot PASS
"$TP" check --policy "$WORK/gone.yaml" --root "$FX/node-rdma" --json "$WORK/gone.json" >"$WORK/gone.out" 2>&1
rc=$?
check "a policy results folder that does not exist: SEC-RESULTS-SECRETS UNKNOWN, naming it" \
    test "$(json_get "$WORK/gone.json" "[(f['status'], 'no-such-results' in f['evidence']) for f in r['findings'] if f['id'] == 'SEC-RESULTS-SECRETS'][0]")" = "('UNKNOWN', True)"
check "... the audit does not pass (exit $rc), and the document says the same exit" \
    eval '[ "$rc" -ge 2 ] && doc_agrees "$WORK/gone.json" "$rc" no-such-results'
mkdir -p "$WORK/clean"
"$TP" check --root "$FX/node-rdma" --results "$WORK/clean" --json "$WORK/clean.json" >/dev/null 2>&1
check "a --results folder that exists and is clean: SEC-RESULTS-SECRETS PASS" test "$(json_get "$WORK/clean.json" "
[f['status'] for f in r['findings'] if f['id'] == 'SEC-RESULTS-SECRETS'][0]")" = PASS

# check facts on a folder that is no snapshot: bad input, exit 2
check "check facts --root on an empty folder: exit 2" run_rc 2 "$WORK/out" "$TP" check facts --root "$WORK/empty"
check "... saying it is not a snapshot" grep_q "not a snapshot" "$WORK/out"

# a fleet: a host whose facts saw nothing is UNKNOWN; a critical host outranks it
"$TP" check facts --root "$WORK/hollow" --json "$WORK/hollow-facts.json" >/dev/null 2>&1
run_rc 3 "$WORK/out" "$TP" check --policy "$WORK/target.yaml" --fleet "$WORK/hollow-facts.json" \
    --json "$WORK/fleet3.json"
check "--fleet of a host that saw nothing: exit 3" test $? -eq 0
check "... the document says 3 too, the host's rules unknown" test "$(json_get "$WORK/fleet3.json" "
d['status']['exit_code'], r['nagios']['code'], sum(g['unknown'] for g in r['by_rule']) > 0")" = "3 3 True"
"$TP" check facts --root "$FX/target-open" --json "$WORK/target-facts.json" >/dev/null 2>&1
run_rc 2 "$WORK/out" "$TP" check --policy "$WORK/target.yaml" --fleet "$WORK/hollow-facts.json" \
    "$WORK/target-facts.json" --json "$WORK/fleet2.json"
check "--fleet with a critical host too: exit 2 (CRITICAL outranks UNKNOWN)" test $? -eq 0
check "... and the document's exit_code 2" test "$(json_get "$WORK/fleet2.json" "d['status']['exit_code']")" = 2

# check rules: a stray argument is bad input
check "check rules extra: exit 2" run_rc 2 "$WORK/out" "$TP" check rules extra
check "... naming the argument" grep_q "extra: unexpected argument" "$WORK/out"
check "... and lists nothing" test "$(grep -c -- '-' "$WORK/out")" -le 1
check "check rules --help: exit 0" run_rc 0 "$WORK/out" "$TP" check rules --help
DOCS+=("$WORK/fleet3.json" "$WORK/fleet2.json")
check "every document above is a valid result document" valid_doc "${DOCS[@]}"
finish
