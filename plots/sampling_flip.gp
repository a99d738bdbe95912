# sampling_flip.gp — plot of the sampling_flip experiment (experiments/sampling_flip.c).
#
#   gnuplot -e "datadir='data'; outdir='plots'" plots/sampling_flip.gp      (./lab plot sampling_flip)
#
# Writes outdir/sampling_flip.{png,svg}: the fraction of sampling steps (uniform held fixed)
# whose token differs from the one sampled from the exact logits, against the temperature, one
# curve per (format, kernel), one panel per sampler (full softmax, top-k, top-p). T = 0 (the
# argmax path) is drawn at the far left. Log scales; steps where no change was seen are drawn
# on the floor of the plot with open triangles; bars are Wilson 95% intervals.

if (!exists("datadir")) datadir = 'data'
if (!exists("outdir")) outdir = 'plots'

set datafile separator ','
set datafile commentschars '#'
rates = datadir.'/sampling_flip.csv'

# (format kernel) pairs present in the data, in file order
pairs = system("awk -F, '!/^#/ && $5+0 > 0 && !seen[$1\" \"$2]++ {print $1\"|\"$2}' ".rates." | tr '\\n' ' '")
np = words(pairs)
pf(i) = word(pairs, i)[1:strstrt(word(pairs, i), '|') - 1]
pk(i) = word(pairs, i)[strstrt(word(pairs, i), '|') + 1:]
colors = "#1f77b4 #2ca02c #9467bd #d62728 #ff7f0e #8c564b #e377c2 #17becf"
color(i) = word(colors, (i - 1) % 8 + 1)
samplers = "full top-k top-p"
T0 = 3e-9     # where T = 0 is drawn
FLOOR = 1e-4  # where "no change seen" is drawn
tx(t) = t == 0 ? T0 : t
sel(i, s) = (strcol('format') eq pf(i) && strcol('kernel') eq pk(i) && strcol('sampler') eq s) ? 1 : NaN

set encoding utf8
set logscale xy 10
set format x '10^{%L}'
set format y '10^{%L}'
set xtics add ("0\n(argmax)" T0)
set grid xtics ytics lc rgb '#dddddd'
set xrange [1.5e-9:4]
set yrange [FLOOR / 2:1]
set xlabel "temperature T (log scale; T = 0 at the left)"
set ylabel "fraction of steps whose token changed (log scale)"
set key top left box opaque font ',9'

do for [term = 1:2] {
    if (term == 1) {
        set terminal pngcairo size 1650,600 enhanced font 'Sans,11'
        set output outdir.'/sampling_flip.png'
    } else {
        set terminal svg size 1650,600 enhanced font 'Sans,11' dynamic
        set output outdir.'/sampling_flip.svg'
    }
    set multiplot layout 1,3 title "Same seed, different numerics: how often the sampled token differs from the one the exact logits give\n(open triangles on the floor: no change seen in any step; bars: Wilson 95%)" font ',12'
    do for [j = 1:3] {
        s = word(samplers, j)
        set title (s eq 'full' ? 'full softmax' : s eq 'top-k' ? 'top-k (k = 50)' : 'top-p (p = 0.9)') font ',11'
        plot for [i = 1:np] rates using (sel(i, s) * tx(column('temperature'))):(column('rate') > 0 ? column('rate') : NaN):'lo':'hi' \
                 with yerrorlines lw 1.5 pt 7 ps 0.6 lc rgb color(i) title pf(i).' '.pk(i), \
             for [i = 1:np] rates using (sel(i, s) * tx(column('temperature'))):(column('rate') > 0 ? NaN : FLOOR) \
                 with points pt 11 ps 0.9 lc rgb color(i) notitle
    }
    unset multiplot
}
set output
