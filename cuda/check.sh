#!/usr/bin/env bash
# check.sh — the GPU conformance check in one call: builds what is missing, runs
# every cuda/check_*.cu program under one time budget, writes one report, prints a PASS/FAIL
# table last.
#
#   cuda/check.sh            report to $OUT/gpu_check.txt when OUT is set, else
#                            data/gpu/check-<UTC date>.txt; the whole report also on stdout
#
# What runs (each program's header says more):
#   check_versions     (e) device, driver, runtime, cuBLAS/cuBLASLt, nvcc
#   check_convert      (a) conversions on the device vs drift_round: fp16 bf16 tf32 fp8 (with and
#                          without saturation), every mode the hardware has; kernel 3 on a
#                          stratified 1/256 sample of all fp32 words (16.8 M)
#   check_reduce       (b) sum/dot in every deterministic order vs drift_sum/drift_dot, bit for bit
#   check_gemm         (b) GEMM twins bit for bit; (c) tensor cores vs tc:h100 (FINDING);
#                          cuBLAS/cuBLASLt error vs exact (FINDING)
#   check_softmax      (b) softmax twins (naive, safe, online:B) vs drift_softmax, bit for bit
#   check_attention    (b) attention twins (standard, flash:Br,Bc, splitkv:N, splitkv:size=S) vs
#                          drift_attention, bit for bit (fp32 bf16 fp16; decode, prefill, masked)
#   check_determinism  (d) distinct outputs over 100 runs (atomic split-K, cuBLAS); row-0 batch
#                          variance for M = 1..2048 and the cuBLASLt algorithm by M
#   determinism        then, if the budget allows: the experiment (--backend cuda, default
#                      profile) into $OUT/determinism/ (CSVs, .md, and its plot when gnuplot is
#                      there), else data/gpu/determinism-<UTC date>/
#   bench_gpu_gemm     then, if the budget allows: invariant and tensor-core GEMM vs cuBLAS
#                      (5 repetitions; also copied to $OUT/bench_gpu_gemm.txt)
# Rows: PASS / FAIL (bit-identity, invariance by construction), FINDING (measured, not judged),
# INFO, SKIP. Without a device every program prints "no CUDA device: skipped" and passes.
#
# Environment: DRIFT_BUILD_DIR (default build), DRIFT_CHECK_BUDGET (default 470 s for the
# whole call, build included: under 8 minutes, and one device call has 600 s;
# each program's own limit is in LIMIT below), DRIFT_CHECK_REBUILD=1 (build even if the programs exist),
# OUT (report directory). Programs carried from another machine that cannot use the GPU here
# (driver older than their CUDA runtime, missing libraries) are rebuilt once with this
# machine's nvcc into BUILD-device.
# Exit status: 0 every program passed (or skipped), 1 a FAIL, timeout or crash, 2 nothing to
# run (no nvcc) or the report cannot be written.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${DRIFT_BUILD_DIR:-build}"
[[ "$BUILD" = /* ]] || BUILD="$ROOT/$BUILD"
BUDGET="${DRIFT_CHECK_BUDGET:-470}"
START=$(date +%s)
PROGRAMS=(check_versions check_convert check_reduce check_gemm check_softmax check_attention check_determinism determinism bench_gpu_gemm)
CHECKS=(check_versions check_convert check_reduce check_gemm check_softmax check_attention check_determinism)
# per-program limits (seconds); the budget above caps their sum with the build included
declare -A LIMIT=([check_versions]=30 [check_convert]=120 [check_reduce]=90 [check_gemm]=150 [check_softmax]=60 [check_attention]=45
                 [check_determinism]=120 [determinism]=120 [bench_gpu_gemm]=60)

if [[ -n "${OUT:-}" ]]; then
  REPORT="$OUT/gpu_check.txt"
else
  REPORT="$ROOT/data/gpu/check-$(date -u +%Y%m%dT%H%M%SZ).txt"
fi
mkdir -p "$(dirname "$REPORT")" || { echo "check.sh: cannot create $(dirname "$REPORT")" >&2; exit 2; }
tmp="$(mktemp "${TMPDIR:-/tmp}/drift-check.XXXXXX")" || exit 2
trap 'rm -f "$tmp" "$tmp".*' EXIT
log() { echo "$@" | tee -a "$tmp"; }

log "driftlab GPU conformance report"
log "date (UTC): $(date -u +%Y-%m-%dT%H:%M:%SZ)"
log "git: $(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)"
log "host: $(uname -srm)"
# A GPU that nvidia-smi sees but the programs cannot use (a driver older than the CUDA runtime
# they were built with, a missing libcublas) must not pass as "no CUDA device: skipped".
GPU_VISIBLE=0
if command -v nvidia-smi >/dev/null 2>&1; then
  log "nvidia-smi: $(nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv,noheader 2>&1 | head -4 | tr '\n' ';')"
  nvidia-smi -L 2>/dev/null | grep -q '^GPU ' && GPU_VISIBLE=1
else
  log "nvidia-smi: not found"
fi
NVCC="$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)"
log "nvcc: $("$NVCC" --version 2>/dev/null | tail -1 || echo not found)"
log "build: $BUILD"

# ---- build what is missing (one configure, the check targets only) -------------------------
build_checks() { # $1: build directory
  log "building the check programs in $1 ($(nproc) jobs, nvcc $NVCC)..."
  local bstart; bstart=$(date +%s)
  if ! { cmake -S "$ROOT" -B "$1" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_COMPILER="$NVCC" >"$tmp.build" 2>&1 &&
         cmake --build "$1" -j"$(nproc)" --target "${PROGRAMS[@]}" >>"$tmp.build" 2>&1; }; then
    tail -30 "$tmp.build" | tee -a "$tmp"
    log "check.sh: build failed (is nvcc installed? see above)"
    return 1
  fi
  log "built in $(( $(date +%s) - bstart ))s"
}
missing=0
for p in "${PROGRAMS[@]}"; do [[ -x "$BUILD/bin/$p" ]] || missing=1; done
[[ "${DRIFT_CHECK_REBUILD:-0}" = 1 ]] && missing=1
if [[ $missing -eq 1 ]]; then
  build_checks "$BUILD" || { cp "$tmp" "$REPORT" 2>/dev/null; exit 2; }
fi
# Programs built elsewhere (carried in) may not start here: a driver older than their CUDA
# runtime, or a missing libcublas. Probe once; if a GPU is visible and the probe cannot use
# it, rebuild with this machine's nvcc into BUILD-device and use that.
probe="$("$BUILD/bin/check_versions" 2>&1)"; prc=$?
log "probe: check_versions exit $prc: $(echo "$probe" | head -1)"
if [[ $GPU_VISIBLE -eq 1 && ( $prc -ne 0 || "$probe" == *"no CUDA device: skipped"* ) ]]; then
  log "the GPU is visible but the programs cannot use it: rebuilding with this machine's toolkit"
  if command -v "$NVCC" >/dev/null 2>&1 && build_checks "$BUILD-device"; then
    BUILD="$BUILD-device"
  else
    log "rebuild impossible here; running what there is (expect FAIL rows)"
  fi
fi
# Without a usable device the checks skip themselves; the experiment would refuse --backend cuda
# (exit 2), so it is skipped here instead of counted as a failure.
DEVICE_OK=1
probe="$("$BUILD/bin/check_versions" 2>&1)"
[[ "$probe" == *"no CUDA device: skipped"* ]] && DEVICE_OK=0
# ---- run ---------------------------------------------------------------------------------------
status=0
table=()
fails=()
for p in "${CHECKS[@]}"; do
  prog="$BUILD/bin/$p"
  left=$(( BUDGET - ($(date +%s) - START) ))
  lim=${LIMIT[$p]}
  (( lim > left )) && lim=$left
  if (( lim < 5 )); then
    table+=("$(printf '%-18s %-9s %5s %5s %8s %6s' "$p" "NOT RUN" - - - "budget")")
    status=1
    continue
  fi
  if [[ ! -x "$prog" ]]; then
    table+=("$(printf '%-18s %-9s %5s %5s %8s %6s' "$p" "MISSING" - - - -)")
    status=1
    continue
  fi
  s=$(date +%s)
  log "==== $p (limit ${lim}s)"
  timeout --kill-after=5 "$lim" "$prog" >"$tmp.out" 2>&1
  rc=$?
  secs=$(( $(date +%s) - s ))
  tee -a "$tmp" <"$tmp.out" >/dev/null
  npass=$(grep -c '^PASS ' "$tmp.out")
  nfail=$(grep -c '^FAIL ' "$tmp.out")
  nfind=$(grep -c '^FINDING ' "$tmp.out")
  if grep -q "no CUDA device: skipped" "$tmp.out" && [[ $GPU_VISIBLE -eq 1 ]]; then
    verdict=FAIL; status=1
    fails+=("$p: nvidia-smi lists a GPU but the program found none: $(head -1 "$tmp.out")")
  elif grep -q -e "no CUDA device: skipped" -e "not part of this build: skipped" "$tmp.out"; then
    verdict=SKIPPED
  elif [[ $rc -eq 124 || $rc -eq 137 ]]; then
    verdict=TIMEOUT; status=1
  elif [[ $rc -ne 0 || $nfail -gt 0 ]]; then
    verdict=FAIL; status=1
  else
    verdict=PASS
  fi
  while IFS= read -r line; do fails+=("$p: $line"); done < <(grep '^FAIL ' "$tmp.out" | head -10)
  [[ $rc -ne 0 && $nfail -eq 0 && $verdict != SKIPPED ]] && fails+=("$p: exit $rc: $(tail -1 "$tmp.out")")
  log "==== $p: $verdict (exit $rc) in ${secs}s"
  log ""
  table+=("$(printf '%-18s %-9s %5s %5s %8s %5ss' "$p" "$verdict" "$npass" "$nfail" "$nfind" "$secs")")
done

# ---- the determinism experiment, when time is left (data; a crash or a twin mismatch is a FAIL) -
left=$(( BUDGET - ($(date +%s) - START) ))
if [[ $DEVICE_OK -eq 0 && -x "$BUILD/bin/determinism" ]]; then
  table+=("$(printf '%-18s %-9s %5s %5s %8s %6s' determinism SKIPPED - - - "no device")")
elif [[ -x "$BUILD/bin/determinism" ]] && (( left > 20 )); then
  lim=${LIMIT[determinism]}; (( lim > left )) && lim=$left
  if [[ -n "${OUT:-}" ]]; then detdir="$OUT/determinism"; else detdir="$ROOT/data/gpu/determinism-$(date -u +%Y%m%dT%H%M%SZ)"; fi
  log "==== determinism --backend cuda --profile default --out $detdir (limit ${lim}s)"
  s=$(date +%s)
  timeout --kill-after=5 "$lim" "$BUILD/bin/determinism" --backend cuda --profile default --out "$detdir" >"$tmp.out" 2>&1
  rc=$?
  tee -a "$tmp" <"$tmp.out" >/dev/null
  verdict=RAN
  if [[ $rc -eq 0 ]] && command -v gnuplot >/dev/null 2>&1; then
    (cd "$ROOT" && gnuplot -e "datadir='$detdir'; outdir='$detdir'" experiments/determinism/plot.gp) >>"$tmp" 2>&1 || log "determinism: plot failed"
  fi
  [[ $rc -eq 124 || $rc -eq 137 ]] && { verdict=TIMEOUT; status=1; }
  [[ $rc -ne 0 && $verdict != TIMEOUT ]] && { verdict=FAIL; status=1; fails+=("determinism: exit $rc: $(tail -1 "$tmp.out")"); }
  table+=("$(printf '%-18s %-9s %5s %5s %8s %5ss' determinism "$verdict" - - - "$(( $(date +%s) - s ))")")
  log ""
fi

# ---- the benchmark, when time is left (data, not a verdict: a crash is a FAIL) ---------------
left=$(( BUDGET - ($(date +%s) - START) ))
if [[ -x "$BUILD/bin/bench_gpu_gemm" ]] && (( left > 20 )); then
  lim=${LIMIT[bench_gpu_gemm]}; (( lim > left )) && lim=$left
  log "==== bench_gpu_gemm 5 (limit ${lim}s)"
  s=$(date +%s)
  timeout --kill-after=5 "$lim" "$BUILD/bin/bench_gpu_gemm" 5 >"$tmp.out" 2>&1
  rc=$?
  tee -a "$tmp" <"$tmp.out" >/dev/null
  if [[ -n "${OUT:-}" ]]; then cp "$tmp.out" "$OUT/bench_gpu_gemm.txt"; fi
  verdict=RAN
  grep -q "skipped: no CUDA device" "$tmp.out" && verdict=SKIPPED
  [[ $rc -ne 0 ]] && { verdict=FAIL; status=1; fails+=("bench_gpu_gemm: exit $rc: $(tail -1 "$tmp.out")"); }
  table+=("$(printf '%-18s %-9s %5s %5s %8s %5ss' bench_gpu_gemm "$verdict" - - - "$(( $(date +%s) - s ))")")
  log ""
fi

{
  echo "first FAIL rows (at most 10 per program):"
  if [[ ${#fails[@]} -eq 0 ]]; then echo "  none"; else for f in "${fails[@]}"; do echo "  $f"; done; fi
  echo
  echo "PASS/FAIL table (total $(( $(date +%s) - START ))s)"
  printf '%-18s %-9s %5s %5s %8s %6s\n' program verdict pass fail findings time
  for t in "${table[@]}"; do echo "$t"; done
  echo "overall: $([[ $status -eq 0 ]] && echo PASS || echo FAIL)"
} | tee -a "$tmp"

if ! cp "$tmp" "$REPORT"; then
  echo "check.sh: cannot write $REPORT" >&2
  exit 2
fi
echo "check.sh: report written to $REPORT" >&2
exit $status
