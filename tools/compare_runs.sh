#!/usr/bin/env bash
# compare_runs.sh OLD_DIR NEW_DIR — proves that two runs of the experiments hold the same data.
#
# Every CSV in OLD_DIR must exist in NEW_DIR with the same metadata (the `# key: value` lines,
# except date, git commits (build and checkout), argv and driftlab version, which name the run, not its data), and
# every column of the old header must be in the new one holding the same values, row by row,
# as text (so that %.17g and %a values are compared bit for bit). Columns only the new file
# has (the kit adds some, such as recipe) are listed, not compared. Every .md fragment must
# hold the same numbers in the same order (lines naming the date, commit or command aside).
# Wall-clock measurements are not data: *_timing.csv files and, in .md files, a number followed by
# "(measured ...)" are skipped. Metadata lines that differ are printed as notes (they describe, they are not
# values: e.g. a source path renamed by the layering) without failing the comparison.
# Exit status 0 when everything matches, 1 otherwise; one line per difference.
set -u
[ $# -eq 2 ] || { echo "usage: tools/compare_runs.sh OLD_DIR NEW_DIR" >&2; exit 2; }
old=$1 new=$2
[ -d "$old" ] && [ -d "$new" ] || { echo "compare_runs: both arguments must be directories" >&2; exit 2; }
status=0 ncsv=0 nmd=0
SKIP='^# (date|git|git-checkout|argv|driftlab):'
for o in "$old"/*.csv; do
    [ -e "$o" ] || continue
    f=$(basename "$o") n="$new/$f"
    case $f in *_timing.csv) echo "skipped $f (wall-clock times)"; continue ;; esac
    ncsv=$((ncsv + 1))
    if [ ! -f "$n" ]; then echo "MISSING $f"; status=1; continue; fi
    if ! diff <(grep '^#' "$o" | grep -Ev "$SKIP") <(grep '^#' "$n" | grep -Ev "$SKIP") >/dev/null 2>&1; then
        echo "note $f: metadata text differs (not a value):"
        diff <(grep '^#' "$o" | grep -Ev "$SKIP") <(grep '^#' "$n" | grep -Ev "$SKIP") | grep '^[<>]' | cut -c1-160 | head -4
    fi
    out=$(awk -v F="$f" '
        # CSV fields with double-quoted cells (kernel specs hold commas)
        function split_csv(line, a,    n, i, c, q, cur) {
            n = 0; cur = ""; q = 0
            for (i = 1; i <= length(line); i++) {
                c = substr(line, i, 1)
                if (c == "\"") { q = !q; cur = cur c }
                else if (c == "," && !q) { a[++n] = cur; cur = "" }
                else cur = cur c
            }
            a[++n] = cur
            return n
        }
        FNR == 1 { file++ }
        /^#/ { next }
        file == 1 && !ho { nh = split_csv($0, H); ho = 1; next }
        file == 1 { rows++; no = split_csv($0, R); for (i = 1; i <= nh; i++) O[rows, H[i]] = R[i]; next }
        file == 2 && !hn { nn = split_csv($0, N); hn = 1
            for (i = 1; i <= nh; i++) { found = 0; for (j = 1; j <= nn; j++) if (N[j] == H[i]) found = 1
                if (!found) { print "COLUMN " F ": " H[i] " is gone"; bad = 1 } }
            for (j = 1; j <= nn; j++) { found = 0; for (i = 1; i <= nh; i++) if (N[j] == H[i]) found = 1
                if (!found) extra = extra " " N[j] }
            next }
        file == 2 { r++; split_csv($0, R); for (j = 1; j <= nn; j++) V[r, N[j]] = R[j] }
        END {
            if (r != rows) { print "ROWS " F ": " rows " before, " r " after"; bad = 1 }
            for (k = 1; k <= rows; k++) for (i = 1; i <= nh; i++)
                if (O[k, H[i]] != V[k, H[i]]) { if (nd++ < 5) print "VALUE " F " row " k " column " H[i] ": " O[k, H[i]] " -> " V[k, H[i]]; bad = 1 }
            if (extra != "") print "note " F ": new columns" extra " (not compared)"
            exit bad
        }' "$o" "$n")
    rc=$?
    [ -n "$out" ] && echo "$out"
    [ $rc -ne 0 ] && status=1
done
for o in "$old"/*.md; do
    [ -e "$o" ] || continue
    f=$(basename "$o") n="$new/$f"
    nmd=$((nmd + 1))
    if [ ! -f "$n" ]; then echo "MISSING $f"; status=1; continue; fi
    # whole words only: a substring test would also drop every line that says "logit" or "validates"
    nums() { grep -Eiv '(^|[^[:alnum:]_])(date|commit|git|argv)([^[:alnum:]_]|$)|\./lab run' "$1" | sed -E 's/[-+0-9.eE]+ \(measured[^)]*\)//g' | grep -Eo '[-+]?(0x[0-9a-f.]+p[-+]?[0-9]+|[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?)'; }
    if ! diff <(nums "$o") <(nums "$n") >/dev/null; then
        echo "NUMBERS $f:"; diff <(nums "$o") <(nums "$n") | head -6; status=1
    fi
done
[ $status -eq 0 ] && echo "identical: $ncsv CSV files column by column, $nmd Markdown fragments number by number"
exit $status
