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
cf_color(c) = c eq 'fp32' ? '#1f77b4' : c eq 'bf16' ? '#d62728' : c eq 'fp16' ? '#2ca02c' : '#9467bd'

#@ layer_drift alt: Hidden-state relative error against the exact forward pass after every sub-block, per number configuration and model
#@ layer_drift look: the growth of each line with depth, and LayerCast lying on bf16
#@ layer_drift caption: Each configuration starts near its format's unit roundoff. LayerCast lies on bf16 (drawn wide under it): its bf16 weights are another model than the fp32 reference.
do for [term = 1:2] {
    eval out(term, 'layer_drift', 1300, 520)
    set multiplot layout 1, 2 title 'Hidden-state error against the exact forward pass, sub-block by sub-block'
    set xlabel 'depth (4 x layer + sub-block: attn-norm, attn, mlp-norm, mlp; last = final norm)'
    set ylabel 'mean ||h - h_{exact}|| / ||h_{exact}|| (log scale)'
    set logscale y
    set format y '10^{%L}'
    set key bottom right box opaque
    do for [m in 'stories260K synthetic'] {
        set title m
        plot for [c in 'fp32 bf16 fp16 layercast'] f using (column('depth') * is_mc(m, c)):(column('rel_err_mean') * is_mc(m, c)) with linespoints pt 7 ps 0.6 lc rgb cf_color(c) title c
    }
    unset multiplot
}
