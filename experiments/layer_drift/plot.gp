# experiments/layer_drift/plot.gp — plots of the layer_drift experiment (main.c beside it).
#
#   gnuplot -e "datadir='data'; outdir='plots'" experiments/layer_drift/plot.gp   (./lab plot layer_drift)
#
# Writes outdir/layer_drift.{png,svg}: the mean relative error of the hidden state against the
# exact forward pass (log scale) against the layers done, one line per configuration: the line
# runs through every sub-block (a quarter layer each: attn-norm, attn, mlp-norm, mlp; the last
# point is the final norm), the points mark the residual stream after each layer, the values
# the fits of layer_drift_fit.csv are made on. Left the checkpoint's model (SmolLM2-135M-Instruct
# by default, stories260K in the quick profile), right the synthetic model; each key gives the
# configuration's fitted power p (rel_err ~ layer^p).

load 'plots/common.gp'

f = datadir.'/layer_drift.csv'
ff = datadir.'/layer_drift_fit.csv'
# the models as the CSV names them: the checkpoint's first, then the synthetic one
real = system("awk -F, '!/^#/ && $1 != \"model\" && $1 != \"synthetic\" { print $1; exit }' ".f)
layers(m) = system(sprintf("awk -F, '!/^#/ && $1 == \"%s\" { print $2; exit }' %s", m, f))
power(m, c) = system(sprintf("awk -F, '!/^#/ && $1 == \"%s\" && $3 == \"%s\" { printf \"%%.2f\", $8; exit }' %s 2>/dev/null", m, c, ff))
is_mc(m, c) = (strcol('model') eq m && strcol('config') eq c) ? 1 : NaN
is_layer(m, c) = (strcol('block') eq 'mlp') ? is_mc(m, c) : NaN
# layers done: the residual stream after layer l (numbered from 1) sits at l, its sub-blocks at quarters before it
done = 'column("depth") / 4.0 + 0.25'
cf_color(c) = c eq 'fp32' ? '#1f77b4' : c eq 'bf16' ? '#d62728' : c eq 'fp16' ? '#2ca02c' : '#9467bd'
# LayerCast's line may lie on bf16's (stories260K: it does): drawn first and wider, bf16's stays visible on it
cf_lw(c) = c eq 'layercast' ? 4 : 1.5
cf_title(m, c) = (p = power(m, c), (p eq '' ? c : sprintf('%s (fit l^{%s})', c, p)).(c eq 'layercast' ? ', wide line' : ''))

#@ layer_drift alt: Hidden-state error against layers done, per configuration and model
#@ layer_drift look: each line's growth with depth
#@ layer_drift caption: Points mark each layer's output.
do for [term = 1:2] {
    eval out(term, 'layer_drift', 1350, 1500)
    # the models one above the other, each with its key right of it, off the data
    set multiplot layout 2, 1 margins 0.10, 0.64, 0.07, 0.90 spacing 0.12 title "Hidden-state error against the exact forward pass (fp64, correctly rounded dots), sub-block by sub-block\n(the sub-blocks of a layer at its quarters: attn-norm, attn, mlp-norm, mlp)"
    set xlabel 'layers done (last point: final norm)'
    set ylabel 'mean ||h - h_{exact}|| / ||h_{exact}||'.LOGY
    set logscale y
    set format y '10^{%L}'
    set yrange [*:*]
    panel = 0
    do for [m in real.' synthetic'] {
        L = int(layers(m))
        set title sprintf('%s (%d layers)', m, L)
        panel = panel + 1
        set key at screen 0.655, (panel == 1 ? 0.725 : 0.245) left center box Left reverse width -9 height 0.5 title "configuration\n(fitted power p)"
        set xrange [0:L + 0.5]
        plot for [c in 'layercast bf16 fp16 fp32'] f using (@done * is_mc(m, c)):(column('rel_err_mean') * is_mc(m, c)) with lines lw cf_lw(c) lc rgb cf_color(c) notitle, \
             for [c in 'bf16 layercast fp16 fp32'] f using (@done * is_layer(m, c)):(column('rel_err_mean') * is_layer(m, c)) with points pt 7 ps 0.6 lc rgb cf_color(c) title cf_title(m, c)
    }
    unset multiplot
}
