# experiments/argmax_flip_mitigations/plot.gp — argmax_flip_mitigations draws no figure: its
# result is one table of flip rates and costs (data/argmax_flip_mitigations.md), which the
# report links. Kept so that ./lab plot argmax_flip_mitigations and the report find a script.
#
#   gnuplot -e "datadir='data'; outdir='plots'" experiments/argmax_flip_mitigations/plot.gp
