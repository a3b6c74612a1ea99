# The boundary between a bash program and its tests (bash and coreutils only).
#
# The same file runs on both sides (`referee.verifiers.code.boundary`):
# - referee_serve FILE: the program's side. Sources the candidate's FILE, tells the tests
#   which functions it defines, then runs each requested function in a subshell and sends
#   back its exit status and its exact stdout.
# - referee_test: the tests' side. Reads the verdict's key (the host's, per item: a line
#   the program made the test print never carries it), then the test code, on stdin; defines a proxy for each
#   of the program's functions (never for a builtin, keyword or command: the program
#   cannot stand in for `[`, `test`, `echo` or `grep`), runs the test in a subshell and
#   prints the verdict as its last line: @@referee-verdict@@, the key and a JSON object.
# Messages are lines of tab-separated fields, each base64-encoded, on the channel fds
# named by REFEREE_CHANNEL_IN and REFEREE_CHANNEL_OUT.

referee_encode() { printf '%s' "$1" | base64 -w0; }
referee_decode() { printf '%s' "$1" | base64 -d; }

referee_serve() {
    local in="$REFEREE_CHANNEL_IN" out="$REFEREE_CHANNEL_OUT"
    trap '' PIPE
    # shellcheck disable=SC1090
    . "$1" </dev/null
    local names
    names=$(declare -F | cut -d' ' -f3 | grep -v '^referee_' | tr '\n' ' ')
    printf 'hello\t%s\n' "$(referee_encode "$names")" >&"$out" || return
    local line fields name args status output
    while IFS= read -r line <&"$in"; do
        IFS=$'\t' read -r -a fields <<<"$line"
        name=$(referee_decode "${fields[0]}")
        args=()
        for field in "${fields[@]:1}"; do args+=("$(referee_decode "$field"; printf x)"); done
        args=("${args[@]/%x/}")
        output=$("$name" "${args[@]}" </dev/null; status=$?; printf x; exit "$status")
        status=$?
        printf '%s\t%s\n' "$status" "$(referee_encode "${output%x}")" >&"$out" || return
    done
}

referee_call() {
    local request line status
    : >"$REFEREE_CALLED"
    request=$(referee_encode "$1")
    shift
    for arg in "$@"; do request+=$'\t'$(referee_encode "$arg"); done
    if [ -e "$REFEREE_GONE" ] || ! printf '%s\n' "$request" >&"$REFEREE_CHANNEL_OUT" 2>/dev/null \
        || ! IFS= read -r line <&"$REFEREE_CHANNEL_IN"; then
        : >"$REFEREE_GONE"
        return 255
    fi
    status=${line%%$'\t'*}
    referee_decode "${line#*$'\t'}"
    return "$status"
}

referee_test() {
    local key test line names name status passed message flags called
    trap '' PIPE  # a program that is gone is a failed write, not a killed test
    IFS= read -r key
    test=$(cat; printf x)
    test=${test%x}
    export REFEREE_GONE="$TMPDIR/.referee_gone"
    # whether the test asked the program anything: a verdict reached without that is the
    # reference's (it would be the same for every program)
    export REFEREE_CALLED="$TMPDIR/.referee_called"
    rm -f "$REFEREE_GONE" "$REFEREE_CALLED"
    if IFS= read -r line <&"$REFEREE_CHANNEL_IN" && [ "${line%%$'\t'*}" = hello ]; then
        names=$(referee_decode "${line#*$'\t'}")
    else
        : >"$REFEREE_GONE"
    fi
    for name in $names; do
        [[ $name =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || continue
        [ -z "$(type -t "$name")" ] || continue
        eval "$name() { referee_call $name \"\$@\"; }"
    done
    # a command that is not there is one the program was to define: asked of it
    command_not_found_handle() {
        : >"$REFEREE_CALLED"
        printf 'bash: %s: command not found\n' "$1" >&2
        return 127
    }
    # the test's own code starts: a shell ending after this with no verdict ended in it
    printf '\n@@referee-verdict@@ %s {"started": true}\n' "$key"
    (eval "$test")
    status=$?
    passed=false
    message="the test exited with status $status"
    flags='[]'
    if [ -e "$REFEREE_GONE" ] && [ -e "$REFEREE_CALLED" ]; then
        message="the program exited before the tests finished"
        flags='["early_exit"]'
    elif [ "$status" -eq 0 ]; then
        passed=true
        message=""
    fi
    # a program gone before a test that never asked it anything decided nothing: a setup
    # that exits ends both sides, and the test's verdict is its own
    called=true
    [ -e "$REFEREE_CALLED" ] || called=false
    printf '\n@@referee-verdict@@ %s {"passed": %s, "message": "%s", "flags": %s, "called": %s, "harness_error": ""}\n' \
        "$key" "$passed" "$message" "$flags" "$called"
}
