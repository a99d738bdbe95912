#!/usr/bin/env bash
# report_check_mutants.sh — proves that tests/report_check.sh can fail: on a copy of the
# report's sources it breaks one rule at a time (a caption removed, a summary line dropped, a
# typed number in a summary template, alt text that is only the file name, a summary number
# edited by hand) and expects report_check.sh to refuse each. The untouched copy must pass.
set -uo pipefail
ROOT="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fresh() {
    rm -rf "$tmp/r"; mkdir -p "$tmp/r/experiments" "$tmp/r/tests"
    cp -r "$ROOT/tools" "$tmp/r/"
    cp "$ROOT"/experiments/registry.tsv "$tmp/r/experiments/"
    for h in "$ROOT"/experiments/*/; do
        mkdir -p "$tmp/r/experiments/$(basename "$h")"
        cp "$h"report.txt "$h"plot.gp "$tmp/r/experiments/$(basename "$h")/" 2>/dev/null
    done
    cp "$ROOT/tests/report_check.sh" "$ROOT/notebooks-free-report.md" "$ROOT/CITATION.cff" "$tmp/r/" 2>/dev/null
    mv "$tmp/r/report_check.sh" "$tmp/r/tests/"
    ln -s "$ROOT/data" "$tmp/r/data"
    mkdir -p "$tmp/r/plots"
    cp "$ROOT"/plots/common.gp "$tmp/r/plots/"
    for p in "$ROOT"/plots/*.png; do ln -s "$p" "$tmp/r/plots/"; done
}
status=0
expect() { # expect pass|fail WHAT
    local rc=0
    bash "$tmp/r/tests/report_check.sh" "$tmp/r" >/dev/null 2>&1 || rc=$?
    if [[ $1 == pass && $rc -ne 0 ]] || [[ $1 == fail && $rc -eq 0 ]]; then
        echo "report_check_mutants: expected $1 on: $2"; status=1
    fi
}
R=notebooks-free-report.md
fresh; expect pass "the untouched copy"
fresh; awk '/^\*Look at:\*/ && !done { done = 1; next } { print }' "$tmp/r/$R" > "$tmp/x" && mv "$tmp/x" "$tmp/r/$R"; expect fail "a figure without its caption"
fresh; awk '/^- .*\(\[sum_order\]\(#/ { next } { print }' "$tmp/r/$R" > "$tmp/x" && mv "$tmp/x" "$tmp/r/$R"
       sed -i '/^summary: /d' "$tmp/r/experiments/sum_order/report.txt"; expect fail "a summary without sum_order"
fresh; sed -i '0,/^summary: /s/^summary: /summary: at K = 4096 /' "$tmp/r/experiments/formats/report.txt"; expect fail "a typed number in a summary template"
fresh; sed -i '0,/^!\[[^]]*\](plots\/\([a-z_]*\)\.png)/s//![\1](plots\/\1.png)/' "$tmp/r/$R"; expect fail "alt text that is the file name"
fresh; awk '/^## Summary of findings/ { s = 1 }
            s && /^- / && !done && match($0, /[0-9]\.[0-9]+/) { $0 = substr($0, 1, RSTART - 1) "9.99" substr($0, RSTART + RLENGTH); done = 1 }
            { print }' "$tmp/r/$R" > "$tmp/x" && mv "$tmp/x" "$tmp/r/$R"
       expect fail "a summary number edited by hand"
exit $status
