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
#   outdir/argmax_flip_gaps      realistic heads: fraction of rows whose exact top-2 gap is below
#                                x, per K, with the critical gaps D_0.1% at the largest K marked
#                                (solid: default kernels; dashed: tensor cores, logits in the
#                                format; each D_0.1% under its mechanism's law, from
#                                argmax_flip_laws.csv, the values the text gives; a line another
#                                lies on is drawn wide under it); the
#                                bins below the smallest gap (fraction exactly 0) are open
#                                markers on the floor, one row per K.
# Formats, kernels and K values missing from the data are simply not drawn.

load 'plots/common.gp'

set datafile separator ','
set datafile commentschars '#'
bins = datadir.'/argmax_flip.csv'
fit = datadir.'/argmax_flip_fit.csv'
laws = datadir.'/argmax_flip_laws.csv'
gaps = datadir.'/argmax_flip_gaps.csv'

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

# ---- 3. the realistic gap distribution with the critical gaps ------------------------------------
# The critical-gap lines at Kmax, from the laws file (each kernel's D_0.1% under the law its
# mechanism implies: the values the text gives), in drawing order: D_0.1% of each format's
# default kernel (odd m), then of its engine kernel (even m; fp32 has no tensor-core kernel, so
# no "engine" row). Only formats in the data are read (a selection with no rows warns and leaves
# STATS_* undefined).
array DX[7]
array DF[7]
array DS[7]
do for [m = 1:7] {
    i = (m + 1) / 2
    DX[m] = NaN
    if (strstrt(fmtlist, word(formats, i)) > 0) {
        stats laws using (sel(Kmax, word(formats, i), m % 2 ? 'default' : 'engine') * column('gap_p001_rel')) nooutput
        if (exists("STATS_records") && STATS_records > 0) { DX[m] = STATS_max }
    }
    DF[m] = word(formats, i).(m % 2 ? ', default kernel (fp32 logits)' : (i < 3 ? ', logits stored in '.word(formats, i) : ', tensor cores'))
    DS[m] = word(formats, i).(m % 2 ? ' default' : (i < 3 ? ' stored logits' : ' tensor cores'))
}
gsel(K, f) = (column('K') == K && strcol('format') eq f && strcol('bin') ne 'below_lo' && column('cum_fraction') > 0) ? 1 : NaN
kcol = "#2ca02c #9467bd #8c564b"
klight = "#a6dba0 #cab2d6 #d9b38c"
# The critical-gap lines, in drawing order (default then engine per format): a line that a
# later one lies on (within NEAR, a few pixels on this axis: in the committed data fp16's
# under tf32's default-kernel line) would vanish under it, so it is drawn wider, as a band
# around the later line, and its key entry names the line on top.
NEAR = 1.06
array DLW[7]
array DON[7]
do for [m = 1:7] {
    DLW[m] = 1.5
    DON[m] = ''
    if (DX[m] == DX[m]) {
        nabove = 0
        do for [q = m + 1:7] {
            if (DX[q] == DX[q] && DX[q] < DX[m] * NEAR && DX[q] > DX[m] / NEAR) {
                nabove = nabove + 1
                DON[m] = DON[m].(DON[m] eq '' ? '' : ', ').DS[q]
            }
        }
        DLW[m] = 1.5 + 3.0 * nabove
    }
}
dt_of(m) = m % 2 == 1 ? 1 : 2
dcolor(m) = color((m + 1) / 2)
dtitle(m) = 'D_{0.1%}, '.DF[m].(DON[m] eq '' ? '' : ' (wide, under '.DON[m].')')
# The cumulative fraction is exactly 0 below the smallest gap: a log axis cannot show it, so
# those bins are open markers on the floor, one row per K (none hides another). The K curves
# meet over much of the range: each K is drawn wider and lighter than the next.
FLOOR = 1.5e-4
floor_y(j) = FLOOR * 1.35**(j - 1)
zsel(K, f) = (column('K') == K && strcol('format') eq f && strcol('bin') ne 'below_lo' && column('cum_fraction') == 0) ? 1 : NaN
#@ argmax_flip_gaps alt: Cumulative top-2 gaps of realistic heads, with critical gaps as vertical lines
#@ argmax_flip_gaps look: where each line meets the curve (or floor): rows at risk
#@ argmax_flip_gaps caption: Lines are the kernels' D_0.1%.
do for [term = 1:2] {
    eval out(term, 'argmax_flip_gaps', 1300, 1300)
    set title sprintf("Realistic heads: how many rows have an exact top-2 gap below x (%s inputs)\nvertical lines: critical gaps D_{0.1%%} at K = %d; coincident lines and curves drawn wide under thin\nopen markers on the floor: no row has a smaller gap", kf, Kmax) font ',12'
    # the key in one column below the plot: its long entries need the figure's width
    set lmargin at screen 0.10
    set rmargin at screen 0.97
    set bmargin at screen 0.29
    set tmargin at screen 0.89
    set logscale xy 10
    set format y '10^{%L}'
    set xrange [5e-6:10]
    set yrange [1e-4:1.5]
    set xlabel "exact top-1 minus top-2 gap / logit scale s (log scale)"
    set ylabel "fraction of rows with a smaller gap (log scale)"
    set key at screen 0.53, 0.01 center bottom box Left reverse maxrows 20 width 1 height 0.6 spacing 1.1
    unset arrow
    unset label
    do for [m = 1:7] {
        if (DX[m] == DX[m]) {
            set arrow from DX[m], graph 0 to DX[m], graph 1 nohead lw DLW[m] dt dt_of(m) lc rgb dcolor(m)
        }
    }
    plot for [j = 1:nK] gaps using (gsel(word(Klist, j) + 0, kf) * column('rel_hi')):'cum_fraction' \
             with lines lw 2 + 4 * (nK - j) lc rgb (j < nK ? word(klight, (j - 1) % 3 + 1) : word(kcol, (j - 1) % 3 + 1)) \
             title sprintf("K = %s", word(Klist, j)).(j < nK ? ' (wide, under the next K)' : ''), \
         for [j = 1:nK] gaps using (gsel(word(Klist, j) + 0, kf) * column('rel_hi')):'cum_fraction' \
             with points pt (j < nK ? 6 : 7) ps 0.6 + 0.5 * (nK - j) lc rgb word(kcol, (j - 1) % 3 + 1) notitle, \
         1e9 with points pt 8 ps 0.9 lc rgb '#555555' title 'no row below this gap (on the floor, a row per K)', \
         for [j = 1:nK] gaps using (zsel(word(Klist, j) + 0, kf) * column('rel_hi')):(floor_y(j)) \
             with points pt 8 ps 0.9 lc rgb word(kcol, (j - 1) % 3 + 1) notitle, \
         for [m = 1:7] (DX[m] == DX[m] ? 1e9 : NaN) with lines lw DLW[m] dt dt_of(m) lc rgb dcolor(m) title dtitle(m)
    unset arrow
    unset label
    unset logscale y
    unset lmargin
    unset rmargin
    unset bmargin
    unset tmargin
}
set output
