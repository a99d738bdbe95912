#!/usr/bin/env bash
# report.sh — print notebooks-free-report.md on stdout (./lab report redirects it).
#   tools/report.sh --summary   prints only the summary lines (the report check compares them)
#
# The report is assembled, never written: everything an experiment contributes is declared
# by the experiment itself, so that a new experiment is one registry line plus its files:
#   data/<name>.md              its fragment (question, key tables, takeaway from the data)
#   experiments/<name>/plot.gp  its plots, each with "#@ FIG alt: / look: / caption:" lines
#                               (and "few:", the sentence shown when FIG was not drawn)
#   experiments/<name>/report.txt  "summary:" (its line of the front page), "term:" (glossary)
#                               and "limit:" (Limitations) lines, with {placeholders} filled
#                               from data/ by tools/report_fill.awk: no number is typed.
# Something missing gives a visible note, never a failed report (the report check fails).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT" || exit 1
export LC_ALL=C
REGISTRY="experiments/registry.tsv"
CALC="${DRIFT_BUILD_DIR:-build}/bin/drift-calc"

[[ -f "$REGISTRY" ]] || { echo "report.sh: $REGISTRY not found" >&2; exit 1; }

# name<TAB>title[<TAB>needs] for every registered experiment, in registry order.
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


# A template line with its {placeholders} filled from data/ (tools/report_fill.awk).
fill() { awk -v datadir=data -f tools/report_fill.awk; }

# "key: text" lines of experiments/<name>/report.txt.
decl() { [[ -f "experiments/$1/report.txt" ]] && sed -n "s/^$2: //p" "experiments/$1/report.txt"; return 0; }

