#!/usr/bin/env bash
# check.sh — run every built GPU conformance check (cuda/check_*.cu -> BUILD/bin/check_*) and
# write one plain-text report.
#
#   cuda/check.sh [REPORT]        REPORT: a file path; default standard output
#
# Environment: DRIFT_BUILD_DIR (default build) names the build directory;
# DRIFT_CHECK_TIMEOUT (default 900) bounds each program in seconds.
# Exit status: 0 when every check exits 0 (a machine without a GPU passes: each check
# prints "no CUDA device: skipped"), 1 when any check fails, 2 when there is nothing to run.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${DRIFT_BUILD_DIR:-build}"
[[ "$BUILD" = /* ]] || BUILD="$ROOT/$BUILD"
TIMEOUT="${DRIFT_CHECK_TIMEOUT:-900}"
REPORT="${1:-}"

shopt -s nullglob
checks=("$BUILD"/bin/check_*)
if [[ ${#checks[@]} -eq 0 ]]; then
  echo "check.sh: no check_* programs in $BUILD/bin (was the build configured with nvcc present?)" >&2
  exit 2
fi

tmp="$(mktemp "${TMPDIR:-/tmp}/drift-check.XXXXXX")" || exit 2
trap 'rm -f "$tmp" "$tmp".*' EXIT

{
  echo "driftlab GPU conformance report"
  echo "date (UTC): $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "git: $(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)"
  echo "host: $(uname -srm)"
  if command -v nvidia-smi >/dev/null 2>&1; then
    echo "nvidia-smi: $(nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader 2>&1 | head -4 | tr '\n' ';')"
  else
    echo "nvidia-smi: not found"
  fi
  echo "build: $BUILD"
  echo
} >"$tmp"

status=0
summary=()
for prog in "${checks[@]}"; do
  [[ -x "$prog" && -f "$prog" ]] || continue
  name="$(basename "$prog")"
  start=$(date +%s)
  out="$tmp.$name"
  if command -v timeout >/dev/null 2>&1; then
    timeout "$TIMEOUT" "$prog" >"$out" 2>&1
  else
    "$prog" >"$out" 2>&1
  fi
  rc=$?
  secs=$(( $(date +%s) - start ))
  { echo "==== $name"; cat "$out"; } >>"$tmp"
  if [[ $rc -eq 0 ]]; then
    verdict=PASS
    grep -q "no CUDA device: skipped" "$out" && verdict=SKIPPED
  elif [[ $rc -eq 124 ]]; then
    verdict="TIMEOUT (${TIMEOUT}s)"; status=1
  else
    verdict="FAIL (exit $rc)"; status=1
  fi
  rm -f "$out"
  echo "==== $name: $verdict in ${secs}s" >>"$tmp"
  echo >>"$tmp"
  summary+=("$(printf '%-24s %s' "$name" "$verdict")")
done

{
  echo "summary"
  for line in "${summary[@]}"; do echo "  $line"; done
} >>"$tmp"

if [[ -n "$REPORT" ]]; then
  if ! { mkdir -p "$(dirname "$REPORT")" && cp "$tmp" "$REPORT"; }; then
    echo "check.sh: cannot write $REPORT" >&2
    exit 2
  fi
  echo "check.sh: report written to $REPORT" >&2
else
  cat "$tmp"
fi
exit $status
