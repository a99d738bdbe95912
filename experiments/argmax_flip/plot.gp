# experiments/argmax_flip/plot.gp — plots of the argmax_flip experiment (main.c beside it).
#
#   gnuplot -e "datadir='data'; outdir='plots'" experiments/argmax_flip/plot.gp      (./lab plot argmax_flip)
#
# Writes, as .png and .svg:
#   outdir/argmax_flip_formats   flip probability vs exact gap (relative to the logit scale s),
#                                one panel per K, one colour per input format: filled points and
#                                solid curves = the default kernel (fp32 accumulation and logits),
#                                open points and dashed curves = tensor cores with the logits
#                                stored in the format; curves are the fitted Phi(-gap/sigma),
#                                drawn from the sigmas of argmax_flip_fit.csv only where
#                                accumulation noise is the mechanism (stored logits follow the
#                                output grid's law, argmax_flip_laws.csv: points only);
#                                error bars are Wilson 95% intervals.
#   outdir/argmax_flip_kernels   the same for every kernel, bf16 inputs (or the first format) at
#                                the largest K: above the fp32-logit kernels, below the logits
#                                stored in the format and own-format accumulation, each panel
#                                with its key in one column right of it.
# Formats, kernels and K values missing from the data are simply not drawn.

load 'plots/common.gp'

set datafile separator ','
set datafile commentschars '#'
bins = datadir.'/argmax_flip.csv'
fit = datadir.'/argmax_flip_fit.csv'

# The fitted curves are drawn from the fitted sigmas (gnuplot's norm(x) is the standard normal
# CDF Phi): P(flip | gap) = norm(-gap / sigma). sig(K, f, t) and sigk(K, f, k) read sigma_rel from
# the fit file for a tag or a kernel name, NaN when that fit is not 'ok' or not present.
# The K values, and the kernels, present in the data (first column of the data rows).
Klist = system("awk -F, '!/^#/ && $1+0 > 0 {print $1}' ".fit." | sort -un | tr '\\n' ' '")
nK = words(Klist)
Kmax = word(Klist, nK) + 0
fmtlist = system("awk -F, '!/^#/ && $1+0 > 0 {print $2}' ".fit." | awk '!seen[$0]++' | tr '\\n' ' '")
kf = (strstrt(fmtlist, 'bf16') > 0) ? 'bf16' : word(fmtlist, 1)

formats = "bf16 fp16 tf32 fp32"
color(i) = fmt_color(word(formats, i))
sel(K, f, t) = (column('K') == K && strcol('format') eq f && strcol('tag') eq t) ? 1 : NaN
selk(K, f, k) = (column('K') == K && strcol('format') eq f && strcol('kernel') eq k) ? 1 : NaN

okfit(x) = strcol('status') eq 'ok' ? x : NaN
sig_tag(K, f, t) = system(sprintf("awk -F, '!/^#/ && $1 == %d && $2 == \"%s\" && $5 == \"%s\" && $11 == \"ok\" {print $12; exit}' %s", K, f, t, fit))
sig_ker(K, f, k) = system(sprintf("awk -F, '!/^#/ && $1 == %d && $2 == \"%s\" && $3 == \"%s\" && $11 == \"ok\" {print $12; exit}' %s", K, f, k, fit))
num(s) = strlen(s) > 0 ? s + 0.0 : NaN
set samples 400

set encoding utf8
set logscale x 10
set format x '10^{%L}'
set xlabel "exact top-1 minus top-2 gap / logit scale s (log scale)"
set ylabel "flip probability P(computed argmax != exact argmax)"
# a probability: the axis starts at 0 (zero rates lie on it)
set yrange [0:0.75]
set xrange [5e-8:3]

