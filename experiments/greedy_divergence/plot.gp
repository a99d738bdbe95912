# experiments/greedy_divergence/plot.gp — plots of the greedy_divergence experiment (main.c beside it).
#
#   gnuplot -e "datadir='data'; outdir='plots'" experiments/greedy_divergence/plot.gp   (./lab plot greedy_divergence)
#
# Writes outdir/greedy_divergence_distinct.{png,svg}: distinct completions out of R identical
# greedy requests, one bar per configuration (1 = every request got the same text);
# outdir/greedy_divergence_hist.{png,svg}: where the completions parted (first differing token,
# histogram over the diverged requests of all configurations); and
# outdir/greedy_divergence_gaps.{png,svg}: for each divergence, the exact logit gap between the
# two tokens at that step against the step.

load 'plots/common.gp'

sum = datadir.'/greedy_divergence_summary.csv'
div = datadir.'/greedy_divergence_divergences.csv'
hist = datadir.'/greedy_divergence_hist.csv'
R = system(sprintf("grep -v '^#' '%s' | awk -F, 'NR == 2 { print $8 }'", sum)) + 0
ndiv = system(sprintf("grep -v '^#' '%s' | awk 'END { print NR - 1 }'", div)) + 0
confs = system(sprintf("grep -v '^#' '%s' | awk -F, 'NR > 1 && $13 > 0 && !s[$1]++ { print $1 }' | paste -sd' ' -", sum))

# 1. distinct completions per configuration
stats sum using 'distinct_completions' nooutput
dmax = STATS_max
#@ greedy_divergence_distinct alt: Bar chart of distinct completions of identical greedy requests per configuration
#@ greedy_divergence_distinct look: bars above one
#@ greedy_divergence_distinct caption: Red: vendor-like; green: batch-invariant.
do for [term = 1:2] {
    eval out(term, 'greedy_divergence_distinct', 1100, 620)
    set title sprintf('Distinct completions of %d identical greedy requests, each in its own random batch', R)
    set style fill solid 0.8 noborder
    set boxwidth 0.6
    set xtics rotate by -30 left nomirror
    set ylabel 'distinct completions'
    set yrange [0:dmax + 1]
    set ytics 1
    set xrange [-0.6:*]
    set key off
    set grid noxtics ytics
    plot sum using 0:'distinct_completions':(strcol('policy') eq 'batch-invariant' ? 0x2ca02c : 0xd62728):xtic(1) \
             with boxes lc rgb variable, \
         '' using 0:(column('distinct_completions') + 0.15):(sprintf('%d', column('distinct_completions'))) with labels offset 0, 0.3
    unset title
    unset xtics
    set xtics
    set xrange [*:*]
    set yrange [*:*]
}

# 2. first-divergence histogram and 3. exact gaps, when anything diverged
if (ndiv >= 3) {
    stats hist using 'bin_hi' nooutput
    T_hi = STATS_max + 1
    stats hist using 'requests' nooutput
    h_hi = STATS_max
    stats div using (abs(column('exact_gap'))) nooutput
    g_lo = STATS_min / 3.0
    g_hi = STATS_max * 3.0
#@ greedy_divergence_hist alt: Histogram of the token where identical requests parted
#@ greedy_divergence_hist look: where texts part
#@ greedy_divergence_hist caption: Diverged requests only.
#@ greedy_divergence_hist few: {sum greedy_divergence_summary.csv diverged %d} requests parted, too few to draw; the table gives each.
    do for [term = 1:2] {
        eval out(term, 'greedy_divergence_hist', 1100, 520)
        set title 'Where identical requests parted: first differing token (diverged requests only)'
        set style fill solid 0.7 border lc rgb '#555555'
        set style data histograms
        set xlabel 'first differing token index (bin start)'
        set ylabel 'requests'
        set key top left box opaque
        set xrange [0:T_hi]
        set yrange [0:h_hi * 1.25]
        set ytics (h_hi < 10 ? 1 : h_hi / 5)
        plot for [c in confs] hist using (strcol('config') eq c ? column('bin_lo') : NaN):'requests' \
             with impulses lw 12 title c
        unset title
    }
#@ greedy_divergence_gaps alt: Exact logit gap where completions parted, against token index
#@ greedy_divergence_gaps look: how small the gaps are
#@ greedy_divergence_gaps caption: Partings happen at near ties.
#@ greedy_divergence_gaps few: {sum greedy_divergence_summary.csv diverged %d} requests parted, too few to draw; the table gives each gap.
    do for [term = 1:2] {
        eval out(term, 'greedy_divergence_gaps', 1100, 560)
        set title 'The exact logit gap between the two tokens where a completion parted from the request alone'
        set xlabel 'first differing token index'
        set ylabel '|exact logit gap| (log scale)'
        set logscale y
        set format y '%.2g'
        set xrange [0:T_hi]
        set yrange [g_lo:g_hi]
        set ytics auto
        set key top left box opaque
        plot for [c in confs] div using (strcol('config') eq c ? column('first_div') : NaN):(abs(column('exact_gap'))) \
             with points pt 7 ps 1.2 title c
        unset logscale y
        set format y '%g'
        unset title
    }
}
# fewer than three partings: no figure (the report prints the declared sentence instead)
