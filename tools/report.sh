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


# A value from a tidy CSV: col_of FILE COLUMN FILTER... where each FILTER is name=value; prints
# the first matching row's column (empty when none). Used by the summary, never by hand.
csv_get() {
    local file="$1" want="$2"; shift 2
    [[ -f "$file" ]] || return 0
    awk -F, -v want="$want" -v filters="$*" '
        /^#/ { next }
        !hdr { for (i = 1; i <= NF; i++) col[$i] = i; hdr = 1; nf = split(filters, f, " "); next }
        { ok = 1
          for (j = 1; j <= nf; j++) { split(f[j], kv, "="); if ($(col[kv[1]]) != kv[2]) ok = 0 }
          if (ok) { print $(col[want]); exit } }' "$file"
}
# The largest value of a numeric column over the rows matching the filters.
csv_max() {
    local file="$1" want="$2"; shift 2
    [[ -f "$file" ]] || return 0
    awk -F, -v want="$want" -v filters="$*" '
        /^#/ { next }
        !hdr { for (i = 1; i <= NF; i++) col[$i] = i; hdr = 1; nf = split(filters, f, " "); next }
        { ok = 1
          for (j = 1; j <= nf; j++) { split(f[j], kv, "="); if ($(col[kv[1]]) != kv[2]) ok = 0 }
          if (ok && (m == "" || $(col[want]) + 0 > m + 0)) m = $(col[want]) }
        END { if (m != "") print m }' "$file"
}
g3() { [[ -n "$1" ]] && awk -v x="$1" 'BEGIN { printf "%.3g", x }' || printf 'n/a'; }

