# experiments/argmax_flip_realistic/plot.gp — plots of the argmax_flip_realistic experiment (main.c beside it).
#
#   gnuplot -e "datadir='data'; outdir='plots'" experiments/argmax_flip_realistic/plot.gp      (./lab plot argmax_flip_realistic)
#
# Writes, as .png and .svg:
#   outdir/argmax_flip_realistic_gaps   realistic heads: fraction of rows whose exact top-2 gap
#       is below x, per K, with the critical gaps D_0.1% at the largest K marked (solid: default
#       kernels; dashed: tensor cores, logits in the format; each D_0.1% under its mechanism's
#       law, law_gap_p001_rel of argmax_flip_realistic_below.csv: the values argmax_flip_laws.csv
#       and the text give; a line another lies on is drawn wide under it); the bins below the
#       smallest gap (fraction exactly 0) are open markers on the floor, one row per K.
# Formats and K values missing from the data are simply not drawn.

load 'plots/common.gp'

set datafile separator ','
set datafile commentschars '#'
real = datadir.'/argmax_flip_realistic.csv'
below = datadir.'/argmax_flip_realistic_below.csv'
gaps = datadir.'/argmax_flip_realistic_gaps.csv'

# The K values and formats present in the data (first and second column of the data rows).
Klist = system("awk -F, '!/^#/ && $1+0 > 0 {print $1}' ".real." | sort -un | tr '\\n' ' '")
nK = words(Klist)
Kmax = word(Klist, nK) + 0
fmtlist = system("awk -F, '!/^#/ && $1+0 > 0 {print $2}' ".real." | awk '!seen[$0]++' | tr '\\n' ' '")
kf = (strstrt(fmtlist, 'bf16') > 0) ? 'bf16' : word(fmtlist, 1)

formats = "bf16 fp16 tf32 fp32"
color(i) = fmt_color(word(formats, i))
sel(K, f, t) = (column('K') == K && strcol('format') eq f && strcol('tag') eq t) ? 1 : NaN

set samples 400
set encoding utf8
set format x '10^{%L}'

# ---- the realistic gap distribution with the critical gaps -------------------------------------
# The critical-gap lines at Kmax, from the below file's law columns (each kernel's D_0.1% under the law its
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
        stats below using (sel(Kmax, word(formats, i), m % 2 ? 'default' : 'engine') * column('law_gap_p001_rel')) nooutput
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
#@ argmax_flip_realistic_gaps alt: Cumulative top-2 gaps of realistic heads, with critical gaps as vertical lines
#@ argmax_flip_realistic_gaps look: where each line meets the curve (or floor): rows at risk
#@ argmax_flip_realistic_gaps caption: Lines are the kernels' D_0.1%.
do for [term = 1:2] {
    eval out(term, 'argmax_flip_realistic_gaps', 1300, 1300)
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
