# experiments/kv_cache_chunked/plot.gp — kv_cache_chunked draws no figure.
#
#   gnuplot -e "datadir='data'; outdir='plots'" experiments/kv_cache_chunked/plot.gp   (./lab plot kv_cache_chunked)
#
# Its result is a count per (storage, kernel, chunk) of rows that are not bit-identical, almost
# all 0 or all of them: the table in data/kv_cache_chunked.md says it, a figure would not add
# to it. It declares no figure, so the report shows none.
