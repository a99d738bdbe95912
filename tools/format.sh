#!/usr/bin/env bash
# format.sh [--check] — the house style (.clang-format) on every tracked C and CUDA source,
# generated files aside (lib/llm/unicode_tables.c is written by tools/gen_unicode_tables.py).
#   tools/format.sh           rewrite the files in place
#   tools/format.sh --check   list the files that differ from the style; exit 1 if any
# Not part of ./lab test: clang-format's output changes between its versions (this tree was
# formatted with clang-format 14, Debian's).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "format.sh: clang-format not found (apt-get install clang-format)" >&2; exit 2; }
files=$(git ls-files '*.c' '*.h' '*.cu' '*.cuh' | grep -v '^lib/llm/unicode_tables\.c$')
if [[ "${1:-}" == --check ]]; then
    bad=0
    for f in $files; do
        clang-format --style=file "$f" | cmp -s - "$f" || { echo "$f"; bad=1; }
    done
    exit $bad
fi
[[ $# -eq 0 ]] || { echo "format.sh: unknown argument '$1' (accepted: --check)" >&2; exit 2; }
printf '%s\n' $files | xargs clang-format -i --style=file
