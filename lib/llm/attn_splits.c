/* attn_splits.c — how many key splits FlashAttention-2 uses for a decode step (its
 * num_splits_heuristic), the split-KV attention's plan in the decoder (model.h). */
#include "model.h"

#include <math.h>

/* flash_api.cpp, num_splits_heuristic: blocks = batch x heads x query blocks. */
int drift_attn_auto_splits(long blocks, int sms, long key_tiles)
{
    if (blocks < 1 || sms < 1 || key_tiles < 1) return 1;
    if ((double)blocks >= 0.8 * (double)sms) return 1;
    long maxs = 128;
    if (sms < maxs) maxs = sms;
    if (key_tiles < maxs) maxs = key_tiles;
    double eff[129], best = 0;
#define ELIGIBLE(s) ((s) == 1 || (key_tiles + (s)-1) / (s) != (key_tiles + (s)-2) / ((s)-1))
    for (long s = 1; s <= maxs; s++) {
        eff[s] = 0;
        if (!ELIGIBLE(s)) continue;
        double waves = (double)(blocks * s) / (double)sms;
        eff[s] = waves / ceil(waves);
        if (eff[s] > best) best = eff[s];
    }
    for (long s = 1; s <= maxs; s++)
        if (ELIGIBLE(s) && eff[s] >= 0.85 * best) return (int)s;
#undef ELIGIBLE
    return 1;
}
