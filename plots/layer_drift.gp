# layer_drift.gp — plots of the layer_drift experiment (experiments/layer_drift.c).
#
#   gnuplot -e "datadir='data'; outdir='plots'" plots/layer_drift.gp   (./lab plot layer_drift)
#
# Writes outdir/layer_drift.{png,svg}: the mean relative error of the hidden state against the
# exact forward pass, after every sub-block (depth = 4 layer + sub-block; the last point is the
# final norm), one line per configuration; left stories260K, right the synthetic model.

load 'plots/common.gp'

f = datadir.'/layer_drift.csv'
is_mc(m, c) = (strcol('model') eq m && strcol('config') eq c) ? 1 : NaN
cf_color(c) = c eq 'fp32' ? '#1f77b4' : c eq 'bf16' ? '#d62728' : c eq 'fp16' ? '#2ca02c' : '#c5b0d5'
# LayerCast's line lies on bf16's: drawn first, wide and light, so bf16's thin line stays on top
cf_lw(c) = c eq 'layercast' ? 7 : 1.5
cf_title(c) = c eq 'layercast' ? 'layercast (wide, under bf16)' : c

#@ layer_drift alt: Hidden-state error against depth, per number configuration and model
#@ layer_drift look: each line's growth with depth
#@ layer_drift caption: LayerCast lies on bf16 (wide under it).
do for [term = 1:2] {
    eval out(term, 'layer_drift', 1500, 560)
    set multiplot layout 1, 2 margins 0.07, 0.76, 0.14, 0.88 spacing 0.07 title 'Hidden-state error against the exact forward pass, sub-block by sub-block'
    set xlabel 'depth (4 x layer + sub-block: attn-norm, attn, mlp-norm, mlp; last = final norm)'
    set ylabel 'mean ||h - h_{exact}|| / ||h_{exact}|| (log scale)'
    set logscale y
    set format y '10^{%L}'
    do for [m in 'stories260K synthetic'] {
        set title m
        if (m eq 'synthetic') { set key at screen 0.995, 0.5 right center box title 'configuration' } else { unset key }
        plot for [c in 'layercast fp32 bf16 fp16'] f using (column('depth') * is_mc(m, c)):(column('rel_err_mean') * is_mc(m, c)) with linespoints pt 7 ps (c eq 'layercast' ? 0 : 0.6) lw cf_lw(c) lc rgb cf_color(c) title cf_title(c)
    }
    unset multiplot
}
