# experiments/gpu_generations/plot.gp — plots of the gpu_generations experiment (main.c beside it).
#
#   gnuplot -e "datadir='data'; outdir='plots'" experiments/gpu_generations/plot.gp      (./lab plot gpu_generations)
#
# Writes outdir/gpu_generations_ulps.{png,svg}: how far apart two generations' fp32 logits are,
# in fp32 steps (ulps), as the fraction of logits per distance bin, one curve per pair (adjacent
# generations solid, each against the exact logit dashed), one panel per input format, a pair
# whose fractions another's equal drawn as a wide light band under it, named in the key; and
# outdir/gpu_generations_closecalls.{png,svg}: how often two generations pick different tokens
# when the exact top-2 gap is planted at a given fraction of the logit scale s, all seeds
# pooled, Wilson 95% bars, a pair whose rates another's match drawn wide under it.

load 'plots/common.gp'

hist = datadir.'/gpu_generations_hist.csv'
close = datadir.'/gpu_generations_closecalls_pooled.csv'
fmts = system("awk -F, '!/^#/ && NR > 1 && $1 != \"format\" && !s[$1]++ {print $1}' ".hist." | tr '\\n' ' '")
nf = words(fmts)
pcolors = "#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b #e377c2 #17becf #7f7f7f #bcbd22"

# the pairs shown (adjacent generations and each against exact), in file order, per format
pairs_of(f) = system(sprintf("awk -F, '!/^#/ && $1 == \"%s\" && $3 == 1 && !s[$2]++ {print $2}' %s | tr '\\n' ' '", f, hist))
is_exact(p) = strstrt(p, 'exact') > 0
dash_h(p) = is_exact(p) ? 2 : 1
# one colour per pair in every panel (the pairs of the last format hold all others: V100 has fp16 only)
ALL = system(sprintf("awk -F, '!/^#/ && $3 == 1 && !s[$2]++ {print $2}' %s | tr '\\n' ' '", hist))
pcolor(p) = word(pcolors, (sum [k = 1:words(ALL)] (word(ALL, k) eq p ? k : 0)) % 10 + 1)
selh(f, p) = (strcol('format') eq f && strcol('pair') eq p) ? 1 : NaN

# "a-b" as "a vs b" in the key
vs(p) = p[1:strstrt(p, '-') - 1].' vs '.p[strstrt(p, '-') + 1:]
hlight(c) = '#80'.c[2:]   # half transparent: the thin line on top shows through
hdt(u, p) = u eq '' ? dash_h(p) : 1   # a band solid: wide dashes would not line up with thin ones
# HUNDER: per format, "pair=later pair" for each shown pair whose fraction equals a later one's
# in every bin; hunder_of(f, p) is the later pair, '' when none
HUNDER = system('awk -F, ''!/^#/ && $1 != "format" && $3 == 1 { k = $1 SUBSEP $2; if (!(k in seen)) { seen[k] = 1; n[$1]++; ord[$1 SUBSEP n[$1]] = $2 } v[k] = v[k] " " $4 ":" $7 }'. \
    ' END { for (f in n) for (i = 1; i <= n[f]; i++) { p = ord[f SUBSEP i]; for (j = i + 1; j <= n[f]; j++) { q = ord[f SUBSEP j];'. \
    ' if (v[f SUBSEP p] == v[f SUBSEP q]) { printf "%s|%s=%s ", f, p, q; break } } } }'' '.hist)
hkey(f, p) = ' '.f.'|'.p.'='
hunder_of(f, p) = strstrt(' '.HUNDER, hkey(f, p)) == 0 ? '' : \
    word((' '.HUNDER)[strstrt(' '.HUNDER, hkey(f, p)) + strlen(hkey(f, p)):], 1)

