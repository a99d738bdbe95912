#!/usr/bin/env bash
# report_check.sh [ROOT] — checks the committed report against its rules, on the committed
# data/ and notebooks-free-report.md (fast: no experiment runs). It fails, one line per fault, on
#   - a PNG linked in the report without alt text that says what it shows (at least four words,
#     not just its file name) or without a caption naming what to look at ("*Look at:* ..."
#     with at least three words) right under it; a linked PNG that does not exist;
#   - a summary that lacks a line for an experiment of experiments/registry.tsv, or holds a
#     value that could not be read ("n/a") or a note that a line is not declared;
#   - a number in the summary not read from data: the summary of the report must be what
#     tools/report.sh --summary prints from data/ now, and the declared templates
#     (experiments/*/report.txt, the #@ lines of experiments/*/plot.gp) may hold no typed number outside
#     their {placeholders};
#   - a report body (everything before "## Environment") of 8,000 words or more.
set -uo pipefail
ROOT="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
cd "$ROOT" || exit 2
export LC_ALL=C
REPORT=notebooks-free-report.md
fail=0
bad() { printf 'report_check: %s\n' "$*"; fail=1; }
[[ -f "$REPORT" ]] || { bad "$REPORT not found"; exit 1; }

# ---- figures: alt text and caption --------------------------------------------------------
while IFS=$'\t' read -r lineno alt png; do
    [[ -f "$png" ]] || bad "line $lineno: $png is linked but does not exist"
    base="$(basename "$png" .png)"
    nwords=$(wc -w <<<"$alt")
    if [[ $nwords -lt 4 || "$alt" == "${base//_/ }" || "$alt" == "$base" ]]; then
        bad "line $lineno: $png: the alt text '$alt' does not say what the figure shows"
    fi
    look="$(awk -v n="$lineno" 'NR > n && NF { print; exit }' "$REPORT")"
    if [[ "$look" != '*Look at:* '* ]]; then
        bad "line $lineno: $png has no caption (\"*Look at:* ...\") under it"
    else
        what="${look#\*Look at:\* }"
        what="${what%%. *}"
        [[ $(wc -w <<<"$what") -ge 3 ]] || bad "line $lineno: $png: the caption does not name what to look at ('$what')"
    fi
done < <(awk 'match($0, /^!\[[^]]*\]\([^)]*\.png\)/) {
                 s = substr($0, 3, RLENGTH - 2); i = index(s, "](")
                 printf "%d\t%s\t%s\n", NR, substr(s, 1, i - 1), substr(s, i + 2, length(s) - i - 2) }' "$REPORT")
grep -n 'No caption declared' "$REPORT" | while IFS= read -r l; do printf 'report_check: %s\n' "$l"; done
grep -q 'No caption declared' "$REPORT" && fail=1

# ---- summary: one line per experiment, every number from data -----------------------------
summary="$(awk '/^## Summary of findings/ { s = 1; next } s && /^## / { exit } s && /^- / { print }' "$REPORT")"
[[ -n "$summary" ]] || bad "no '## Summary of findings' section with lines"
while IFS=$'\t' read -r name _rest; do
    [[ -z "$name" || "$name" == \#* ]] && continue
    grep -qF "([$name](#" <<<"$summary" || grep -qF -- "- **$name**" <<<"$summary" || bad "summary: no line for experiment $name"
done < experiments/registry.tsv
grep -n 'n/a\|no summary line declared' <<<"$summary" | while IFS= read -r l; do printf 'report_check: summary: %s\n' "$l"; done
grep -q 'n/a\|no summary line declared' <<<"$summary" && fail=1
if ! diff <(printf '%s\n' "$summary") <(tools/report.sh --summary) >/dev/null; then
    bad "summary: the report's summary is not what tools/report.sh --summary reads from data/ now:"
    diff <(printf '%s\n' "$summary") <(tools/report.sh --summary) | head -6
fi
# A typed number: a token of digits (with a decimal point, exponent or sign) holding no
# letter other than an exponent's e; "fp32", "top-2", "tc:h100" and "2^-p" are names.
typed() {
    sed 's/{[a-z][a-z]* [^{}]*}/ /g' | tr -s ' \t()[],;=<>*|`"' '\n' |
        grep -E '^[-+~]?[0-9.]*[0-9][0-9.]*([eE][-+]?[0-9]+)?[%x]?[.:]?$' | head -n 3 | paste -sd' ' -
}
for f in experiments/*/report.txt; do
    [[ -f "$f" ]] || continue
    while IFS= read -r l; do
        # 0 and 1 name things ("row 0", "T = 1"); any other number must come from data
        t="$(typed <<<"${l#*: }" | tr ' ' '\n' | grep -vxE '0|1' | paste -sd' ' -)"
        [[ -n "$t" ]] && bad "$f: a typed number ($t) in: ${l:0:100}"
    done < <(grep -E '^(summary|limit): ' "$f")
done
# A caption may name a definitional small number ("the line at 0"), not a measured one.
for f in experiments/*/plot.gp; do
    while IFS= read -r l; do
        t="$(typed <<<"${l#*: }" | tr ' ' '\n' | grep -E '[0-9][.][0-9]|[0-9][eE][-+]?[0-9]|[%x]$|[0-9]{3}' | grep -vxE '(19|20)[0-9]{2}' | paste -sd' ' -)"
        [[ -n "$t" ]] && bad "$f: a typed number ($t) in a caption: ${l:0:100}"
    done < <(grep -E '^#@ [A-Za-z0-9_]+ (caption|few): ' "$f")
done

# ---- length -------------------------------------------------------------------------------
# every whitespace-separated token counts, whatever the locale (a dash too)
words=$(awk '/^## Environment/ { exit } { n += NF } END { print n + 0 }' "$REPORT")
[[ $words -lt 8000 ]] || bad "the report body has $words words (limit: under 8000)"

exit $fail
