#!/usr/bin/env bash
# compare_runs_check.sh — known answers for tools/compare_runs.sh, the proof that a refactor kept
# the data. Two hand-written runs: the tool must call them identical when only the lines that name
# the run differ (date, commit, argv, the Reproduce command), and must see a changed value in a
# CSV cell, in a quoted CSV cell, and in a fragment line that says "logits" or "validates" (words
# that hold "git" and "date": a substring filter once dropped such lines unread).
set -uo pipefail
ROOT="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/old" "$tmp/new"
write() { # write DIR DATE COMMIT CELL KERNEL GAP ULPS
    printf '# experiment: t\n# date: %s\n# git: %s\nformat,kernel,err\nbf16,"%s",%s\n' "$2" "$3" "$5" "$4" > "$1/t.csv"
    printf 'Reproduce: `./lab run t --seed 1` at commit %s, %s.\n\n- The top-2 logits gap was %s.\n- It validates to %s ulps.\n' \
        "$3" "$2" "$6" "$7" > "$1/t.md"
}
status=0
expect() { # expect RC WHAT
    local out rc
    out=$(bash "$ROOT/tools/compare_runs.sh" "$tmp/old" "$tmp/new" 2>&1); rc=$?
    [[ $rc -eq $1 ]] || { echo "compare_runs: $2: exit $rc, expected $1"; echo "$out" | head -4; status=1; }
}
write "$tmp/old" 2026-01-01 aaaa 0.5 "tiled:64,64,32" 0.125 3
write "$tmp/new" 2026-02-02 bbbb 0.5 "tiled:64,64,32" 0.125 3
expect 0 "runs differing only in date and commit"
write "$tmp/new" 2026-02-02 bbbb 0.25 "tiled:64,64,32" 0.125 3
expect 1 "a changed CSV value"
write "$tmp/new" 2026-02-02 bbbb 0.5 "tiled:64,64,16" 0.125 3
expect 1 "a changed quoted CSV cell"
write "$tmp/new" 2026-02-02 bbbb 0.5 "tiled:64,64,32" 0.25 3
expect 1 "a changed number on a fragment line about logits"
write "$tmp/new" 2026-02-02 bbbb 0.5 "tiled:64,64,32" 0.125 4
expect 1 "a changed number on a fragment line that says validates"
[[ $status -eq 0 ]] && echo "compare_runs_check: 5 cases"
exit $status
