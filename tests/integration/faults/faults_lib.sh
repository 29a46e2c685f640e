# Helpers shared by the fault tests (sourced after ../lib.sh).

# is DESC WANT GOT: ok when GOT is WANT, else not ok showing both.
is() {
    if [ "$3" = "$2" ]; then
        ok "$1"
    else
        echo "# want: $2"
        echo "#  got: $3"
        not_ok "$1"
    fi
}

# wait_exit PID SECONDS: wait at most SECONDS for PID (a job of this shell)
# to end, SIGKILL it past that; RC is its exit status. (Polls: bash reaps
# its jobs as they end, so kill -0 fails once PID is gone.)
wait_exit() {
    local i
    for ((i = 0; i < $2 * 20; i++)); do
        kill -0 "$1" 2>/dev/null || break
        sleep 0.05
    done
    kill -9 "$1" 2>/dev/null
    wait "$1"
    RC=$?
}