# ---- 1. per format ------------------------------------------------------------------------------
#@ argmax_flip_formats alt: Argmax flip probability against the exact top-2 gap, per input format
#@ argmax_flip_formats look: how far right the dashed stored-logit curves sit
#@ argmax_flip_formats caption: Solid fp32-logit curves nearly coincide.
do for [term = 1:2] {
    # the panels side by side, the key below them in two columns (off the data)
    FW = 750 * (nK > 2 ? nK : 2)
    eval out(term, 'argmax_flip_formats', FW, FW * 750 / 900)
    set multiplot layout 1,nK margins 0.08, 0.98, 0.23, 0.81 spacing 0.06 title "How small a logit gap flips argmax (planted pairs; curves: fitted {/Symbol F}(-gap/{/Symbol s}); bars: Wilson 95%)\nfilled, solid: default kernel (seq, fp32 accumulation, fp32 logits); the four curves nearly coincide\nopen: tensor cores (tc:h100); logits stored in the format have no curve: the output grid, not noise, sets their law\ndashed: tf32 on tensor cores, fp32 logits" font ',12'
    do for [j = 1:nK] {
        K = word(Klist, j) + 0
        array SD[4]
        array SE[4]
        do for [i = 1:4] {
            SD[i] = num(sig_tag(K, word(formats, i), 'default'))
            SE[i] = num(sig_tag(K, word(formats, i), 'engine'))
        }
        if (j > 1) { set ylabel ' ' }
        set title sprintf("K = %d", K) font ',11'
        if (j == nK) { set key at screen 0.53, 0.015 center bottom box Left reverse maxrows 4 width -1 spacing 1.1 } else { unset key }
        plot for [i = 1:4] bins using (sel(K, word(formats, i), 'default') * column('rel_center')):'rate':'lo':'hi' \
                 with yerrorbars pt 7 ps 0.7 lc rgb color(i) title (j == nK ? word(formats, i).' inputs, default kernel' : ''), \
             for [i = 1:4] (SD[i] == SD[i] ? norm(-x / SD[i]) : NaN) with lines lw 2 lc rgb color(i) notitle, \
             for [i = 1:3] bins using (sel(K, word(formats, i), 'engine') * column('rel_center')):'rate':'lo':'hi' \
                 with yerrorbars pt 6 ps 0.8 lc rgb color(i) title (j == nK ? word(formats, i).(i < 3 ? ' inputs, logits stored in '.word(formats, i) : ' inputs, tensor cores, fp32 logits') : ''), \
             for [i = 3:3] (SE[i] == SE[i] ? norm(-x / SE[i]) : NaN) with lines lw 1.5 dt 2 lc rgb color(i) notitle
    }
    unset multiplot
    set ylabel "flip probability P(computed argmax != exact argmax)"
}

# ---- 2. per kernel --------------------------------------------------------------------------------
# kernels of format kf at Kmax, split by the logits' format (column 8 of the fit file)
k32 = system(sprintf("awk -F, '!/^#/ && $1 == %d && $2 == \"%s\" && $8 == \"fp32\" {print $3}' %s | tr '\\n' ' '", Kmax, kf, fit))
knar = system(sprintf("awk -F, '!/^#/ && $1 == %d && $2 == \"%s\" && $8 != \"fp32\" && $8 != \"logits\" {print $3}' %s | tr '\\n' ' '", Kmax, kf, fit))
array S32[words(k32) > 0 ? words(k32) : 1]
do for [i = 1:words(k32)] { S32[i] = num(sig_ker(Kmax, kf, word(k32, i))) }
kcolors = "#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b #e377c2 #7f7f7f #bcbd22 #17becf #000000 #aec7e8"
kc(i) = word(kcolors, (i - 1) % 12 + 1)
#@ argmax_flip_kernels alt: Flip probability against the gap for every kernel, fp32 and stored logits
#@ argmax_flip_kernels look: each curve's position: its noise sigma
#@ argmax_flip_kernels caption: Lower panel: the format's spacing decides; no Gaussian curve is drawn there.
do for [term = 1:2] {
    # one panel above the other, each with its kernels' key in one column right of it (off the
    # data, readable at the report's width): ten kernels under a panel crowd each other
    eval out(term, 'argmax_flip_kernels', 1200, 1400)
    set multiplot layout 2,1 margins 0.09, 0.72, 0.06, 0.90 spacing 0.12 title sprintf("Flip probability per kernel, %s inputs, K = %d\n(kernel = order/accumulator/logits; points: measured rates; curves: fitted {/Symbol F}, above only)", kf, Kmax) font ',12'
    # points without bars (the bars of ten kernels hide each other)
    set ylabel 'P(computed argmax != exact)'
    set key at screen 0.995, 0.70 right center box maxrows 20 spacing 1.1 title 'kernel' width 1
    set title "logits in fp32: the reduction order sets the noise" font ',11'
    plot for [i = 1:words(k32)] bins using (selk(Kmax, kf, word(k32, i)) * column('rel_center')):'rate' \
             with points pt (i % 6) + 4 ps 1.0 lc rgb kc(i) title word(k32, i), \
         for [i = 1:words(k32)] (S32[i] == S32[i] ? norm(-x / S32[i]) : NaN) with lines lw 2 lc rgb kc(i) notitle
    set title "logits stored in the format, or own-format accumulation: the coarse format sets the flips\n(no curve: the output grid's law, not {/Symbol F}, is the mechanism's; coincident points larger under smaller)" font ',11'
    set key at screen 0.995, 0.27 right center box maxrows 20 spacing 1.1 title "kernel\n(larger under smaller)" width 1
    # the stored-logit kernels' rates coincide (the format's spacing sets them): each marker is
    # drawn larger than the next, so every one stays visible
    plot for [i = 1:words(knar)] bins using (selk(Kmax, kf, word(knar, i)) * column('rel_center')):'rate' \
             with points pt (i % 6) + 4 ps 0.9 + 0.25 * (words(knar) - i) lc rgb kc(i) title word(knar, i)
    unset multiplot
    set ylabel "flip probability P(computed argmax != exact argmax)"
    set key default
}
set output
