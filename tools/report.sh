#!/usr/bin/env bash
# report.sh — print notebooks-free-report.md on stdout (./lab report redirects it).
#
# The report is assembled, never written: for each experiment in experiments/registry.tsv
# (lines "name<TAB>title", # comments) a section with the fragment the experiment wrote
# (data/<name>.md: question, key table, takeaway with numbers from the data) and every plot
# plots/<name>.png or plots/<name>_*.png. Adding an experiment to the report is therefore
# one registry line plus its .gp file (and the program that writes the fragment).
# Something missing gives a visible note in its section, never a failed report.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT" || exit 1
export LC_ALL=C
REGISTRY="experiments/registry.tsv"
CALC="${DRIFT_BUILD_DIR:-build}/bin/drift-calc"

[[ -f "$REGISTRY" ]] || { echo "report.sh: $REGISTRY not found" >&2; exit 1; }

# name<TAB>title for every registered experiment, in registry order.
entries() { grep -v '^[[:space:]]*#' "$REGISTRY" | sed '/^[[:space:]]*$/d'; }
names() { entries | cut -f1; }

# GitHub's heading anchor: lower case, punctuation dropped (the em dash too), spaces -> '-'.
slug() { printf '%s' "$1" | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9 _-]//g; s/ /-/g'; }

heading() {
    local name="$1" title="$2"
    if [[ -n "$title" && "$title" != "$name" ]]; then printf '%s — %s' "$name" "$title"; else printf '%s' "$name"; fi
}

# A metadata value ("# key: value") from a data file, or empty.
meta() { sed -n "s/^# $2: //p" "$1" 2>/dev/null | head -n1; }

# The first data file of an experiment: data/<name>.csv, else data/<name>_*.csv.
first_csv() {
    local f
    for f in "data/$1.csv" data/"$1"_*.csv; do
        [[ -f "$f" ]] && { echo "$f"; return; }
    done
}

# plots/<name>.png and plots/<name>_*.png, leaving out those that belong to a longer
# registered name (plots/matmul_drift.png is matmul_drift's, not matmul's).
plots_of() {
    local name="$1" png other base owned
    for png in "plots/$name.png" plots/"$name"_*.png; do
        [[ -f "$png" ]] || continue
        base="$(basename "$png" .png)"
        owned=0
        while read -r other; do
            [[ "$other" == "$name" || ${#other} -le ${#name} ]] && continue
            [[ "$base" == "$other" || "$base" == "$other"_* ]] && owned=1
        done < <(names)
        [[ $owned -eq 0 ]] && echo "$png"
    done
}

# ---- title and introduction ---------------------------------------------------------------
first="$(names | head -n1)"
seed="" profile=""
if [[ -n "$first" ]] && csv="$(first_csv "$first")" && [[ -n "$csv" ]]; then
    seed="$(meta "$csv" seed)"
    profile="$(meta "$csv" profile)"
fi
cat <<EOF
# driftlab — the notebook-free report

*When a model's weights do not change, why does its output?* Each section below is one
experiment of the lab: the question it answers, a key table read from its data, its plots,
and a takeaway whose numbers are computed from the data by the experiment itself.

This file is generated: \`./lab report\` runs every experiment listed in
\`experiments/registry.tsv\` with \`--profile ${profile:-default}\` and seed ${seed:-1}, renders each
\`plots/<name>.gp\` with gnuplot, and assembles this page with \`tools/report.sh\`. Do not edit it
by hand; rerun \`./lab report\`. The data files behind every number are in \`data/\` (CSV with a
\`# key: value\` provenance header; hex floats beside decimals).

## Contents

EOF
while IFS=$'\t' read -r name title; do
    h="$(heading "$name" "${title:-}")"
    printf -- '- [%s](#%s)\n' "$h" "$(slug "$h")"
done < <(entries)
printf -- '- [Environment](#environment)\n\n'

# ---- one section per experiment -------------------------------------------------------------
while IFS=$'\t' read -r name title; do
    printf '## %s\n\n' "$(heading "$name" "${title:-}")"
    csv="$(first_csv "$name")"
    if [[ -n "$csv" ]]; then
        printf '*Data: `data/%s*.csv` (seed %s, profile %s, backend %s, commit %s).*\n\n' "$name" \
            "$(meta "$csv" seed)" "$(meta "$csv" profile)" "$(meta "$csv" backend)" "$(meta "$csv" git)"
    fi
    if [[ -f "data/$name.md" ]]; then
        cat "data/$name.md"
        printf '\n'
    else
        printf '> **Not run yet:** `data/%s.md` is missing. Run `./lab run %s` (or `./lab report`).\n\n' "$name" "$name"
    fi
    found=0
    while read -r png; do
        [[ -z "$png" ]] && continue
        found=1
        alt="$(basename "$png" .png | tr '_' ' ')"
        svg="${png%.png}.svg"
        printf '![%s](%s)\n' "$alt" "$png"
        [[ -f "$svg" ]] && printf '\n*Vector version: [%s](%s).*\n' "$svg" "$svg"
        printf '\n'
    done < <(plots_of "$name")
    if [[ $found -eq 0 ]]; then
        if [[ -f "plots/$name.gp" ]]; then
            printf '> **No plot yet:** run `./lab plot %s` to render `plots/%s*.png`.\n\n' "$name" "$name"
        else
            printf '> **No plot script:** `plots/%s.gp` does not exist.\n\n' "$name"
        fi
    fi
done < <(entries)

# ---- environment ----------------------------------------------------------------------------
printf '## Environment\n\n'
if [[ -x "$CALC" ]] && env_csv="$("$CALC" env 2>/dev/null)" && [[ -n "$env_csv" ]]; then
    printf 'From `drift-calc env` on the machine that generated this report:\n\n| key | value |\n|---|---|\n'
    printf '%s\n' "$env_csv" | tail -n +2 | while IFS= read -r line; do
        key="${line%%,*}"
        value="${line#*,}"
        # Quoted CSV field: strip the quotes, undouble inner quotes.
        if [[ "$value" == \"*\" ]]; then value="${value:1:${#value}-2}"; value="${value//\"\"/\"}"; fi
        printf '| %s | %s |\n' "$key" "${value//|/\\|}"
    done
    printf '\n'
elif [[ -n "${first:-}" ]] && csv="$(first_csv "$first")" && [[ -n "$csv" ]]; then
    printf 'From the metadata of `%s` (`drift-calc` was not built):\n\n| key | value |\n|---|---|\n' "$csv"
    sed -n 's/^# \([^:]*\): \(.*\)$/\1\t\2/p' "$csv" | while IFS=$'\t' read -r key value; do
        printf '| %s | %s |\n' "$key" "${value//|/\\|}"
    done
    printf '\n'
else
    printf '> **Unknown:** neither `%s` nor any data file was found; run `./lab report`.\n\n' "$CALC"
fi
