# experiments/formats/plot.gp — plots of the formats experiment (main.c beside it).
#
#   gnuplot -e "datadir='data'; outdir='plots'" experiments/formats/plot.gp      (./lab plot formats)
#
# Writes outdir/formats_spacing.{png,svg}: the spacing of representable numbers per binade
# (log-log staircase; left the whole range, right a zoom on the small formats).
# Every format missing from the data (a run with --formats) is simply not drawn.

load 'plots/common.gp'
spacing = datadir.'/formats_spacing.csv'
consts = datadir.'/formats_constants.csv'

formats = FORMATS
color(i) = fmt_color(word(formats, i))
is(f) = is_fmt(f)

# Unit roundoff of each format present in the data (its key entry says the format is there).
array U[7]
do for [i = 1:7] {
    # Absent formats give 0 rather than no valid point, so stats never fails.
    stats consts using (is(word(formats, i)) == 1 ? column('unit_roundoff') : 0) nooutput
    U[i] = STATS_max > 0 ? STATS_max : NaN
}

set logscale xy 2
set format x '2^{%L}'
set format y '2^{%L}'
set xlabel "magnitude x (log scale)"
set ylabel "spacing at x (log scale)"

#@ formats_spacing alt: Spacing of neighbouring values against the value, per format, log-log
#@ formats_spacing look: the doubling at each power of two and where each curve stops
#@ formats_spacing caption: Flat left ends: subnormals; tf32 (wide) lies under fp16.
do for [term = 1:2] {
    eval out(term, 'formats_spacing', 1350, 1400)
    # the two views one above the other, each the figure's width; one key right of them, off the data
    set multiplot layout 2,1 margins 0.10, 0.80, 0.07, 0.89 spacing 0.15 title "Spacing between neighbouring representable numbers:\nthe distance from x to the next one (one step per binade)" font ',12'
    set key at screen 0.815, 0.5 left center box Left reverse width -1

    set title "wide view: the 32- and 16-bit formats (fp64 goes on to 2^{-1074} and 2^{1024})"
    set xrange [2**-152:2**132]
    set yrange [2**-160:2**128]
    set xtics 2**24
    set ytics 2**24
    # Treads drawn as segments [x, x_end) so the top binade ends at max finite; risers by 'steps'.
    plot for [i = 1:7] spacing using (is(word(formats, i)) * column('x')):'spacing':(column('x_end') - column('x')):(0) \
             with vectors nohead lw fmt_lw(word(formats, i)) lc rgb fmt_light(word(formats, i)) title (U[i] == U[i] ? word(formats, i) : ''), \
         for [i = 1:7] spacing using (is(word(formats, i)) * column('x')):'spacing' with steps lw fmt_lw(word(formats, i)) lc rgb fmt_light(word(formats, i)) notitle

    unset key
    set title "zoom: the range where fp16, bf16 and fp8 live (flat left part = subnormals);\ntf32 (wide, light) lies under fp16 where both have p = 11,\nfp8e4m3 under fp8e5m2 at the top"
    set xrange [2**-26:2**18]
    set yrange [2**-40:2**12]
    set xtics 2**4
    set ytics 2**4
    plot for [i = 1:7] spacing using (is(word(formats, i)) * column('x')):'spacing':(column('x_end') - column('x')):(0) \
             with vectors nohead lw fmt_lw(word(formats, i)) lc rgb fmt_light(word(formats, i)) title (U[i] == U[i] ? word(formats, i) : ''), \
         for [i = 1:7] spacing using (is(word(formats, i)) * column('x')):'spacing' with steps lw fmt_lw(word(formats, i)) lc rgb fmt_light(word(formats, i)) notitle
    unset multiplot
    unset xrange
    unset yrange
    set autoscale xy
}

set output
