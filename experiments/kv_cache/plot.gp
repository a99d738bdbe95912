# experiments/kv_cache/plot.gp — plots of the kv_cache experiment (main.c beside it).
#
#   gnuplot -e "datadir='data'; outdir='plots'" experiments/kv_cache/plot.gp   (./lab plot kv_cache)
#
# Writes outdir/kv_cache_error.{png,svg}: the attention output's relative error against the
# exact attention (left) and the largest error of the next-token logits (right) per KV storage
# format (x), one point per cache length L, first compute format; argmax flips written above.
# Writes outdir/kv_cache_real.{png,svg} (when three or more formats were decoded): per KV storage
# format, the share of SmolLM2-135M prompts whose greedy text parts from the preset's own bf16
# cache, with its Wilson 95 % interval over prompts; the count k/n written beside each point.

load 'plots/common.gp'

main = datadir.'/kv_cache.csv'
col_values(file, name) = system(sprintf("grep -v '^#' '%s' | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == \"%s\") c = i; next } !seen[$c]++ { print $c }' | paste -sd' ' -", file, name))
fmts = col_values(main, 'format')
kvs = col_values(main, 'kv_format')
Ls = col_values(main, 'L')
nkv = words(kvs)
nl = words(Ls)
f0 = word(fmts, 1)
kidx(s) = sum [i = 1:nkv] (word(kvs, i) eq s ? i : 0)
lcolors = "#1f77b4 #ff7f0e #2ca02c #9467bd #8c564b"
lcol(i) = word(lcolors, (i - 1) % 5 + 1)
off(l) = (l - (nl + 1) / 2.0) * 0.12
sel(L) = (strcol('format') eq f0 && column('L') == L)

set xrange [0.4 : nkv + 0.6]
set xtics () font ',10'
do for [i = 1:nkv] { set xtics add (word(kvs, i) i) }
set logscale y
set format y '10^{%L}'
set xlabel 'KV cache storage'
#@ kv_cache_error alt: Attention and logit error per KV cache storage format, two lengths
#@ kv_cache_error look: the ranking of storage formats
#@ kv_cache_error caption: Labels count argmax flips.
do for [t = 1:2] {
    eval out(t, 'kv_cache_error', 1200, 1150)
    # the two panels stacked, so each has the width for the seven storage names; the key
    # (L names the cache length, as the title says) above them, clear of the data
    set multiplot layout 2, 1 margins 0.11, 0.97, 0.08, 0.83 spacing 0.13 \
        title sprintf("KV cache storage format vs the exact attention (MPFR), %s arithmetic after loading,\nflash:64,64, fp32 accumulation; one point per cache length L", f0) font ',12'
    set title 'attention output: relative error' font ',11'
    set ylabel 'relative error (log scale)'
    set key at screen 0.54, 0.895 center center horizontal Left reverse box width 1
    set offsets 0, 0, graph 0.05, 0
    plot for [l = 1:nl] main using (kidx(strcol('kv_format')) + off(l)):(sel(int(word(Ls, l))) ? column('relerr_true') : NaN) \
         with points lc rgb lcol(l) pt 7 ps 1.4 title 'L = '.word(Ls, l)
    set title 'next-token logits (fixed random projection): largest |error|; label = argmax flips' font ',11'
    set ylabel 'max |logit error| (log scale)'
    unset key
    plot for [l = 1:nl] main using (kidx(strcol('kv_format')) + off(l)):(sel(int(word(Ls, l))) ? column('max_logit_err') : NaN) \
             with points lc rgb lcol(l) pt 7 ps 1.4 notitle, \
         for [l = 1:nl] main using (kidx(strcol('kv_format')) + off(l)):(sel(int(word(Ls, l))) ? column('max_logit_err') : NaN):(sprintf('%d', column('argmax_flips'))) \
             with labels offset 0, 1.1 font ',9' tc rgb lcol(l) notitle
    set offsets 0, 0, 0, 0
    unset multiplot
}
set output

real = datadir.'/kv_cache_real_summary.csv'
NR = int(system(sprintf("grep -v '^#' '%s' 2>/dev/null | tail -n +2 | wc -l", real)))
#@ kv_cache_real alt: Share of real-model prompts whose greedy text parts per KV cache storage format, with Wilson intervals
#@ kv_cache_real look: which formats' intervals leave zero
#@ kv_cache_real caption: Against the preset's bf16 cache; Wilson 95 % bars; labels: parted/all.
#@ kv_cache_real few: Fewer than three KV formats were decoded on the real model (or none, without the model file): the table gives their rates.
if (NR >= 3) {
    do for [t = 1:2] {
        eval out(t, 'kv_cache_real', 900, 520)
        unset logscale y
        set format y '%.0f%%'
        set yrange [0:110]
        set xrange [-0.6 : NR - 0.4]
        set xtics () font ',10'
        set xlabel 'KV cache storage'
        set ylabel 'prompts whose greedy text parts'
        set title 'SmolLM2-135M (hf-eager, A100) with its KV cache in each format: greedy text against the bf16 cache' font ',11'
        unset key
        plot real using 0:(100*column('rate')):(100*column('wilson_lo')):(100*column('wilson_hi')):xtic(strcol('kv_format')) \
               with yerrorbars pt 7 ps 1.4 lw 2 lc rgb '#d62728', \
             real using ($0 + 0.08):(100*column('rate')):(sprintf('%d/%d', column('parted'), column('prompts'))) \
               with labels left offset 1, 0 font ',10'
    }
    set output
}
