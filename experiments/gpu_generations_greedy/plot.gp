# experiments/gpu_generations_greedy/plot.gp — the plot of the gpu_generations_greedy experiment (main.c beside it).
#
#   gnuplot -e "datadir='data'; outdir='plots'" experiments/gpu_generations_greedy/plot.gp      (./lab plot gpu_generations_greedy)
#
# Writes outdir/gpu_generations_greedy.{png,svg}: every point where two generations' greedy
# texts part, the exact top-1/top-2 gap there against the generations' deviation from the
# exact logits at that step, with the line gap = 2 x deviation under which every flip must
# lie (parting.h), coincident points drawn as rings; not drawn from fewer than three parting
# events (the report prints the declared sentence instead).

load 'plots/common.gp'

pcolors = "#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b #e377c2 #17becf #7f7f7f #bcbd22"
greedy = datadir.'/gpu_generations_greedy_partings.csv'
# partings as events: one prompt parting at one step counts once however many pairs of
# generations it parts (a100, h100 and b200 all against mi300x is one deviation of mi300x)
NPART = system(sprintf("awk -F, '!/^#/ && $1 != \"seed\" { e[$1 \",\" $2 \",\" $5 \",\" $7] = 1 } END { print length(e) }' %s", greedy)) + 0
# both axes over the data's range (gap and deviation together), a factor 3 of room each side
LO = NPART ? system(sprintf("awk -F, '!/^#/ && $1 != \"seed\" {print $12; print $14}' %s | sort -g | head -1", greedy)) / 3 : 1e-3
HI = NPART ? system(sprintf("awk -F, '!/^#/ && $1 != \"seed\" {print $12; print $14}' %s | sort -g | tail -1", greedy)) * 3 : 1
# Pairs of generations often part at the same step of the same prompt with the same numbers
# (the deviation is the larger of the two generations', so pairs sharing one generation share
# it), and their points coincide: each point is drawn larger the more later-drawn points lie
# on it, a ring around the ones on top.
# The (format, a, b) series present, in file order, one colour each (pairs such as a100 vs
# mi300x are not among the other figures' pairs); a series that never parted has no key entry.
gseries = NPART ? system(sprintf("awk -F, '!/^#/ && $1 != \"seed\" && !s[$2\"|\"$3\"|\"$4]++ {print $2\"|\"$3\"|\"$4}' %s | tr '\\n' ' '", greedy)) : ''
gf(q) = q[1:strstrt(q, '|') - 1]
gab(q) = q[strstrt(q, '|') + 1:]
gpt(f) = f eq 'bf16' ? 7 : f eq 'fp16' ? 5 : 9
# the model the texts came from: the checkpoint's file name in the setup line, less its extension
GMODEL = system(sprintf("awk '/^# setup:/ { sub(/^# setup: [^;]*; /, \"\"); sub(/ [(]dim.*/, \"\"); n = split($0, a, \"/\"); sub(/[.].*/, \"\", a[n]); print a[n]; exit }' %s", greedy))
# column 1: deviation, 2: gap, 3: the series, 4: how many later rows share the point
gpoints = '< awk -F, ''!/^#/ && $1 != "seed" { n++; x[n] = $14; y[n] = $12; q[n] = $2 "|" $3 "|" $4 }'. \
    ' END { for (i = 1; i <= n; i++) { k = 0; for (j = i + 1; j <= n; j++) if (x[j] == x[i] && y[j] == y[i] && q[j] != q[i]) k++;'. \
    ' print x[i] "," y[i] "," q[i] "," k } }'' '.greedy
#@ gpu_generations_greedy alt: Exact top-2 gap against logit deviation where generations' texts part
#@ gpu_generations_greedy look: every point under the dashed line
#@ gpu_generations_greedy caption: Texts part only at near ties; MI300X is a model without hardware data.
#@ gpu_generations_greedy few: too few parting events to draw (events: {distinct gpu_generations_greedy_partings.csv seed/format/prompt/step}; pairs parted: {count gpu_generations_greedy_partings.csv}); see the table.
# fewer than three parting events: no figure (the report prints the declared sentence instead)
if (NPART >= 3) {
    do for [t = 1:2] {
        eval out(t, 'gpu_generations_greedy', 1000, 640)
        set title "Greedy texts part only at near ties: where two generations' completions first differ\n(".GMODEL.", every matmul on the generation's tensor-core model;\none point per pair of generations and prompt)" font ',12'
        unset multiplot
        set logscale xy 10
        set format x '10^{%L}'
        set format y '10^{%L}'
        set xtics auto
        set xrange [LO:HI]
        set yrange [LO:HI]
        set key default
        set xlabel "deviation from the exact logits there (largest over the vocabulary, either generation)".LOGX
        set ylabel "exact top-1/top-2 logit gap there".LOGY
        set key top left box font ',10'
        set key title 'inputs, a vs b (coincident: larger under smaller)'
        plot for [i = 1:words(gseries)] gpoints using (strcol(3) eq word(gseries, i) ? column(1) : NaN):2:(0.9 + 0.9 * column(4)) \
                 with points pt gpt(gf(word(gseries, i))) ps variable \
                 lc rgb word(pcolors, (i - 1) % 10 + 1) \
                 title gf(word(gseries, i)).', '.gab(word(gseries, i))[1:strstrt(gab(word(gseries, i)), '|') - 1].' vs '.gab(word(gseries, i))[strstrt(gab(word(gseries, i)), '|') + 1:], \
             2 * x with lines dt 2 lc rgb '#555555' title 'gap = 2 x deviation (a flip needs gap below it)'
        set key title ''
    }
}
