#!/usr/bin/env bash
# Bad input: every case exits 2 with a message that names the input, before
# any traffic; --json still gets a valid document saying why.
. "$(dirname "$0")/../lib.sh"

echo "tiny" >"$WORK/short.key"
# exit code | pattern the message must contain | arguments
cases=(
    "2|needs the server's HOST|net lat"
    "2|--sizes: .*'12X'|net lat 127.0.0.1 --sizes 12X"
    "2|--sizes|net lat 127.0.0.1 --sizes 0"
    "2|--sizes: .*'4KB'.*ambiguous|net bw 127.0.0.1 --sizes 4KB"
    "2|--sizes: .*over the 1 GiB limit|net bw 127.0.0.1 --sizes 2G"
    "2|nosuchprov|net lat 127.0.0.1 --transport ofi --provider nosuchprov"
    "2|--transport 'carrier-pigeon'|net lat 127.0.0.1 --transport carrier-pigeon"
    "2|--transport ofi needs --provider|net lat 127.0.0.1 --transport ofi"
    "2|--rma needs --transport ofi|net lat 127.0.0.1 --rma"
    "2|/nonexistent/key: cannot read|net lat 127.0.0.1 --key-file /nonexistent/key"
    "2|short.key: key is 4 bytes|net lat 127.0.0.1 --key-file $WORK/short.key"
    "2|--iters or --time, not both|net lat 127.0.0.1 --iters 10 --time 1"
    "2|--iters: .*'-5'|net lat 127.0.0.1 --iters -5"
    "2|unknown option '--bogus'|net lat 127.0.0.1 --bogus"
    "2|option '--sizes' needs a value|net lat 127.0.0.1 --sizes"
    "2|unknown net test 'frob'|net frob"
    "2|unknown command 'frob'|frob"
    "2|--port: .*'70000'|net lat 127.0.0.1 --port 70000"
    "2|--timeout: .*'soon'|net lat 127.0.0.1 --timeout soon"
    "2|--window: .*'0'|net bw 127.0.0.1 --window 0"
    "2|--window is for bw|net lat 127.0.0.1 --window 8"
    "2|--streams and --load-size are for net loaded|net lat 127.0.0.1 --streams 2"
    "2|--streams: .*'999'|net loaded 127.0.0.1 --streams 999"
    "2|cannot resolve host 'no-such-host.invalid'|net lat no-such-host.invalid --iters 1"
    "2|unexpected argument 'extra'|net lat 127.0.0.1 extra"
    "2|--json /nonexistent/dir/out.json|net lat 127.0.0.1 --json /nonexistent/dir/out.json"
    "2|refusing to serve on 0.0.0.0 without a key|net serve --bind 0.0.0.0 --port 0"
    "2|--bind no-such-host.invalid|net serve --bind no-such-host.invalid --port 0"
    "2|short.key: key is 4 bytes|net serve --bind 127.0.0.1 --key-file $WORK/short.key"
    "2|are for net serve|net lat 127.0.0.1 --one-off"
    "2|net serve takes no argument|net serve 127.0.0.1"
    "2|--cpu: cannot parse '3-1'|net lat 127.0.0.1 --cpu 3-1"
    "2|--cpu: CPU 99999 in '99999' is beyond|net lat 127.0.0.1 --cpu 99999"
    "2|--cpu 1000: cannot run there|net lat 127.0.0.1 --cpu 1000"
)
expect_cases "${cases[@]}"

# nothing listening: a peer failure (exit 1), naming host and port
run_rc 1 "$WORK/refused.out" "$TP" net lat 127.0.0.1 --port 1 --iters 1
check "connection refused exits 1" test $? -eq 0
check "... naming host and port" grep_q "cannot connect to 127\.0\.0\.1 port 1" "$WORK/refused.out"

# bad input with --json still leaves a valid document that says why
run_rc 2 "$WORK/doc.out" "$TP" net lat 127.0.0.1 --sizes 12X --json "$WORK/bad.json"
check "bad input with --json exits 2" test $? -eq 0
check "... and writes a valid document" valid_doc "$WORK/bad.json"
check "... whose status is usage with the message" test "$(json_get "$WORK/bad.json" "d['status']['code'] + ' ' + str(d['status']['exit_code']) + ' ' + str('12X' in d['status']['message'])")" = "usage 2 True"

run_rc 0 "$WORK/help.out" "$TP" net --help
check "net --help exits 0 and lists the tests" grep_q "lat\|bw\|bibw\|loaded" "$WORK/help.out"
run_rc 0 "$WORK/ver.out" "$TP" --version
check "--version prints the version" grep_q "^trainpath [0-9]+\.[0-9]+\.[0-9]+" "$WORK/ver.out"
finish
