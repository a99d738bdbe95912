/* policy.c — the kernel-selection models of policy.h. */
#include "policy.h"
#include "cards.h"

#include <math.h>
#include <string.h>

#include "drift.h"

static const char *const POLICY_NAMES[DRIFT_NPOLICIES] = {"vendor-like", "batch-invariant"};

const char *drift_policy_name(drift_policy_t p) { return (unsigned)p < DRIFT_NPOLICIES ? POLICY_NAMES[p] : "?"; }

int drift_policy_parse(drift_policy_t *p, const char *name)
{
    if (!p || !name) return DRIFT_EINVAL;
    for (int i = 0; i < DRIFT_NPOLICIES; i++)
        if (strcmp(name, POLICY_NAMES[i]) == 0) {
            *p = (drift_policy_t)i;
            return DRIFT_OK;
        }
    return DRIFT_EINVAL;
}

/* The device is a card of cards.h: one table of SM counts for the whole lab. */
int drift_device_lookup(drift_device_t *d, const char *name)
{
    drift_card_t c;
    if (!d || !name || drift_card_parse(&c, name) != DRIFT_OK) return DRIFT_EINVAL;
    d->name = c.name;
    d->sms = c.sms;
    return DRIFT_OK;
}

static const int TILES[][2] = {{128, 128}, {128, 64}, {64, 128}, {64, 64}};
#define NTILES (sizeof TILES / sizeof TILES[0])
#define TILE_BK 32

static size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }

/* Step 1 of vendor-like: the tile for the shape; returns its tile count, *filled when the
 * tiles fill the device. */
static size_t pick_tile(size_t M, size_t N, int sms, int *bm, int *bn, int *filled)
{
    size_t best = 0, best_tiles = 0;
    *filled = 0;
    for (size_t t = 0; t < NTILES; t++) {
        size_t tiles = ceil_div(M ? M : 1, (size_t)TILES[t][0]) * ceil_div(N ? N : 1, (size_t)TILES[t][1]);
        if (tiles >= (size_t)sms) {
            best = t, best_tiles = tiles, *filled = 1;
            break;
        }
        if (tiles > best_tiles) best = t, best_tiles = tiles;
    }
    *bm = TILES[best][0], *bn = TILES[best][1];
    return best_tiles;
}

int drift_policy_choose(drift_gemm_kernel_t *k, drift_policy_t p, size_t M, size_t N, size_t K, int sms)
{
    return drift_policy_choose_slice(k, p, M, N, K, sms, DRIFT_POLICY_MIN_SLICE);
}

int drift_policy_choose_slice(
    drift_gemm_kernel_t *k, drift_policy_t p, size_t M, size_t N, size_t K, int sms, int min_slice)
{
    if (!k || sms < 1 || min_slice < 1 || (unsigned)p >= DRIFT_NPOLICIES) return DRIFT_EINVAL;
    memset(k, 0, sizeof *k);
    k->family = DRIFT_GEMM_TILED;
    k->bk = TILE_BK;
    if (p == DRIFT_POLICY_BATCH_INVARIANT) {
        k->bm = 128, k->bn = 128;
        return DRIFT_OK;
    }
    int filled;
    size_t tiles = pick_tile(M, N, sms, &k->bm, &k->bn, &filled);
    if (filled) return DRIFT_OK;
    size_t lim = (size_t)sms / tiles, klim = K / (size_t)min_slice;
    if (klim < lim) lim = klim;
    if (lim > DRIFT_POLICY_MAX_SPLIT) lim = DRIFT_POLICY_MAX_SPLIT;
    size_t S = 1;
    while (S * 2 <= lim) S *= 2;
    if (S >= 2) {
        memset(k, 0, sizeof *k);
        k->family = DRIFT_GEMM_SPLITK;
        k->splits = (int)S;
    }
    return DRIFT_OK;
}

double drift_policy_cost(const drift_gemm_kernel_t *k, size_t M, size_t N, size_t K, int sms)
{
    if (!k || sms < 1) return NAN;
    int bm = 128, bn = 128, filled;
    size_t S = 1;
    if (k->family == DRIFT_GEMM_TILED) bm = k->bm, bn = k->bn;
    if (k->family == DRIFT_GEMM_SPLITK) {
        S = (size_t)k->splits;
        pick_tile(M, N, sms, &bm, &bn, &filled); /* a split kernel keeps the shape's tile */
    }
    size_t tiles = ceil_div(M ? M : 1, (size_t)bm) * ceil_div(N ? N : 1, (size_t)bn);
    size_t kslice = ceil_div(K ? K : 1, S);
    double waves = (double)ceil_div(tiles * S, (size_t)sms);
    double cost = waves * (double)bm * (double)bn * (double)kslice;
    if (S > 1) cost += DRIFT_POLICY_REDUCE_COST * (double)M * (double)N * (double)S / (double)sms;
    return cost;
}

int drift_policy_sampled_m(size_t M, size_t Mmax, int run_end)
{
    int pow2ish = ((M & (M - 1)) == 0) || (((M + 1) & M) == 0) || (M > 1 && ((M - 1) & (M - 2)) == 0);
    return M <= 16 || M % 32 == 0 || pow2ish || run_end || M == Mmax;
}
