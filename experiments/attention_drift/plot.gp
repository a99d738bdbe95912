# experiments/attention_drift/plot.gp — plots of the attention_drift experiment (main.c beside it).
#
#   gnuplot -e "datadir='data'; outdir='plots'" experiments/attention_drift/plot.gp   (./lab plot attention_drift)
#
# Writes outdir/attention_drift_error.{png,svg}: the output's relative error against the exact
# attention of the same rounded inputs, against the sequence length L, one panel per input
# format, one line per kernel (standard, flash per key tile Bc, split-KV) and the control
# (standard with its scores stored in fp32, dashed; from attention_drift_control.csv); and
# outdir/attention_drift_ratio.{png,svg}: flash's error over standard's against Bc, per format
# (colour) and L (point), with the ratio 1 and Golden et al.'s ~10 (bf16) drawn as references.

load 'plots/common.gp'

main = datadir.'/attention_drift.csv'
ctl = datadir.'/attention_drift_control.csv'
# runs made before the control was measured have no control file: their figure goes without it
has_ctl = int(system(sprintf("test -f '%s' && echo 1 || echo 0", ctl)))
ctl = has_ctl ? ctl : main  # a file gnuplot can open even where the loop below draws nothing
col_values(file, name) = system(sprintf("grep -v '^#' '%s' | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == \"%s\") c = i; next } !seen[$c]++ { print $c }' | paste -sd' ' -", file, name))
fmts = col_values(main, 'format')
kerns = col_values(main, 'kernel_key')
Ls = col_values(main, 'L')
nf = words(fmts)
nk = words(kerns)
nl = words(Ls)
kcolors = "#000000 #1f77b4 #ff7f0e #2ca02c #9467bd #8c564b #e377c2 #17becf #bcbd22 #7f7f7f"
kcol(i) = word(kcolors, (i - 1) % 10 + 1)
sel(f, k) = (strcol('format') eq f && strcol('kernel_key') eq k)

stats main using (strcol('family') eq 'flash' ? column('Bc') : NaN) nooutput
b_lo = STATS_min
b_hi = STATS_max
stats main using (strcol('family') eq 'flash' ? column('ratio_to_standard') : NaN) nooutput
r_lo = STATS_min < 0.5 ? STATS_min : 0.5
r_hi = STATS_max > 12 ? STATS_max : 12
stats main using 'L' nooutput
L_lo = STATS_min
L_hi = STATS_max
stats main using 'relerr_round' nooutput
y_lo = STATS_min
y_hi = STATS_max
if (has_ctl) {
    stats ctl using 'relerr_round' nooutput
    y_lo = STATS_min < y_lo ? STATS_min : y_lo
    y_hi = STATS_max > y_hi ? STATS_max : y_hi
}
set logscale x 2
set logscale y
set format y '10^{%L}'
set xrange [L_lo / 1.4 : L_hi * 1.4]
set yrange [y_lo / 2 : y_hi * 2]
set xlabel 'sequence length L (keys; log scale)'
set ylabel 'output relative error (log scale)'
# two panels a row, the key in the cell after the last panel
cols = 2
rows = (nf + 2) / 2
EM_L = 0.10
EM_R = 0.98
EM_B = 0.07
EM_T = 0.86
key_x = EM_L + ((nf % 2) + 0.5) * (EM_R - EM_L) / 2
key_y = EM_T - (rows - 0.5) * (EM_T - EM_B) / rows
#@ attention_drift_error alt: Attention output error against sequence length per kernel and format
#@ attention_drift_error look: standard attention (black) above flash and split-KV in bf16 and fp16
#@ attention_drift_error caption: Flash and split-KV curves coincide (wide under thin).
do for [t = 1:2] {
    eval out(t, 'attention_drift_error', 1350, (330 * rows + 150) * 3 / 2)
    set multiplot layout rows, cols margins EM_L, EM_R, EM_B, EM_T spacing 0.12, 0.12 \
        title "Attention output error per kernel, against the exact attention of the same rounded inputs (MPFR)\n(fp32 accumulation and softmax, P rounded to the format, output kept in fp32; y range shared)" font ',12'
    do for [f = 1:nf] {
        set title word(fmts, f).' inputs' font ',11'
        if (f == nf) { set key at screen key_x, key_y center center box title 'kernel (wide under thin)' } else { unset key }
        # flash and split-KV curves nearly coincide: drawn from widest (first) to thinnest, so
        # each stays visible as a band around the next
        plot for [k = 1:nk] main using 'L':(sel(word(fmts, f), word(kerns, k)) ? column('relerr_round') : NaN) \
             with linespoints lc rgb kcol(k) pt 7 ps 0.8 lw (k == 1 ? 2 : 1 + 1.2 * (nk - k)) title word(kerns, k), \
             for [c = 1:has_ctl] ctl using 'L':(strcol('format') eq word(fmts, f) ? column('relerr_round') : NaN) \
             with linespoints lc rgb '#000000' dt 2 pt 6 ps 1.1 lw 2 title 'control: fp32 scores'
    }
    unset multiplot
}

# flash / standard against Bc
fsel(f, L) = (strcol('format') eq f && strcol('family') eq 'flash' && column('L') == L)
set xrange [b_lo / 1.4 : b_hi * 1.4]
set yrange [r_lo / 1.5 : r_hi * 1.5]
set format y '%g'
set xlabel 'flash key tile Bc (log scale)'
set ylabel 'flash error / standard error (log scale)'
unset key
lpt(i) = i == 1 ? 4 : i == 2 ? 6 : i == 3 ? 8 : i == 4 ? 12 : 7
#@ attention_drift_ratio alt: Flash over standard attention error against the flash tile
#@ attention_drift_ratio look: points below the dotted line: flash more accurate
#@ attention_drift_ratio caption: Dashed: the ratio Golden et al. (2024) report.
do for [t = 1:2] {
    eval out(t, 'attention_drift_ratio', 1200, 900)
    # the title spans the canvas, not only the plot left of the key
    set title offset screen 0.1, 0
    set title "Flash / standard output error, both against the exact attention of the rounded inputs\ncolour = format, point = L; 1 = equally accurate (dotted)\nGolden et al. (2024): about 10x in a bf16 training forward pass (dashed)" font ',12'
    set key outside right center box title ''
    plot 10 with lines dt 2 lc rgb '#888888' lw 1.5 title 'Golden et al.: 10x', \
         1 with lines dt 3 lc rgb '#444444' lw 1.5 title 'equal', \
         for [f = 1:nf] for [l = 1:nl] main using 'Bc':(fsel(word(fmts, f), int(word(Ls, l))) ? column('ratio_to_standard') : NaN) \
             with points lc rgb fmt_color(word(fmts, f)) pt lpt(l) ps 1.4 lw 1.5 title word(fmts, f).', L = '.word(Ls, l)
}
set output