#@ gpu_generations_ulps alt: Distribution of fp32-ulp distances between GPU generations' logits
#@ gpu_generations_ulps look: adjacent generations (solid) against the exact logit (dashed)
#@ gpu_generations_ulps caption: h100 and b200 vs exact coincide (wide under thin).
do for [t = 1:2] {
    FW = 750 * (nf > 2 ? nf : 2)
    eval out(t, 'gpu_generations_ulps', FW, FW * 0.9)
    # the panels side by side, the key below them in two columns (off the data)
    set multiplot layout 1,nf margins 0.08, 0.98, 0.27, 0.86 spacing 0.05 title "The same LM head on different GPU generations: distance between two fp32 logits\n(fraction of all logits, all seeds; solid: adjacent generations, dashed: against the exact logit;\na lone dot at 0 = 100%: bit-identical)" font ',12'
    do for [j = 1:nf] {
        f = word(fmts, j)
        P = pairs_of(f)
        set title f.' inputs, fp32 logits' font ',11'
        set logscale y 10
        set format y '10^{%L}'
        set yrange [1e-3:1.5]
        set xrange [-0.5:8.5]
        set xtics ("0" 0, "1" 1, "2" 2, "3-4" 3, "5-8" 4, "9-16" 5, "17-32" 6, "33-64" 7, ">64" 8) font ',10'
        set xlabel 'distance in fp32 ulps (steps between two values)'
        set ylabel (j == 1 ? 'fraction of logits'.LOGY : '')
        if (j == nf) { set key at screen 0.07, 0.01 left bottom box Left reverse maxrows 5 width -6 spacing 1.1 title 'logits compared' } else { unset key }
        # generations that compute alike (H100 and B200) give identical curves against exact:
        # a pair whose fractions a later pair's equal in every bin (HUNDER) is drawn as a wide,
        # light band under that one, and its key entry names the line on top
        array HU[words(P)]
        do for [i = 1:words(P)] { HU[i] = hunder_of(f, word(P, i)) }
        plot for [i = 1:words(P)] hist using 'bin':(selh(f, word(P, i)) * (column('fraction') > 0 ? column('fraction') : NaN)) \
            with linespoints lw (HU[i] eq '' ? 2 : 8) pt 7 ps (HU[i] eq '' ? 0.6 : 1.5) dt hdt(HU[i], word(P, i)) \
            lc rgb (HU[i] eq '' ? pcolor(word(P, i)) : hlight(pcolor(word(P, i)))) \
            title (j == nf ? vs(word(P, i)).(HU[i] eq '' ? '' : ' (wide, under '.vs(HU[i]).')') : '')
    }
    unset multiplot
}

selc(f, a, b) = (strcol('format') eq f && strcol('a') eq a && strcol('b') eq b) ? 1 : NaN
cpairs_of(f) = system(sprintf("awk -F, '!/^#/ && $1 == \"%s\" && !s[$3\"|\"$4]++ {print $3\"|\"$4}' %s | tr '\\n' ' '", f, close))
pa(p) = p[1:strstrt(p, '|') - 1]
pb(p) = p[strstrt(p, '|') + 1:]
FLOOR = 3e-4
# the gaps' range, as log10 (gnuplot does not read "1e-06" from a string)
GMIN = 10**(system(sprintf("awk -F, '!/^#/ && $2 + 0 > 0 {printf \"%%.6f\\n\", log($2) / log(10)}' %s | sort -g | head -1", close)) + 0)
GMAX = 10**(system(sprintf("awk -F, '!/^#/ && $2 + 0 > 0 {printf \"%%.6f\\n\", log($2) / log(10)}' %s | sort -g | tail -1", close)) + 0)
# Generations that compute alike (H100 and B200) disagree with the exact argmax on the same
# planted pairs, so their two series are one: the one drawn first would vanish under the
# other. under_of(p) names the first later pair whose rate matches p's at every gap (within
# 3 %, about a pixel on this axis) in some format; such a pair is drawn as a wide, light
# stroke under it and its key entry says so.
UNDERS = system('awk -F, ''!/^#/ && $1 != "format" { k = $3 "|" $4; if (!(($1 SUBSEP k) in seen)) { seen[$1 SUBSEP k] = 1; n[$1]++; ord[$1 SUBSEP n[$1]] = k } r[$1 SUBSEP k SUBSEP $2] = $8 + 0; g[$2] = 1 }'. \
    ' END { for (f in n) for (i = 1; i <= n[f]; i++) { p = ord[f SUBSEP i]; if (p in done) continue;'. \
    ' for (j = i + 1; j <= n[f]; j++) { q = ord[f SUBSEP j]; same = 1;'. \
    ' for (x in g) { if (!((f SUBSEP p SUBSEP x) in r) || !((f SUBSEP q SUBSEP x) in r)) continue;'. \
    ' u = r[f SUBSEP p SUBSEP x]; v = r[f SUBSEP q SUBSEP x]; d = u > v ? u - v : v - u; m = u > v ? u : v; if (d > 0.03 * m) same = 0 }'. \
    ' if (same) { printf "%s=%s ", p, q; done[p] = 1; break } } } }'' '.close)
