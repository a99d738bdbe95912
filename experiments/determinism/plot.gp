# experiments/determinism/plot.gp — plots of the determinism experiment (main.c beside it).
#
#   gnuplot -e "datadir='data'; outdir='plots'" experiments/determinism/plot.gp   (./lab plot determinism)
#
# Writes outdir/determinism.{png,svg}: left, the number of distinct results (bit patterns of
# the whole C) each GPU kernel gave over its runs, back to back, interleaved and on concurrent
# streams (1: the same bits every time; twins have no streams bar); right, for each run, how many elements of C differ from the first run
# (interleaved schedule; 0 is drawn at the bottom). A run without a GPU writes no rows: the
# plot then says the experiment was skipped and why (the CSV's "# skipped:" line).

load 'plots/common.gp'

main = datadir.'/determinism.csv'
runs = datadir.'/determinism_runs.csv'
nrows = int(system(sprintf("grep -v '^#' '%s' | tail -n +2 | grep -c . || true", main)))
fmt0 = system(sprintf("grep -v '^#' '%s' | awk -F, 'NR == 2 { print $1 }'", main))
kernels = system(sprintf("grep -v '^#' '%s' | awk -F, 'NR > 1 && !seen[$2]++ { print $2 }' | paste -sd' ' -", main))
nk = words(kernels)
kcolor(i) = word('#d62728 #1f77b4 #2ca02c #ff7f0e #9467bd #8c564b #e377c2 #7f7f7f', i)
kidx(k) = sum [i = 1:nk] (word(kernels, i) eq k ? i : 0)

#@ determinism alt: Distinct results per GPU kernel over repeated runs
#@ determinism look: kernels with more than one result
#@ determinism caption: Atomic split-K varies by design.
#@ determinism few: this experiment measures a GPU and the report was made without one, so there is nothing to draw.
# no rows (no GPU): no figure; the report prints the declared sentence instead
if (nrows > 0) {
do for [term = 1:2] {
    eval out(term, 'determinism', 1300, 920)
    {
        # each panel's key below it, off the bars and points
        set multiplot layout 1, 2 margins 0.10, 0.98, 0.30, 0.90 spacing 0.12 title sprintf('The same product (%s inputs), run after run on one GPU', fmt0) font ',12'
        set style fill solid 0.8 noborder
        set boxwidth 0.26
        set xrange [0.4:nk + 0.6]
        set yrange [0.8:*]
        set logscale y
        set xtics () rotate by -20
        do for [i = 1:nk] { set xtics add (word(kernels, i) i) }
        set ylabel 'distinct results over the runs'.LOGY
        set key at screen 0.30, 0.01 center bottom box Left reverse width 0
        plot main using (kidx(strcol('kernel_key')) - 0.27):((strcol('format') eq fmt0 && strcol('schedule') eq 'back-to-back') ? column('distinct') : NaN) \
                 with boxes lc rgb '#1f77b4' title 'back to back', \
             main using (kidx(strcol('kernel_key'))):((strcol('format') eq fmt0 && strcol('schedule') eq 'interleaved') ? column('distinct') : NaN) \
                 with boxes lc rgb '#ff7f0e' title 'interleaved', \
             main using (kidx(strcol('kernel_key')) + 0.27):((strcol('format') eq fmt0 && strcol('schedule') eq 'streams') ? column('distinct') : NaN) \
                 with boxes lc rgb '#2ca02c' title 'concurrent streams'
        unset logscale y
        set xtics auto norotate
        set xrange [*:*]
        set yrange [0:*]
        set offsets 0, 0, graph 0.05, 0
        set xlabel 'run (interleaved schedule)'
        set ylabel 'elements of C that differ from run 0'
        set key at screen 0.77, 0.01 center bottom box Left reverse width -2 title 'kernel (coinciding: concentric)'
        # kernels that agree (every one at 0 for a deterministic kernel) sit on one spot: each
        # drawn smaller than the one before, so coinciding points show as concentric markers
        plot for [i = 1:nk] runs using 'run':((strcol('format') eq fmt0 && strcol('schedule') eq 'interleaved' && strcol('kernel_key') eq word(kernels, i)) ? column('n_diff_first') : NaN) \
             with points pt 7 ps 0.6 + 0.45 * (nk - i) lc rgb kcolor(i) title word(kernels, i)
        set offsets 0, 0, 0, 0
        unset multiplot
        unset xlabel
    }
}
}
