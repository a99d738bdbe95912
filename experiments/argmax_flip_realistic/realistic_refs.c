/* realistic_refs.c — the realistic rows of a finished sweep against both references
 * (argmax_realistic.h). */
#include "argmax_realistic.h"
#include "argmax_run.h"
#include "drift.h"

/* Realistic rows against both references (argmax_realistic.h). A kernel's partner is the kernel with the
 * same accumulation and logits kept in the accumulator; the exact head's "accumulation" is
 * exact, so all its flips are output rounding. */
void drift_afr_two_references(drift_aflab_t *L)
{
    L->fp32_index = -1;
    for (int fi = 0; fi < L->nformats; fi++)
        if (L->cell[0][fi].kernels.f == DRIFT_FP32) L->fp32_index = fi;
    for (int ki = 0; ki < L->nKs; ki++)
        for (int fi = 0; fi < L->nformats; fi++) {
            const drift_kset_t *ks = &L->cell[ki][fi].kernels;
            for (int c = 0; c < ks->n; c++) {
                const drift_recipe_t *r = &ks->k[c].c;
                L->cell[ki][fi].partner[c] = -1;
                if (r->exact) continue;
                for (int p = 0; p < ks->n; p++)
                    if (!ks->k[p].c.exact && drift_recipe_same_acc(&ks->k[p].c, r) &&
                        ks->k[p].c.out == ks->k[p].c.acc.acc)
                        L->cell[ki][fi].partner[c] = p;
            }
            L->cell[ki][fi].input_rounding_flips = -1;
            for (int c = 0; c < ks->n; c++)
                L->cell[ki][fi].flips_vs_unrounded[c] = L->cell[ki][fi].accumulation_flips[c] =
                    L->cell[ki][fi].output_rounding_changes[c] = -1;
            if (L->rows <= 0 || L->fp32_index < 0) continue;
            const drift_flipset_t *st = &L->cell[ki][fi].realistic, *su = &L->cell[ki][L->fp32_index].realistic;
            long nin = 0;
            for (long r = 0; r < L->rows; r++) nin += st->t[r].top1 != su->t[r].top1 && !su->t[r].tie;
            L->cell[ki][fi].input_rounding_flips = nin;
            for (int c = 0; c < ks->n; c++) {
                if (!L->cell[ki][fi].realistic_ok[c]) continue;
                int p = ks->k[c].c.exact ? -2 : L->cell[ki][fi].partner[c];
                if (p == -1 || (p >= 0 && !L->cell[ki][fi].realistic_ok[p])) continue;
                long tot = 0, acc = 0, out = 0;
                for (long r = 0; r < L->rows; r++) {
                    size_t pc = st->pick[(size_t)r * st->ncfg + c];
                    tot += pc != su->t[r].top1 && !su->t[r].tie;
                    if (p >= 0) {
                        acc += st->flip[(size_t)r * st->ncfg + p];
                        out += pc != st->pick[(size_t)r * st->ncfg + p];
                    } else {
                        out += st->flip[(size_t)r * st->ncfg + c];
                    }
                }
                L->cell[ki][fi].flips_vs_unrounded[c] = tot, L->cell[ki][fi].accumulation_flips[c] = acc,
                L->cell[ki][fi].output_rounding_changes[c] = out;
            }
        }
}