under_of(p) = strstrt(' '.UNDERS, ' '.p.'=') == 0 ? '' : \
    (' '.UNDERS)[strstrt(' '.UNDERS, ' '.p.'=') + strlen(p) + 2:strstrt(' '.UNDERS, ' '.p.'=') + strlen(p) + 1 + strstrt((' '.UNDERS)[strstrt(' '.UNDERS, ' '.p.'=') + strlen(p) + 2:], ' ') - 1]
light(c) = '#80'.c[2:]   # the colour half transparent: a band the thin line shows through
dt_under(u, p) = u eq '' ? dash_h(p) : 1   # the band solid: wide dashes would not line up with thin ones
#@ gpu_generations_closecalls alt: Disagreement between GPU generations against a planted top-2 gap
#@ gpu_generations_closecalls look: the fall of disagreement as the gap grows
#@ gpu_generations_closecalls caption: Floor markers: no disagreement seen.
do for [t = 1:2] {
    FW = 750 * (nf > 2 ? nf : 2)
    eval out(t, 'gpu_generations_closecalls', FW, FW * 0.9)
    # the panels side by side, the key below them in two columns (off the data)
    set multiplot layout 1,nf margins 0.08, 0.98, 0.27, 0.86 spacing 0.05 title "Close calls: how often two generations (or one and the exact argmax) pick different tokens\n(planted exact top-2 gap in units of the logit scale s; all seeds; bars: Wilson 95%;\nopen markers on the floor: none seen)" font ',12'
    do for [j = 1:nf] {
        f = word(fmts, j)
        P = cpairs_of(f)
        array UNDER[words(P)]
        do for [i = 1:words(P)] { UNDER[i] = under_of(word(P, i)) }
        set title f.' inputs, fp32 logits' font ',11'
        set logscale xy 10
        set format x '10^{%L}'
        set format y '10^{%L}'
        set xtics auto font ''
        set xrange [GMIN / 2:GMAX * 2]
        set yrange [FLOOR / 1.5:1]
        set xlabel 'exact top-2 gap / s'.LOGX
        set ylabel (j == 1 ? 'fraction of planted pairs whose argmax differs'.LOGY : '')
        if (j == nf) { set key at screen 0.07, 0.01 left bottom box Left reverse maxrows 5 width -6 spacing 1.1 title 'a vs b (wide under thin)' } else { unset key }
        plot for [i = 1:words(P)] close using 'gap_s':(selc(f, pa(word(P, i)), pb(word(P, i))) * (column('rate') > 0 ? column('rate') : NaN)):'lo95':'hi95' \
                 with yerrorlines lw (UNDER[i] eq '' ? 2 : 7) pt 7 ps (UNDER[i] eq '' ? 0.6 : 1.4) dt dt_under(UNDER[i], word(P, i)) \
                 lc rgb (UNDER[i] eq '' ? pcolor(pa(word(P, i)).'-'.pb(word(P, i))) : light(pcolor(pa(word(P, i)).'-'.pb(word(P, i))))) \
                 title (j == nf ? pa(word(P, i)).' vs '.pb(word(P, i)).(UNDER[i] eq '' ? '' : ' (wide, under '.pa(UNDER[i]).' vs '.pb(UNDER[i]).')') : ''), \
             for [i = 1:words(P)] close using 'gap_s':(selc(f, pa(word(P, i)), pb(word(P, i))) * (column('rate') > 0 ? NaN : FLOOR * 1.2**(i - 1))) \
                 with points pt 6 ps 0.9 lc rgb pcolor(pa(word(P, i)).'-'.pb(word(P, i))) notitle
    }
    unset multiplot
}
