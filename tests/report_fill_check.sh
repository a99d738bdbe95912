#!/usr/bin/env bash
# report_fill_check.sh — known answers for tools/report_fill.awk, the filler of every number in
# the report's generated lines (summary, limits, captions). The CSV below is written by hand, and
# each expected value is read off it by hand (written next to the case), never by the filler.
# It holds what trips a naive reader: a quoted field with commas (a kernel spec), a doubled
# quote inside a quoted field, nan, provenance lines before the header, and columns joined by "/".
set -uo pipefail
ROOT="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/t.csv" <<'CSV'
# experiment: t
# seed: 7
format,K,err,kernel,note
bf16,64,0.5,"tiled:64,64,32",a
bf16,256,0.25,"splitk:4",b
fp16,64,2,"tiled:128,128,32","say ""hi"", twice"
fp16,256,nan,seq,d
fp32,1024,1e-07,"tiled:64,64,32",e
CSV
status=0 n=0
check() { # check TEMPLATE EXPECTED
    local got
    got="$(printf '%s\n' "$1" | awk -v datadir="$tmp" -f "$ROOT/tools/report_fill.awk")"
    n=$((n + 1))
    [[ "$got" == "$2" ]] || { echo "report_fill: '$1' gave '$got', expected '$2'"; status=1; }
}
check '{get t.csv err format=bf16 K=256}' '0.25'                       # row 2
check '{get t.csv kernel format=fp16 K=64}' 'tiled:128,128,32'          # quoted, commas kept, quotes dropped
check '{get t.csv note format=fp16 K=64}' 'say "hi", twice'             # "" inside quotes is one "
check '{get t.csv note K=1024}' 'e'                                     # the field after a quoted one with commas
check '{max t.csv err}' '2'                                             # nan is skipped: max(0.5, 0.25, 2, 1e-07)
check '{min t.csv err}' '1e-07'                                         # %.3g of 1e-07
check '{sum t.csv err format=bf16}' '0.75'                              # 0.5 + 0.25
check '{count t.csv format=fp16}' '2'
check '{count t.csv K>=256}' '3'                                        # 256, 256, 1024
check '{distinct t.csv kernel}' '4'                                     # tiled:64,64,32 (twice), splitk:4, tiled:128,128,32, seq
check '{list t.csv format}' 'bf16, fp16, fp32'                          # file order, once each
check '{list t.csv format/K K=64}' 'bf16/64, fp16/64'                   # columns joined by /
check '{argmax t.csv err format}' 'fp16'                                # err = 2 is fp16's
check '{argmin t.csv err K}' '1024'
check '{get t.csv err format=bf16 K=@max}' '0.25'                       # bf16's largest K is 256
check '{get t.csv format K=@max}' 'fp32'                                # 1024
check '{median t.csv err}' '0.375'                                      # (0.25 + 0.5) / 2 of 1e-07, 0.25, 0.5, 2
check '{meta t.csv seed}' '7'
check '{get t.csv err format=fp64}' 'n/a'                               # no matching row
check '{get t.csv nosuch}' 'n/a'                                        # no such column
check '{get absent.csv err}' 'n/a'                                      # no such file
check '{get t.csv err format=bf16 %.2f}' '0.50'                         # a format last overrides %.3g
check 'at K = {max t.csv K} and {count t.csv} rows' 'at K = 1024 and 5 rows'  # two placeholders in one line
echo "report_fill_check: $n cases, status $status"
exit $status