# What to see in each figure, under it (keyed by the PNG's name).
caption() {
    case "$1" in
    formats_spacing) echo "Each step is one binade: the spacing doubles from one power of two to the next. The flat left ends are the subnormals (constant spacing); a curve stops at the format's largest finite value. tf32 (wide, light) lies under fp16 wherever both have p = 11 and only their ranges differ; fp8e4m3 (wide) lies under fp8e5m2's neighbourhood at the top." ;;
    formats_relerr) echo "Every random real is stored once in each format: the relative error never exceeds the dashed unit roundoff u = 2^-p in the normal range. Below the normal range the error grows (subnormals lose bits) until the value is stored as 0 (crosses at relative error 1, one row per format); beyond the largest finite value it overflows (plus signs at the top). tf32 (open circles) and fp16 (dots) coincide in fp16's normal range. The y axis is broken: fp32 and fp64 are in the lower panel." ;;
    sum_order_bounds) echo "Measured error (points) against the deterministic (dashed) and probabilistic (dotted) bounds of each order: the measurements sit well under both and grow like sqrt(n) for recursive orders. With a bf16 or fp16 accumulator (dash-dot) seq, blocked, splitk and warp stagnate at relative error 1 once the running sum outgrows the terms; Kahan and Neumaier hold until the accumulator itself overflows. Triangles on the floor: results that were exact; crosses on the ceiling: inf/NaN." ;;
    sum_order_dists) echo "The same comparison for four input distributions (one y scale per column). Ill-conditioned sums (cancellation) magnify every order's error by the condition number; compensated orders (kahan, neumaier) stay near u times the condition number." ;;
    sum_order_perms) echo "One vector summed in many random orders gives many different results: the spread is the order-dependence a non-deterministic reduction exposes. Green: the correctly rounded sum." ;;
    matmul_drift_error) echo "The median relative error of C = A B grows like sqrt(K) u of the accumulator (dashed guide) for every kernel; split-K and tree orders sit lower. tiled:128x128x32 gives the same bits as naive, splitk:16:tree as splitk:16 (drawn wide-under-thin). Narrow accumulators (bottom right) are orders of magnitude worse; the tensor-core models with fp32 output follow their own internal accumulation." ;;
    matmul_drift_llm) echo "As above with LLM-like activations (a few large outliers): errors grow with K in the same way, scaled by the outliers' weight in the sums." ;;
    matmul_drift_splitk) echo "One product, every split factor S: the error falls as S grows (shorter sequential chains) and most outputs change their last bits as soon as S differs from 1. tf32 inputs give the same curve as fp16 (drawn wide and light underneath)." ;;
    batch_invariance_heatmap) echo "Grey: row 0 has the same bits as at batch size 1. Coloured: the vendor-like policy picked another kernel (tile or split-K) for this batch size and row 0 changed, by up to the colour's amount. The batch-invariant policy never changes row 0 (its maximum is in the title)." ;;
    batch_invariance_diff) echo "The same data as lines: each segment is a run of batch sizes served by one kernel; the change grows with K. The red dashed line at 0 is the batch-invariant policy." ;;
    determinism) echo "Left: how many different results each GPU kernel gave for the same product over its runs (1: the same bits every time), back to back and interleaved with the other kernels. Right: per run, how many elements of C differ from the first run. Atomic split-K varies by design; cuBLAS and the deterministic split-K do not. A run without a GPU shows why it was skipped." ;;
    argmax_flip_formats) echo "The probability that the computed argmax differs from the exact one falls from 1/2 (a coin flip for tied logits) to 0 as the exact gap grows; the fitted Phi curve gives sigma, the numerical noise. With fp32 accumulation (solid) the four input formats nearly coincide; storing logits in bf16 or fp16 (dashed) moves the curve three orders of magnitude to the right." ;;
    argmax_flip_kernels) echo "Each kernel (order/accumulator/logits) has its own noise sigma: the curve's position. Left: with fp32 logits the reduction order decides; right: with logits stored in the format, the format's spacing decides." ;;
    argmax_flip_gaps) echo "How often realistic heads have a top-2 gap below x: where a critical gap (vertical line, in the key) crosses the curve is the fraction of rows at risk of flipping with that kernel." ;;
    sampling_flip) echo "With the same seed, sampling changes the token when the numerics change only where the sampled uniform falls near a boundary between two tokens' cumulative probabilities; logits stored in bf16 change it far more often than fp32-logit kernels. Markers on the floor: no change seen in any step (one row per kernel); T = 0 (argmax) sits left of the axis break." ;;
    tc_conformance) echo "Every cell is one (GPU, input -> output) configuration of the measured data: mismatches / samples between the GPU's output and the lab's model of it, bit for bit. Green: all reproduced (all 48, fp8 inputs with fp16 output on Hopper and Blackwell included: the compiler runs them on the fp16 tensor core, docs/tensor_cores.md). Grey would mark a configuration the lab has no model for, red a mismatch." ;;
    gpu_generations_ulps) echo "How far apart two generations' fp32 logits are, in fp32 steps, over every logit of the head at three seeds. Adjacent generations (solid) differ by a few to a few tens of ulps, as much as each differs from the exact logit (dashed); H100 and B200 agree bit for bit (the lone dot at 0)." ;;
    gpu_generations_closecalls) echo "Planted close calls: when the exact top-2 gap is 1e-7 to 1e-6 of the logit scale, generations often pick different tokens; at 1e-5 almost never. Realistic heads have gaps far larger (their rate is in the table: none seen). Open markers on the floor: no disagreement in any planted pair." ;;
    layer_drift) echo "The hidden state's relative error against the exact forward pass after every sub-block (attention norm, attention, MLP norm, MLP; the last point is the final norm): each configuration starts near its format's unit roundoff and grows slowly with depth. LayerCast (purple) lies on bf16 (red) because its bf16 weights are another model than the fp32 reference." ;;
    real_gaps) echo "Left: the exact top-1/top-2 gaps of SmolLM2-135M-Instruct on its own greedy text (cumulative; the generated positions of a few prompts, so a coarse staircase); a configuration can flip only the positions left of its noise sigma (dashed). Right: the flips predicted from those gaps by Phi(-gap/sigma), and with the output grid's ties added, beside the flips observed when the configuration scores the same text. At this sample size a count of a few flips is one or two events: read the bars as orders of magnitude." ;;
    speculative) echo "Left: how often the text accepted by greedy speculative decoding differs from plain greedy decoding of the same configuration, per draft length k (the lines lie on one another). Right: whether a pass of M rows gets other GEMM kernels than M = 1: under the lab's vendor-like policy only from M = 65 on (a second 64-row tile), under batch-invariant never." ;;
    *) echo "" ;;
    esac
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

## Summary of findings

