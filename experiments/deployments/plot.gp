# experiments/deployments/plot.gp — plot of the deployments experiment (main.c beside it).
#
#   gnuplot -e "datadir='data'; outdir='plots'" experiments/deployments/plot.gp   (./lab plot deployments)
#
# Writes outdir/deployments.{png,svg}: per pair of deployments (one knob changed), ranked, the
# share of prompts whose greedy text parted, with its Wilson 95 % interval over prompts.

load 'plots/common.gp'

p = datadir.'/deployments_pairs.csv'
stats p using (column('prompts')) nooutput
NP = STATS_records

#@ deployments alt: Share of prompts whose greedy text parts, per changed knob of a serving deployment, with Wilson intervals
#@ deployments look: which knobs' intervals stay at zero and which reach well above it
#@ deployments caption: One point per pair of deployments differing in one knob; Wilson 95 % bars over prompts.
#@ deployments few: Fewer than three pairs of deployments ran: the table gives their rates.
if (NP >= 3) {
    do for [term = 1:2] {
        eval out(term, 'deployments', 1100, 560)
        set title 'SmolLM2-135M, greedy text: how often one changed knob parts it'
        set ylabel 'prompts whose text parts'
        set yrange [0:105]
        set xrange [-0.6:NP - 0.4]
        set format y '%.0f%%'
        set xtics rotate by -30 left noenhanced
        set bmargin 9
        set grid ytics
        set key off
        plot p using 0:(100*column('rate')):(100*column('wilson_lo')):(100*column('wilson_hi')):xtic(strcol('id')) \
               with yerrorbars pt 7 ps 1.4 lw 2 lc rgb '#d62728'
    }
}
