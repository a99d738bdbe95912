# common.gp — the one style every experiments/<exp>/plot.gp loads (load 'plots/common.gp').
#
# Gives: datadir/outdir defaults; the CSV reader settings; one colour per number format
# (the same in every plot, so "red" is fp16 everywhere); a line width and point type per
# format chosen so that formats whose curves coincide stay visible (tf32 is drawn wide
# under fp16, fp8e4m3 wide under fp8e5m2: where they agree you see a band with a line
# inside); and the png + svg terminal pair:
#
#   do for [t = 1:2] { eval out(t, 'name', 1200, 700) ; plot ... }
#
# writes outdir/name.png (t = 1) and outdir/name.svg (t = 2).

if (!exists("datadir")) datadir = 'data'
if (!exists("outdir")) outdir = 'plots'

set datafile separator ','
set datafile commentschars '#'
set encoding utf8
set grid xtics ytics lc rgb '#dddddd'

# Every figure is read at the report's column width, about 900 px (GitHub): a wider PNG is shown
# shrunk to it. So text, lines and points grow with the canvas beyond 900 px, and shown at that
# width a figure's 11 pt text reads at 11 pt and a line of width 2 is 2 px wide. A figure is
# thus designed as if 900 px wide and h * 900 / w high. The SVG is drawn at that design size
# (it scales to any width, and the svg terminal cannot scale its points).
READ_W = 900.0
out_scale(w) = w > READ_W ? w / READ_W : 1.0
out(t, name, w, h) = (t == 1) \
    ? sprintf("set terminal pngcairo size %d,%d enhanced font 'Sans,11' fontscale %.4f linewidth %.4f pointscale %.4f; set output '%s/%s.png'", \
              w, h, out_scale(w), out_scale(w), out_scale(w), outdir, name) \
    : sprintf("set terminal svg size %d,%d enhanced font 'Sans,11' dynamic; set output '%s/%s.svg'", \
              int(w / out_scale(w) + 0.5), int(h / out_scale(w) + 0.5), outdir, name)

# The formats, in drawing order: wide strokes first so the thin ones stay on top.
FORMATS = "fp64 fp32 tf32 fp8e4m3 bf16 fp16 fp8e5m2"
fmt_color(f) = f eq 'fp64' ? '#000000' : f eq 'fp32' ? '#1f77b4' : f eq 'tf32' ? '#17becf' : \
               f eq 'fp16' ? '#d62728' : f eq 'bf16' ? '#ff7f0e' : f eq 'fp8e4m3' ? '#2ca02c' : \
               f eq 'fp8e5m2' ? '#9467bd' : '#7f7f7f'
# a light version of the colour, for wide under-strokes and filled bands
fmt_light(f) = f eq 'tf32' ? '#9fe3ec' : f eq 'fp8e4m3' ? '#a6dba0' : fmt_color(f)
fmt_lw(f) = (f eq 'tf32' || f eq 'fp8e4m3') ? 6 : 2
fmt_pt(f) = (f eq 'tf32' || f eq 'fp8e4m3') ? 6 : 7        # open circle under filled dot
fmt_ps(f) = (f eq 'tf32' || f eq 'fp8e4m3') ? 0.9 : 0.35

# Rows of one format: everything else becomes NaN, which gnuplot skips.
is_fmt(f) = strcol('format') eq f ? 1 : NaN

# Log axes say so on the axis itself.
LOGX = " (log scale)"
LOGY = " (log scale)"
