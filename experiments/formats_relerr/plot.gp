# experiments/formats_relerr/plot.gp — plots of the formats_relerr experiment (main.c beside it).
#
#   gnuplot -e "datadir='data'; outdir='plots'" experiments/formats_relerr/plot.gp      (./lab plot formats_relerr)
#
# Writes outdir/formats_relerr.{png,svg}: the relative error of random reals stored in each
# format, with each format's unit roundoff u = 2^-p as a dashed line.
# Every format missing from the data (a run with --formats) is simply not drawn.

load 'plots/common.gp'
relerr = datadir.'/formats_relerr.csv'
summary = datadir.'/formats_relerr_summary.csv'

formats = FORMATS
color(i) = fmt_color(word(formats, i))
is(f) = is_fmt(f)
# a stored value that is zero (underflow) or inf/NaN (overflow): no relative error to plot
is_class(f, c) = (strcol('format') eq f && strcol('class') eq c) ? 1 : NaN
is_stored(f) = (strcol('format') eq f && (strcol('class') eq 'normal' || strcol('class') eq 'subnormal')) ? 1 : NaN
# the markers of each narrow format sit at their own height so that they do not hide each other
zero_y(f) = f eq 'fp8e4m3' ? 2**0 : f eq 'fp8e5m2' ? 2**-0.5 : 2**-1
over_y(f) = f eq 'fp8e4m3' ? 2**3 : f eq 'fp8e5m2' ? 2**2 : 2**1

# Unit roundoff of each format present in the data (for the dashed lines and the key).
array U[7]
do for [i = 1:7] {
    # Absent formats give 0 rather than no valid point, so stats never fails.
    stats summary using (is(word(formats, i)) == 1 ? column('unit_roundoff') : 0) nooutput
    U[i] = STATS_max > 0 ? STATS_max : NaN
}

set logscale xy 2
set format x '2^{%L}'
set format y '2^{%L}'
set xtics 2**4
set ytics 2**4
#@ formats_relerr alt: Relative storage error of random reals against magnitude, per format
#@ formats_relerr look: the points under each dashed unit roundoff
#@ formats_relerr caption: Below the normal range the error grows to 1 (stored as 0); plus signs: overflow.
do for [term = 1:2] {
    eval out(term, 'formats_relerr', 1350, 1350)
    unset title
    set multiplot title "Relative error |stored - x| / x of random reals x, per format\n(dashed: unit roundoff u = 2^{-p})" font ',12'
    set xlabel "x".LOGX
    set xrange [2**-30:2**20]
    # each panel's key right of it, off the data
    set key at screen 0.775, 0.91 left top box Left reverse width -2
    set lmargin at screen 0.10
    set rmargin at screen 0.76
    # top: the narrow formats, y from their smallest errors up to the markers at 2^0 and above
    set origin 0, 0.36
    set size 1, 0.57
    unset xlabel
    set format x ''
    set ylabel "relative error".LOGY
    set yrange [2**-24:2**4]
    set ytics 2**4
    set label 1 "x: stored as 0 (underflow, error 1), a row per format" at graph 0.43, first 2**0.45 font ',10' tc rgb '#555555'
    set label 2 "+ : overflow to inf (NaN in fp8e4m3), a row per format" at graph 0.02, first 2**3.2 font ',10' tc rgb '#555555'
    plot for [i in "3 4 6 5 7"] relerr using (is_stored(word(formats, i + 0)) * column('x')):'rel_err' \
             with points pt fmt_pt(word(formats, i + 0)) ps fmt_ps(word(formats, i + 0)) lc rgb color(i + 0) title word(formats, i + 0), \
         for [i in "3 4 6 5 7"] relerr using (is_class(word(formats, i + 0), 'zero') * column('x')):(zero_y(word(formats, i + 0))) \
             with points pt 2 ps 0.6 lc rgb color(i + 0) notitle, \
         for [i in "3 4 6 5 7"] relerr using (is_class(word(formats, i + 0), 'inf') * column('x')):(over_y(word(formats, i + 0))) \
             with points pt 1 ps 0.8 lc rgb color(i + 0) notitle, \
         for [i in "3 4 6 5 7"] relerr using (is_class(word(formats, i + 0), 'nan') * column('x')):(over_y(word(formats, i + 0))) \
             with points pt 1 ps 0.8 lc rgb color(i + 0) notitle, \
         for [i in "3 4 6 5 7"] U[i + 0] with lines dt 2 lw 1.5 lc rgb color(i + 0) \
             title (U[i + 0] == U[i + 0] ? sprintf("u(%s) = 2^{%d}", word(formats, i + 0), int(log(U[i + 0]) / log(2) - 0.5)) : '')
    unset label 1
    unset label 2
    # bottom: fp32 and fp64, far below (the y axis is broken between the panels)
    set origin 0, 0
    set size 1, 0.38
    set format x '2^{%L}'
    set xlabel "x".LOGX
    set yrange [2**-64:2**-22]
    set ytics 2**8
    set key at screen 0.775, 0.36 left top
    plot for [i = 1:2] relerr using (is(word(formats, i)) * column('x')):'rel_err' \
             with points pt 7 ps 0.35 lc rgb color(i) title word(formats, i), \
         for [i = 1:2] U[i] with lines dt 2 lw 1.5 lc rgb color(i) \
             title (U[i] == U[i] ? sprintf("u(%s) = 2^{%d}", word(formats, i), int(log(U[i]) / log(2) - 0.5)) : '')
    unset multiplot
    unset xrange
    unset yrange
    unset lmargin
    unset rmargin
}
set output