Each line is computed from the data files of this report (\`data/\`), at seed ${seed:-1}.

EOF
f=data/formats_constants.csv
if [[ -f "$f" ]]; then
    printf -- '- **Formats.** Unit roundoff u = 2^-p: fp32 %s, tf32 %s, fp16 %s, bf16 %s, fp8e4m3 %s; every value stored in a format is within u of the real number in the normal range, and underflows or overflows outside it (formats).\n' \
        "$(g3 "$(csv_get "$f" unit_roundoff format=fp32)")" "$(g3 "$(csv_get "$f" unit_roundoff format=tf32)")" \
        "$(g3 "$(csv_get "$f" unit_roundoff format=fp16)")" "$(g3 "$(csv_get "$f" unit_roundoff format=bf16)")" \
        "$(g3 "$(csv_get "$f" unit_roundoff format=fp8e4m3)")"
fi
f=data/sum_order_summary.csv
if [[ -f "$f" ]]; then
    nmax="$(csv_max "$f" n dist=uniform setting=bf16/bf16 order=seq)"
    printf -- '- **Summation order.** Summing %s uniform bf16 numbers left to right in a bf16 accumulator gives relative error %s (stagnation); in an fp32 accumulator %s; pairwise in bf16 %s (sum_order).\n' \
        "$nmax" "$(g3 "$(csv_get "$f" mean_rel_err dist=uniform setting=bf16/bf16 order=seq n="$nmax")")" \
        "$(g3 "$(csv_get "$f" mean_rel_err dist=uniform setting=bf16/fp32 order=seq n="$nmax")")" \
        "$(g3 "$(csv_get "$f" mean_rel_err dist=uniform setting=bf16/bf16 order=pairwise n="$nmax")")"
fi
f=data/matmul_drift.csv
if [[ -f "$f" ]]; then
    kmax="$(csv_max "$f" K dist=normal format=bf16 acc=fp32 kernel_key=naive)"
    printf -- '- **Matrix products.** At K = %s with bf16 inputs and fp32 accumulation the median relative error is %s for the sequential kernel and %s for splitk:16; with a bf16 accumulator %s (matmul_drift).\n' \
        "$kmax" "$(g3 "$(csv_get "$f" rel_err_median dist=normal format=bf16 acc=fp32 kernel_key=naive K="$kmax")")" \
        "$(g3 "$(csv_get "$f" rel_err_median dist=normal format=bf16 acc=fp32 kernel_key=splitk:16 K="$kmax")")" \
        "$(g3 "$(csv_get "$f" rel_err_median dist=normal format=bf16 acc=bf16 kernel_key=naive K="$kmax")")"
fi
f=data/batch_invariance_summary.csv
if [[ -f "$f" ]]; then
    printf -- '- **Batch invariance.** With a vendor-like kernel choice, row 0 of a bf16 product changes with the batch size by up to %s (fp32 inputs: %s); with the batch-invariant policy by %s (batch_invariance).\n' \
        "$(g3 "$(csv_max "$f" max_abs_diff format=bf16 policy=vendor-like)")" \
        "$(g3 "$(csv_max "$f" max_abs_diff format=fp32 policy=vendor-like)")" \
        "$(g3 "$(csv_max "$f" max_abs_diff policy=batch-invariant)")"
fi
f=data/argmax_flip_laws.csv
if [[ -f "$f" ]]; then
    # Critical gaps from the law of each mechanism: Gaussian accumulation noise for fp32
    # logits, rounding plus noise (the convolution) for logits stored in bf16.
    kmax="$(csv_max "$f" K format=bf16 kernel=seq/fp32/fp32)"
    printf -- '- **Argmax flips.** At K = %s, bf16 inputs, against the exact logits of the rounded inputs: with fp32 logits (accumulation noise, Gaussian law) argmax flips with probability >= 0.1%% only when the top-2 gap is below %s of the logit scale; with logits stored in bf16 (rounding plus noise, the convolution law) below %s, i.e. %s bf16 ulps: beyond one output ulp rounding cannot flip it (argmax_flip).\n' \
        "$kmax" "$(g3 "$(csv_get "$f" gap_p001_rel K="$kmax" format=bf16 kernel=seq/fp32/fp32)")" \
        "$(g3 "$(csv_get "$f" gap_p001_rel K="$kmax" format=bf16 kernel=seq/fp32/bf16)")" \
        "$(g3 "$(csv_get "$f" gap_p001_ulp_out K="$kmax" format=bf16 kernel=seq/fp32/bf16)")"
fi
f=data/sampling_flip_samplers.csv
if [[ -f "$f" ]]; then
    printf -- '- **Sampling.** With the same random stream and T = 1, logits stored in bf16 change the sampled token (against the exact logits) in a fraction %s of steps with the exponential race that PyTorch and vLLM use and %s with an inverse CDF walked in token order; with fp32 logits (sequential kernel) %s and %s: how often sampling changes depends on the sampler (sampling_flip).\n' \
        "$(g3 "$(csv_get "$f" rate kernel=tc:h100/fp32/bf16 sampler=exp-race temperature=1)")" \
        "$(g3 "$(csv_get "$f" rate kernel=tc:h100/fp32/bf16 sampler=inverse-cdf temperature=1)")" \
        "$(g3 "$(csv_get "$f" rate kernel=seq/fp32/fp32 sampler=exp-race temperature=1)")" \
        "$(g3 "$(csv_get "$f" rate kernel=seq/fp32/fp32 sampler=inverse-cdf temperature=1)")"
fi
cat <<EOF

## Contents

EOF
while IFS=$'\t' read -r name title _needs; do
    h="$(heading "$name" "${title:-}")"
    printf -- '- [%s](#%s)\n' "$h" "$(slug "$h")"
done < <(entries)
printf -- '- [Methods](#methods)\n- [Limitations](#limitations)\n- [Environment](#environment)\n- [References](#references)\n\n'

# ---- one section per experiment -------------------------------------------------------------
while IFS=$'\t' read -r name title needs; do
    printf '## %s\n\n' "$(heading "$name" "${title:-}")"
    csv="$(first_csv "$name")"
    if [[ -n "$csv" ]]; then
        printf '*Data: `data/%s*.csv` (seed %s, profile %s, backend %s, commit %s).*\n\n' "$name" \
            "$(meta "$csv" seed)" "$(meta "$csv" profile)" "$(meta "$csv" backend)" "$(meta "$csv" git)"
    fi
    if [[ -f "data/$name.md" ]]; then
        # Wall-clock numbers are not reproducible: they live in data/*_timing.csv, not here, so
        # that this page is byte-identical between runs apart from its date and commit lines.
        sed -E 's/\| [0-9.eE+-]+ \(measured ([^)]*)\)\) \|/| measured \1): see data\/'"$name"'_timing.csv |/' "data/$name.md"
        printf '\n'
    elif [[ "${needs:-}" == gpu ]]; then # skipped on a machine without a GPU (exit 77, no files)
        printf '> **Skipped:** %s measures a GPU and this report was made without one. Run `./lab run %s --backend cuda` on a machine with a CUDA device.\n\n' "$name" "$name"
        continue
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
        cap="$(caption "$(basename "$png" .png)")"
        [[ -n "$cap" ]] && printf '\n*What to see:* %s\n' "$cap"
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


# ---- methods, limitations ---------------------------------------------------------------------
cat <<'EOF'
## Methods

- **Exact witnesses.** Every error is measured against an exact reference: sums and dot
  products with a superaccumulator (integer fixed point over the whole double range, proved
  equal to MPFR's `mpfr_sum` by the tests), values and constants with MPFR at 256 bits. Two
  witnesses are kept: the exact result on the inputs as the kernel saw them (rounded to the
  input format), and on the inputs before rounding; errors are split into input rounding,
  accumulation and output rounding.
- **Formats and rounding.** Every format (fp64, fp32, tf32, fp16, bf16, fp8e4m3, fp8e5m2) is
  emulated on the CPU with correct rounding in every mode; arithmetic in a narrow format is
  computed exactly and rounded once (round-to-odd where a double intermediate is used).
- **Orders.** A reduction order is data (`seq`, `pairwise`, `blocked:B`, `splitk:S`, `warp:W`,
  `kahan`, `neumaier`, `random:SEED`, `tc:ARCH`) printed in every CSV row; tensor-core orders
  are block-FMA models validated against outputs measured on the GPUs.
- **Synthetic heads.** The LM-head experiments use synthetic hidden states and weight rows
  (normal, with a planted top-2 pair at a chosen gap, or "realistic" heads whose logit gaps
  follow a heavy-tailed law); gaps are reported relative to the logit scale s = ||h|| / sqrt(K).
- **Statistics.** Flip probabilities carry Wilson 95% intervals; the noise sigma is a
  maximum-likelihood fit of P(flip) = Phi(-gap / sigma) with a goodness-of-fit p-value; every
  random draw comes from a Philox4x32-10 stream keyed by (seed, experiment, point, trial), so
  the data are byte-identical for any thread count.

## Limitations

- CPU emulation only in this report: GPU kernels are modelled (tensor-core block-FMA models,
  a roofline cost model for kernel choice), not run; real vendor libraries choose kernels by
  heuristics that the "vendor-like" policy only imitates.
- Synthetic data for the kernels: the hidden states, weights and activations of the matmul,
  softmax, attention and argmax experiments are random with chosen laws, not taken from a
  trained model; real heads may have other gap distributions. The transformer experiments run on
  stories260K, a 260K-parameter toy, except real_gaps, which runs SmolLM2-135M-Instruct (a real
  model, Q4_1 GGUF, its fp32 view of the dequantized weights) on a few prompts only: what the toy
  shows about greedy text need not hold at scale, and real_gaps' counts are a handful of events.
- Sizes are those of the default profile (K up to a few thousand, n up to 2^20); larger
  problems behave as the sqrt(K) and sqrt(n) trends predict but were not run here.
- Costs in tables are modelled or measured on a CPU; wall-clock measurements are in the
  `*_timing.csv` files only and do not transfer to a GPU.

EOF
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
