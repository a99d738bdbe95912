# experiments/sampling_flip/plot.gp — plot of the sampling_flip experiment (main.c beside it).
#
#   gnuplot -e "datadir='data'; outdir='plots'" experiments/sampling_flip/plot.gp      (./lab plot sampling_flip)
#
# Writes outdir/sampling_flip.{png,svg}: the fraction of sampling steps (uniform held fixed)
# whose token differs from the one sampled from the exact logits, against the temperature, one
# curve per (format, kernel), one panel per sampler (full softmax, top-k, top-p). T = 0 (the
# argmax path) is drawn at the far left. Log scales; steps where no change was seen are drawn
# on the floor of the plot with open triangles; bars are Wilson 95% intervals.

load 'plots/common.gp'

set datafile separator ','
set datafile commentschars '#'
rates = datadir.'/sampling_flip.csv'

# (format kernel) pairs present in the data, in file order
pairs = system("awk -F, '!/^#/ && $5+0 > 0 && !seen[$1\" \"$2]++ {print $1\"|\"$2}' ".rates." | tr '\\n' ' '")
np = words(pairs)
pf(i) = word(pairs, i)[1:strstrt(word(pairs, i), '|') - 1]
pk(i) = word(pairs, i)[strstrt(word(pairs, i), '|') + 1:]
# colour, point and dash per (format, kernel) series: the data usually hold one input format
# with several kernels, so a colour per format alone would not tell them apart
kcolors = "#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b #e377c2 #17becf"
color(i) = word(kcolors, (i - 1) % 8 + 1)
ptype(i) = word("7 5 9 11 13 15", (i - 1) % 6 + 1) + 0
dtype(i) = (i - 1) % 3 + 1
samplers = "full top-k top-p"
T0 = 3e-9     # where T = 0 is drawn
FLOOR = 1e-4  # where "no change seen" is drawn: each series a little higher, so none hides another
floor_y(i) = FLOOR * 1.3**(i - 1)
tx(t) = t == 0 ? T0 : t
sel(i, s) = (strcol('format') eq pf(i) && strcol('kernel') eq pk(i) && strcol('sampler') eq s) ? 1 : NaN

set encoding utf8
set logscale xy 10
set format x '10^{%L}'
set format y '10^{%L}'
# a label every second decade: at the report's width every decade's would run together
set xtics 1e-6, 100
set mxtics 10
set xtics add ("0\n(argmax)" T0)
set xrange [1.5e-9:4]
set yrange [FLOOR / 2:1]
# the log axis is broken between T = 0 (drawn at T0) and the first T > 0: two slanted strokes
set arrow 1 from 4.6e-9, graph -0.02 to 5.2e-9, graph 0.02 nohead lw 1.5 front
set arrow 2 from 5.4e-9, graph -0.02 to 6.1e-9, graph 0.02 nohead lw 1.5 front
set ylabel "steps whose token changed (log scale)"
set xlabel "temperature T (log scale; T = 0 left of the break)" offset 0, -0.7

#@ sampling_flip alt: Fraction of sampled tokens changed by the numerics against temperature, per kernel
#@ sampling_flip look: bf16-logit kernels far above fp32-logit ones
#@ sampling_flip caption: Floor markers: no change in any step.
do for [term = 1:2] {
    eval out(term, 'sampling_flip', 1350, 1140)
    # three samplers in a 2 x 2 grid, the key in the fourth cell
    set multiplot layout 2,2 margins 0.09, 0.98, 0.09, 0.88 spacing 0.09, 0.15 title "Same seed, different numerics: how often the sampled token differs from the one the exact logits give\n(open markers on the floor: no change seen in any step, one row per kernel; bars: Wilson 95%)" font ',12'
    do for [j = 1:3] {
        s = word(samplers, j)
        set title (s eq 'full' ? 'full softmax' : s eq 'top-k' ? 'top-k (k = 50)' : 'top-p (p = 0.9)') font ',11'
        if (j == 3) { set key at screen 0.76, 0.27 center center box title 'inputs, kernel' } else { unset key }
        plot for [i = 1:np] rates using (sel(i, s) * tx(column('temperature'))):(column('rate') > 0 ? column('rate') : NaN):'lo':'hi' \
                 with yerrorlines lw 1.5 dt dtype(i) pt ptype(i) ps 0.6 lc rgb color(i) title (j == 3 ? pf(i).' '.pk(i) : ''), \
             for [i = 1:np] rates using (sel(i, s) * tx(column('temperature'))):(column('rate') > 0 ? NaN : floor_y(i)) \
                 with points pt ptype(i) - 1 ps 0.9 lc rgb color(i) notitle
    }
    unset multiplot
}
set output