# The figures experiments/<name>/plot.gp declares ("#@ FIG alt: ..."), in its order.
figs_of() { [[ -f "experiments/$1/plot.gp" ]] && sed -n 's/^#@ \([A-Za-z0-9_]*\) alt: .*/\1/p' "experiments/$1/plot.gp"; return 0; }
# The same from the declarations read once ($decls, the #@ lines of one script): no process.
decl_of() {
    local line
    while IFS= read -r line; do
        [[ "$line" == "#@ $1 $2: "* ]] && { printf '%s' "${line#"#@ $1 $2: "}"; return; }
    done <<<"$decls"
}
# A template line filled only when it has a placeholder (most captions have none).
fill_if() { if [[ "$1" == *"{"* ]]; then printf '%s\n' "$1" | fill; else printf '%s\n' "$1"; fi; }

# 0 when the experiment left data: a fragment and a first CSV with at least one row (a GPU
# experiment without a GPU writes none, or a header only).
ran() {
    local c
    [[ -f "data/$1.md" ]] || return 1
    c="$(first_csv "$1")"
    [[ -n "$c" ]] && grep -v '^#' "$c" | sed -n 2p | grep -q .
}

# The summary line(s) of one experiment, or a visible note when it has none.
summary_of() {
    local name="$1" needs="$2" h="$3" lines
    if [[ "$needs" == gpu ]] && ! ran "$name"; then
        printf -- '- **%s** ([%s](#%s)): not run; it measures a GPU and this report was made without one.\n' "$name" "$name" "$(slug "$h")"
        return
    fi
    lines="$(decl "$name" summary | fill)"
    if [[ -z "$lines" ]]; then
        printf -- '- **%s**: no summary line declared (experiments/%s/report.txt).\n' "$name" "$name"
        return
    fi
    printf '%s\n' "$lines" | while IFS= read -r l; do printf -- '- %s ([%s](#%s))\n' "$l" "$name" "$(slug "$h")"; done
}

if [[ "${1:-}" == --summary ]]; then
    while IFS=$'\t' read -r name title needs; do summary_of "$name" "${needs:-}" "$(heading "$name" "${title:-}")"; done < <(entries)
    exit 0
fi

# A fragment as the report shows it, short enough to read: the question, the command that
# reproduces it, a "Skipped" note, and the takeaway's bullets; every other part (the tables,
# detail paragraphs) stays in the fragment data/<name>.md, named by its bold lead in one
# "In data/..." line, and is linked. MAXROWS: a table that short may stay (0: none).
MAXROWS=0
fragment() {
    local name="$1"
    awk -v name="$name" -v max="$MAXROWS" -v prov="$2" '
        function lead(t) { if (match(t, /^\*\*[^*]+\*\*/)) { t = substr(t, 3, RLENGTH - 4); sub(/[.:]$/, "", t); return t } return "" }
        function moved(t) { if (t == "a table") untitled++; else if (t != "") { named++; if (named <= 3) more = more (more == "" ? "" : "; ") t } }
        function block() {   # one paragraph (and the table right under it, if any)
            if (np == 0 && nt == 0) return
            p1 = np ? para[1] : ""
            if (p1 ~ /^\*\*Question\.\*\*/) {   # the question itself; its method details stay in the fragment
                q = p1; if (match(q, /[?.] [A-Z0-9]/)) { q = substr(q, 1, RSTART); setup = 1 }
                print q; print "" }
            else if (p1 ~ /^Reproduce: /) {
                if (prov == "same") { np = 0; nt = 0; pdone = 0; return }
                sub(/` \(.*$/, "`", p1); sub(/\.$/, "", p1); print p1 (prov != "" ? " (" prov ")" : "") "."; print "" }
            else if (p1 ~ /^\*\*Skipped\.\*\*/) { for (i = 1; i <= np; i++) print para[i]; print "" }
            else if (p1 ~ /^\*\*Takeaway/ ) { tk = 1; for (i = 1; i <= np; i++) print para[i]; print "" }
            else if (tk && p1 ~ /^- / && nt == 0) { for (i = 1; i <= np; i++) print para[i]; print "" }
            else if (nt > 0 && nt - 2 <= max && shown < 1) { shown++; for (i = 1; i <= np; i++) print para[i]; if (np) print ""; for (i = 1; i <= nt; i++) print tab[i]; print "" }
            else moved(lead(p1) != "" ? lead(p1) : (nt ? "a table" : ""))
            np = 0; nt = 0; pdone = 0
        }
        /^\|/ { tab[++nt] = $0; next }
        /^$/ { if (np) pdone = 1; if (nt) block(); next }
        { if (nt || pdone) block(); pdone = 0; para[++np] = $0 }
        END {
            block()
            # tables without a bold lead are counted, not listed one by one
            # (and beyond three named parts, counted too: the fragment is one click away)
            rest = untitled + (named > 3 ? named - 3 : 0)
            if (rest) more = more (more == "" ? "" : "; ") (more == "" ? (rest == 1 ? "a table" : rest " tables") : "and " rest " more")
            if (more != "") printf "*More in [data/%s.md](data/%s.md)%s:* %s.\n\n", name, name, setup ? " (set-up)" : "", more
        }' "data/$name.md"
}

# ---- front page -----------------------------------------------------------------------------
first="$(names | head -n1)"
seed="" profile="" datacommit=""
if [[ -n "$first" ]] && csv="$(first_csv "$first")" && [[ -n "$csv" ]]; then
    seed="$(meta "$csv" seed)"
    profile="$(meta "$csv" profile)"
    datacommit="$(meta "$csv" git)"
fi
commit="$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
# CITATION.cff is the one place the citation is written; the report quotes it.
cff() { sed -n "s/^$1: *\"\{0,1\}\([^\"]*\)\"\{0,1\} *$/\1/p" CITATION.cff 2>/dev/null | head -n1; }
cff_authors="$(awk '/^authors:/ { a = 1; next } a && /^[^ -]/ { a = 0 } a && /name:/ { sub(/.*name: */, ""); gsub(/"/, ""); printf "%s%s", (n++ ? ", " : ""), $0 }' CITATION.cff 2>/dev/null)"
# The front page's provenance: one line of the report, assembled in two parts here.
generated="*Generated $(date -u +%Y-%m-%d) from commit \`$commit\` (data: commit \`${datacommit:-unknown}\`, \`--profile ${profile:-default}\`, seed ${seed:-1})"
generated+=" by \`./lab report\`; do not edit by hand. Each section reproduces with \`./lab run NAME --profile ${profile:-default} --seed ${seed:-1}\` at the data commit, unless it names another.*"
cat <<EOF
# driftlab — the notebook-free report

$generated

**How to cite:** ${cff_authors:-The driftlab authors}, "$(cff title)", version $(cff version), $(cff date-released) (commit \`$commit\`). The full record is in [CITATION.cff](CITATION.cff).

## In one minute

A language model whose weights never change can still answer the same question differently.
The cause is arithmetic: a computer keeps a fixed number of digits, so the order in which it
adds numbers (set by the chip, the software's method, and how many other requests share the
work) changes the last digits. Usually nothing shows. But when the model is almost undecided
between two words, those digits pick the word, and from there the text differs. This lab
measures each link of that chain against exact answers: how large the changes are, when they
change a word, which fixes remove them at what cost, and which prompts will change when the
machine does.

## Summary of findings

One line per experiment; every number is read from \`data/\` (seed ${seed:-1}).

EOF
while IFS=$'\t' read -r name title needs; do summary_of "$name" "${needs:-}" "$(heading "$name" "${title:-}")"; done < <(entries)

printf '\n## Glossary\n\n'
# Each experiment declares the terms its section uses; a term declared twice is defined once.
for n in $(names); do decl "$n" term; done | awk -F' = ' '!seen[tolower($1)]++' | sort -f | \
    while IFS= read -r t; do printf -- '- **%s**: %s\n' "${t%% = *}" "${t#* = }"; done

printf '\nAlso: [Methods](#methods), [Limitations](#limitations), [References](#references); figures also as `.svg`.\n\n'

# ---- one section per experiment -------------------------------------------------------------
while IFS=$'\t' read -r name title needs; do
    printf '## %s\n\n' "$(heading "$name" "${title:-}")"
    csv="$(first_csv "$name")" prov=""
    [[ -n "$csv" ]] && prov="commit $(meta "$csv" git)"
    # the front page names the command and the data commit once; a section says its own only
    # where its data come from another commit
    [[ -n "$datacommit" && "$prov" == "commit $datacommit" ]] && prov="same"
    if [[ -f "data/$name.md" ]]; then
        # Wall-clock numbers are not reproducible: they live in data/*_timing.csv, not here, so
        # that this page is byte-identical between runs apart from its date and commit lines.
        fragment "$name" "$prov" | sed -E 's/\| [0-9.eE+-]+ \(measured ([^)]*)\)\) \|/| measured \1): see data\/'"$name"'_timing.csv |/' 
        printf '\n'
    elif [[ "${needs:-}" == gpu ]]; then # skipped on a machine without a GPU (exit 77, no files)
        printf '> **Skipped:** %s measures a GPU and this report was made without one. Run `./lab run %s --backend cuda` on a machine with a CUDA device.\n\n' "$name" "$name"
        continue
    else
        printf '> **Not run yet:** `data/%s.md` is missing. Run `./lab run %s` (or `./lab report`).\n\n' "$name" "$name"
    fi
    found=0
    decls="$(grep '^#@ ' "experiments/$name/plot.gp" 2>/dev/null)"
    for fig in $(figs_of "$name"); do
        png="plots/$fig.png"
        if [[ -f "$png" ]]; then
            found=1
            printf '![%s](%s)\n\n' "$(decl_of "$fig" alt)" "$png"
            printf '*Look at:* %s. %s\n\n' "$(decl_of "$fig" look)" "$(fill_if "$(decl_of "$fig" caption)")"
        elif [[ -n "$(decl_of "$fig" few)" ]]; then
            # the script draws no figure from fewer than three points: a sentence says so
            printf '*No figure %s:* %s\n\n' "$fig" "$(fill_if "$(decl_of "$fig" few)")"
        fi
    done
    # a PNG that no declaration names still shows, marked (the report check refuses it)
    while read -r png; do
        [[ -z "$png" ]] && continue
        fig="$(basename "$png" .png)"
        [[ -n "$(decl_of "$fig" alt)" ]] && continue
        found=1
        printf '![%s](%s)\n\n*No caption declared for %s in experiments/%s/plot.gp.*\n\n' "$fig" "$png" "$fig" "$name"
    done < <(plots_of "$name")
    # a plot script that declares no figure draws none (its tables say it all): nothing to show
    if [[ $found -eq 0 && ! -f "experiments/$name/plot.gp" ]]; then
        printf '> **No plot script:** `experiments/%s/plot.gp` does not exist.\n\n' "$name"
    fi
done < <(entries)


# ---- methods, limitations ---------------------------------------------------------------------
cat <<'EOF'
## Methods

- **Exact witnesses.** Sums and dot products are exact (a superaccumulator, tested equal to
  MPFR's `mpfr_sum`); values and constants use MPFR at 256 bits. Each error is held against the
  exact result of the inputs as the kernel saw them and of the inputs before rounding.
- **Formats, orders.** Every format is emulated with correct rounding; a reduction order is data
  (`seq`, `pairwise`, `splitk:S`, `tc:ARCH`, ...), printed in every CSV row.
- **Statistics.** Proportions carry Wilson 95% intervals, clustered by the independent unit
  where events share one (hidden states); sigma is a maximum-likelihood fit of
  P(flip) = Phi(-gap / sigma); random draws come from seeded Philox streams, so data are
  byte-identical on any machine.

EOF
cat <<'EOF'
## Limitations

From the data's provenance lines and each experiment's declared limits.

EOF
# What ran: the backends, seeds and profiles of the data, the experiments that did not run,
# the models read; then every experiment's own "limit:" lines.
backends="$(for n in $(names); do c="$(first_csv "$n")"; [[ -n "$c" ]] && meta "$c" backend; done | sort -u | paste -sd, - | sed 's/,/, /g')"
seeds="$(for n in $(names); do c="$(first_csv "$n")"; [[ -n "$c" ]] && meta "$c" seed; done | sort -un | paste -sd, - | sed 's/,/, /g')"
skipped="$(while IFS=$'\t' read -r n _t _needs; do ran "$n" || printf '%s\n' "$n"; done < <(entries) | paste -sd, - | sed 's/,/, /g')"
models="$(grep -h '^#' data/*.csv 2>/dev/null | grep -oE '(models/)?[A-Za-z0-9_.-]+[.](gguf|bin)' | grep -v '^tc_hw' | sed 's|^models/||' | sort -u | paste -sd, - | sed 's/,/, /g')"
printf -- '- Backend of every data file: %s; on `cpu`, GPU kernels are CPU models (tensor-core models, a roofline cost model for kernel choice), not measurements.\n' "${backends:-unknown}"
printf -- '- One seed per data file (seed %s, profile %s); other seeds only where an experiment reruns them and says so.\n' "${seeds:-unknown}" "${profile:-default}"
[[ -n "$skipped" ]] && printf -- '- Not run here: %s (no data files).\n' "$skipped"
[[ -n "$models" ]] && printf -- '- Models read: %s; all other inputs are synthetic (random with chosen laws).\n' "$models"
for n in $(names); do ran "$n" && decl "$n" limit | fill | sed 's/^/- /'; done
printf -- '- Wall-clock costs (`*_timing.csv`) are CPU times, not GPU ones.\n\n'
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

cat <<'EOF'
## References

- N. J. Higham and T. Mary, "A New Approach to Probabilistic Rounding Error Analysis",
  SIAM J. Sci. Comput. 41(5), 2019. <https://doi.org/10.1137/18M1226312>
- M. Fasi, N. J. Higham, M. Mikaitis and S. Pranesh, "Numerical behavior of NVIDIA tensor
  cores", PeerJ Computer Science 7:e330, 2021. <https://doi.org/10.7717/peerj-cs.330>
- F. A. Khattak and M. Mikaitis, "Accurate models of NVIDIA tensor cores", 2025; models and
  GPU validation data: <https://github.com/north-numerical-computing/MATLAB-tensor-core>
- H. He and Thinking Machines Lab, "Defeating Nondeterminism in LLM Inference", Thinking
  Machines Lab: Connectionism, 2025. <https://thinkingmachines.ai/blog/defeating-nondeterminism-in-llm-inference/>
- J. Yuan et al., "Give Me FP32 or Give Me Death? Challenges and Solutions for Reproducible
  Reasoning", 2025. <https://arxiv.org/abs/2506.09501>
- A. Golden, S. Hsia, F. Sun, B. Acun, B. Hosmer, Y. Lee, Z. DeVito, J. Johnson, G.-Y. Wei,
  D. Brooks and C.-J. Wu, "Is Flash Attention Stable?", 2024. <https://arxiv.org/abs/2405.02803>
- ggml-org, llama.cpp (tests/test-backend-ops.cpp: per-op NMSE thresholds).
  <https://github.com/ggml-org/llama.cpp>
- S. Boldo and G. Melquiond, "Emulation of FMA and correctly rounded sums: proved algorithms
  using rounding to odd", IEEE Trans. Computers 57(4), 2008. <https://doi.org/10.1109/TC.2007.70819>
EOF
