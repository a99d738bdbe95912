#!/usr/bin/env bash
# registry_docs.sh [BIN_DIR] — writes each registered experiment's question, as its program
# states it (`<exp> --describe`: name, question, summary, tab-separated), into README.md's
# experiment table (the row "| `name` | question |") and into docs/experiments.md (the line
# "**Question.** question" under "## name — title", the title from experiments/registry.tsv).
# The program is the one source of the text; tests/test_registry.c fails when README or the
# docs disagree with it. Run after changing a question: tools/registry_docs.sh build/bin
set -eu
bin=${1:-build/bin}
cd "$(dirname "$0")/.."
while IFS=$'\t' read -r name title _needs; do
    case $name in '#'* | '') continue ;; esac
    q=$("$bin/$name" --describe | cut -f2)
    # Only the first such row: later tables (run times per profile) also start with the name.
    awk -v n="$name" -v q="$q" '!done && index($0, "| `" n "` | ") == 1 { print "| `" n "` | " q " |"; done = 1; next } { print }' \
        README.md > README.md.tmp && mv README.md.tmp README.md
    # In this experiment's section, the first paragraph is the one line "**Question.** q"
    # (replaced when present, inserted before the section's text otherwise).
    awk -v head="## $name — $title" -v q="$q" '
        $0 == head { insec = 1; state = 0; print; next }
        /^## / { insec = 0 }
        insec && state == 0 && /^$/ { state = 1; print; next }
        insec && state == 1 {
            state = 2
            print "**Question.** " q
            if ($0 ~ /^\*\*Question\.\*\*/) { skip = 1; next }
            print ""
        }
        skip && /^$/ { skip = 0 }
        skip { next }
        { print }' docs/experiments.md > docs/experiments.md.tmp && mv docs/experiments.md.tmp docs/experiments.md
done < experiments/registry.tsv
