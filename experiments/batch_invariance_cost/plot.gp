# experiments/batch_invariance_cost/plot.gp — the plot of the batch_invariance_cost experiment (main.c beside it).
#
#   gnuplot -e "datadir='data'; outdir='plots'" experiments/batch_invariance_cost/plot.gp   (./lab plot batch_invariance_cost)
#
# Writes outdir/batch_invariance_cost.{png,svg}: the modelled GPU time against the batch size M
# (log-log), vendor-like (solid) and batch-invariant (dashed), one colour per K, for bf16 inputs
# (else the first format of the run).

load 'plots/common.gp'

main = datadir.'/batch_invariance_cost.csv'
rows = sprintf("grep -v '^#' '%s' | awk -F, 'NR > 1'", main)
Ks = system(rows." | cut -d, -f3 | sort -nu | paste -sd' ' -")
nk = words(Ks)
fmt = system(rows." | awk -F, '$1 == \"bf16\" { b = 1 } NR == 1 { f = $1 } END { print (b ? \"bf16\" : f) }'")
device = system(sprintf("sed -n 's/^# device: \\([^ ]*\\) .*/\\1/p' '%s' | head -1", main))
# one series: the rows of (format, policy, K), in M order; columns 4 = M, 6 = cost_model
series(p, k) = sprintf("< %s | awk -F, '$1 == \"%s\" && $2 == \"%s\" && $3 == %s'", rows, fmt, p, k)
kcolors = "#1f77b4 #ff7f0e #2ca02c #9467bd #8c564b #e377c2 #17becf #bcbd22"
kcol(i) = word(kcolors, (i - 1) % 8 + 1)

#@ batch_invariance_cost alt: Modelled GPU time against batch size, vendor-like and batch-invariant, per K
#@ batch_invariance_cost look: the gap between each solid line and its dashed one at small M
#@ batch_invariance_cost caption: A model, not a measurement.
do for [term = 1:2] {
    eval out(term, 'batch_invariance_cost', 1200, 750)
    set title sprintf("Modelled GPU time of C (M x N) = A (M x K) B, %s inputs on the %s model:\nvendor-like (solid) and batch-invariant (dashed), per K", fmt, device)
    set logscale xy
    set format y '%g'
    set xlabel 'batch size M (log scale)'
    set ylabel 'modelled time, µs (log scale)'
    set autoscale xfix
    set key outside right top box
    # the two line styles in the key first (NaN: nothing drawn), then one colour per K
    plot NaN with lines lw 2 lc rgb '#444444' title 'vendor-like', NaN with lines lw 2 dt 2 lc rgb '#444444' title 'batch-invariant', \
         for [k = 1:nk] series('vendor-like', word(Ks, k)) using 4:6 with lines lw 2 lc rgb kcol(k) title 'K = '.word(Ks, k), \
         for [k = 1:nk] series('batch-invariant', word(Ks, k)) using 4:6 with lines lw 2 dt 2 lc rgb kcol(k) notitle
}
set output
