# formats.gp — plots of the formats experiment (experiments/formats.c).
#
#   gnuplot -e "datadir='data'; outdir='plots'" plots/formats.gp      (./lab plot formats)
#
# Writes outdir/formats_spacing.{png,svg}: the spacing of representable numbers per binade
# (log-log staircase; left the whole range, right a zoom on the small formats), and
# outdir/formats_relerr.{png,svg}: the relative error of random reals stored in each
# format, with each format's unit roundoff u = 2^-p as a dashed line.
# Every format missing from the data (a run with --formats) is simply not drawn.

if (!exists("datadir")) datadir = 'data'
if (!exists("outdir")) outdir = 'plots'

set datafile separator ','
set datafile commentschars '#'
spacing = datadir.'/formats_spacing.csv'
relerr = datadir.'/formats_relerr.csv'
consts = datadir.'/formats_constants.csv'

formats = "fp64 fp32 tf32 fp16 bf16 fp8e4m3 fp8e5m2"
colors = "#000000 #1f77b4 #17becf #d62728 #ff7f0e #2ca02c #9467bd"
color(i) = word(colors, i)
# The rows of one format: everything else becomes NaN, which gnuplot skips.
is(f) = strcol('format') eq f ? 1 : NaN

# Unit roundoff of each format present in the data (for the dashed lines and the key).
array U[7]
do for [i = 1:7] {
    # Absent formats give 0 rather than no valid point, so stats never fails.
    stats consts using (is(word(formats, i)) == 1 ? column('unit_roundoff') : 0) nooutput
    U[i] = STATS_max > 0 ? STATS_max : NaN
}

set encoding utf8
set logscale xy 2
set format x '2^{%L}'
set format y '2^{%L}'
set grid xtics ytics lc rgb '#dddddd'
set key top left box opaque font ',10' width 2
set xlabel "magnitude x (log scale)"
set ylabel "spacing at x: distance to the next representable number (log scale)"

do for [term = 1:2] {
    if (term == 1) {
        set terminal pngcairo size 1500,650 enhanced font 'Sans,11'
        set output outdir.'/formats_spacing.png'
    } else {
        set terminal svg size 1500,650 enhanced font 'Sans,11' dynamic
        set output outdir.'/formats_spacing.svg'
    }
    set multiplot layout 1,2 title "Spacing between neighbouring representable numbers (one step per binade)" font ',14'

    set title "wide view: the 32- and 16-bit formats (fp64 goes on to 2^{-1074} and 2^{1024})"
    set xrange [2**-152:2**132]
    set yrange [2**-160:2**128]
    set xtics 2**24
    set ytics 2**24
    # Treads drawn as segments [x, x_end) so the top binade ends at max finite; risers by 'steps'.
    plot for [i = 1:7] spacing using (is(word(formats, i)) * column('x')):'spacing':(column('x_end') - column('x')):(0) \
             with vectors nohead lw 2 lc rgb color(i) title (U[i] == U[i] ? word(formats, i) : ''), \
         for [i = 1:7] spacing using (is(word(formats, i)) * column('x')):'spacing' with steps lw 2 lc rgb color(i) notitle

    set title "zoom: the range where fp16, bf16 and fp8 live (flat left part = subnormals)"
    set xrange [2**-26:2**18]
    set yrange [2**-40:2**12]
    set xtics 2**4
    set ytics 2**4
    plot for [i = 1:7] spacing using (is(word(formats, i)) * column('x')):'spacing':(column('x_end') - column('x')):(0) \
             with vectors nohead lw 2 lc rgb color(i) title (U[i] == U[i] ? word(formats, i) : ''), \
         for [i = 1:7] spacing using (is(word(formats, i)) * column('x')):'spacing' with steps lw 2 lc rgb color(i) notitle
    unset multiplot
    unset xrange
    unset yrange
    set autoscale xy
}

set xtics 2**4
set ytics 2**4
set key outside right top box font ',10' width 1
do for [term = 1:2] {
    if (term == 1) {
        set terminal pngcairo size 1350,750 enhanced font 'Sans,11'
        set output outdir.'/formats_relerr.png'
    } else {
        set terminal svg size 1350,750 enhanced font 'Sans,11' dynamic
        set output outdir.'/formats_relerr.svg'
    }
    set title "Relative error |stored - x| / x of random reals x, per format (dashed: unit roundoff u = 2^{-p})" font ',13'
    set xlabel "x (log scale)"
    set ylabel "relative representation error (log scale)"
    set xrange [2**-30:2**20]
    set yrange [2**-64:2**1]
    # Points first, then the u lines on top so they stay visible inside the bands.
    plot for [i = 1:7] relerr using (is(word(formats, i)) * column('x')):'rel_err' \
             with points pt 7 ps 0.35 lc rgb color(i) title (U[i] == U[i] ? word(formats, i) : ''), \
         for [i = 1:7] U[i] with lines dt 2 lw 1.5 lc rgb color(i) \
             title (U[i] == U[i] ? sprintf("u(%s) = 2^{%d}", word(formats, i), int(log(U[i]) / log(2) - 0.5)) : '')
    unset xrange
    unset yrange
}
set output
