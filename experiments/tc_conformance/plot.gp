# experiments/tc_conformance/plot.gp — plot of the tc_conformance experiment (main.c beside it).
#
#   gnuplot -e "datadir='data'; outdir='plots'" experiments/tc_conformance/plot.gp      (./lab plot tc_conformance)
#
# Writes outdir/tc_conformance.{png,svg}: one cell per (GPU, input -> output) configuration of
# the measured data, labelled "mismatches / samples": green when the model reproduces every
# sample bit for bit, grey where the lab has no model (none since fp8 -> fp16 on H100, H200,
# B200 was modelled), red
# for a mismatch in a modelled configuration; blank where the data hold no measurement.

load 'plots/common.gp'

conf = datadir.'/tc_conformance.csv'
GPUS = "V100 A100 A2 Ada L40S H100 H200 B200"
CFGS = "fp16>fp32 fp16>fp16 bf16>fp32 tf32>fp32 fp8e4m3>fp32 fp8e5m2>fp32 fp8e4m3>fp16 fp8e5m2>fp16"
CLAB = "fp16→fp32 fp16→fp16 bf16→fp32 tf32→fp32 E4M3→fp32 E5M2→fp32 E4M3→fp16 E5M2→fp16"
idx(list, s) = sum [k = 1:words(list)] (word(list, k) eq s ? k : 0)
gy(s) = words(GPUS) + 1 - idx(GPUS, s)              # V100 at the top
cx(i, o) = idx(CFGS, i.'>'.o)
cell_color(st) = st eq 'bit-exact' ? 0x4daf4a : st eq 'not-modelled' ? 0xbbbbbb : 0xe41a1c
cell_text(m, n, st) = st eq 'not-modelled' ? sprintf("%d / %d\nnot modelled", m, n) : sprintf("%d / %d", m, n)

set xrange [0.5:words(CFGS) + 0.5]
set yrange [0.5:words(GPUS) + 0.5]
set xtics () scale 0 font ',10'
set ytics () scale 0
do for [k = 1:words(CFGS)] { set xtics add (word(CLAB, k) k) }
do for [k = 1:words(GPUS)] { set ytics add (word(GPUS, k) words(GPUS) + 1 - k) }
set grid noxtics noytics
unset key
set xlabel 'input → output format'
set ylabel 'GPU (measured by Khattak and Mikaitis)'

#@ tc_conformance alt: Grid of GPUs by input and output format, coloured by model mismatches
#@ tc_conformance look: every cell's colour: green is bit for bit
#@ tc_conformance caption: Red would mark a mismatch.
do for [t = 1:2] {
    eval out(t, 'tc_conformance', 1300, 900)
    set title "The lab's tensor-core models against the measured GPU outputs: mismatches / samples (bitwise)\ngreen: every sample bit for bit; grey: no model; red: mismatch; blank: not measured" font ',12'
    plot conf using (cx(strcol('input'), strcol('output'))):(gy(strcol('gpu'))):(0.48):(0.45):(cell_color(strcol('status'))) \
             with boxxyerror fs solid 0.55 noborder lc rgb variable, \
         conf using (cx(strcol('input'), strcol('output'))):(gy(strcol('gpu'))):(cell_text(column('mismatches'), column('samples'), strcol('status'))) \
             with labels font ',10'
}
