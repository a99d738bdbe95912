/* cards.c — the one table of GPU cards (cards.h).
 *
 * A count is the number of multiprocessors enabled on the product (not on the full die): it is
 * what a vendor library's heuristics fill, so it is what the kernel policies of policy.h need.
 * Where the vendor publishes CUDA cores rather than SMs, the count is cores / cores per SM of
 * that chip (64 on GA100, 128 on GA10x, AD10x, GB20x), said in the source column. */
#include "cards.h"
#include "drift.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static const drift_card_t CARDS[] = {
    {"v100", "NVIDIA Tesla V100 (SXM2)", DRIFT_TC_V100, 80, "SM",
        "https://images.nvidia.com/content/volta-architecture/pdf/volta-architecture-whitepaper.pdf (Table 1: 80 SMs)"},
    {"a100", "NVIDIA A100 (SXM4 and PCIe)", DRIFT_TC_A100, 108, "SM",
        "https://images.nvidia.com/aem-dam/en-zz/Solutions/data-center/nvidia-ampere-architecture-whitepaper.pdf "
        "(Figure 6: A100 has 108 SMs)"},
    {"a30", "NVIDIA A30", DRIFT_TC_A30, 56, "SM",
        "https://www.nvidia.com/en-us/data-center/products/a30-gpu/ (3584 CUDA cores / 64 per GA100 SM)"},
    {"a2", "NVIDIA A2", DRIFT_TC_A2, 10, "SM",
        "https://www.nvidia.com/en-us/data-center/products/a2/ (1280 CUDA cores / 128 per GA107 SM; 40 tensor cores / 4 per SM)"},
    /* GA102 is compute capability 8.6 as the A2's GA107: the Ampere model (A2TC.m calls A100TC.m) */
    {"rtx3090", "NVIDIA GeForce RTX 3090", DRIFT_TC_A2, 82, "SM",
        "https://www.nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf (Table 2: 82 SMs)"},
    {"rtx4090", "NVIDIA GeForce RTX 4090", DRIFT_TC_ADA, 128, "SM",
        "https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf (Table 1: 128 SMs)"},
    {"l40s", "NVIDIA L40S", DRIFT_TC_L40S, 142, "SM",
        "https://www.nvidia.com/en-us/data-center/l40s/ (18176 CUDA cores / 128 per AD102 SM; 142 RT cores, one per SM)"},
    {"h100", "NVIDIA H100 SXM5", DRIFT_TC_H100, 132, "SM",
        "https://resources.nvidia.com/en-us-tensor-core/gtc22-whitepaper-hopper (Table 3: H100 SXM5 132 SMs)"},
    {"h100pcie", "NVIDIA H100 PCIe", DRIFT_TC_H100, 114, "SM",
        "https://resources.nvidia.com/en-us-tensor-core/gtc22-whitepaper-hopper (Table 3: H100 PCIe 114 SMs)"},
    {"h200", "NVIDIA H200 SXM", DRIFT_TC_H200, 132, "SM",
        "https://www.nvidia.com/en-us/data-center/h200/ (the GH100 of the H100 SXM5: the same FP64/FP32 peaks, 34/67 TFLOPS)"},
    {"b200", "NVIDIA B200", DRIFT_TC_B200, 148, "SM",
        "https://chipsandcheese.com/p/nvidias-b200-keeping-the-cuda-juggernaut (74 SMs enabled on each of two dies, "
        "read from the device; NVIDIA's datasheet gives no count)"},
    {"rtxpro6000", "NVIDIA RTX PRO 6000 Blackwell", DRIFT_TC_RTXPRO6000, 188, "SM",
        "https://www.nvidia.com/en-us/products/workstations/professional-desktop-gpus/rtx-pro-6000/ (24064 CUDA cores / 128 per "
        "GB202 SM)"},
    {"mi100", "AMD Instinct MI100", DRIFT_TC_MI100, 120, "CU",
        "https://www.amd.com/system/files/documents/amd-cdna-whitepaper.pdf (120 compute units)"},
    {"mi250x", "AMD Instinct MI250X", DRIFT_TC_MI250, 220, "CU",
        "https://rocm.docs.amd.com/en/latest/conceptual/gpu-arch/mi250.html (2 GCDs of 110 CUs)"},
    {"mi250", "AMD Instinct MI250", DRIFT_TC_MI250, 208, "CU",
        "https://rocm.docs.amd.com/en/latest/conceptual/gpu-arch/mi250.html (2 GCDs of 104 CUs)"},
    {"mi300x", "AMD Instinct MI300X", DRIFT_TC_MI300X, 304, "CU",
        "https://rocm.docs.amd.com/en/latest/conceptual/gpu-arch/mi300.html (8 XCDs of 38 active CUs: 304)"},
};
#define NCARDS (int)(sizeof CARDS / sizeof CARDS[0])

/* Other spellings of one card, after case and '-', '_', ' ' are dropped. */
static const struct {
    const char *alias, *card;
} ALIASES[] = {{"h100sxm", "h100"}, {"h100sxm5", "h100"}, {"h200sxm", "h200"}, {"a100sxm", "a100"},
    {"a100pcie", "a100"}, {"v100sxm2", "v100"}, {"geforcertx4090", "rtx4090"}, {"geforcertx3090", "rtx3090"},
    {"teslav100", "v100"}};

/* name in lower case without '-', '_' and blanks; 0 when it does not fit (no card is so long). */
static int normalize(char *out, size_t size, const char *name)
{
    size_t n = 0;
    for (const char *p = name; *p; p++) {
        if (*p == '-' || *p == '_' || *p == ' ') continue;
        if (n + 1 >= size) return 0;
        out[n++] = (char)tolower((unsigned char)*p);
    }
    out[n] = 0;
    return n > 0;
}

int drift_card_parse(drift_card_t *c, const char *name)
{
    char key[32];
    if (!c || !name || !normalize(key, sizeof key, name)) return DRIFT_EINVAL;
    for (size_t i = 0; i < sizeof ALIASES / sizeof ALIASES[0]; i++)
        if (!strcmp(key, ALIASES[i].alias)) snprintf(key, sizeof key, "%s", ALIASES[i].card);
    for (int i = 0; i < NCARDS; i++)
        if (!strcmp(key, CARDS[i].name)) {
            *c = CARDS[i];
            return DRIFT_OK;
        }
    return DRIFT_EINVAL;
}

const drift_card_t *drift_card_at(int i) { return i >= 0 && i < NCARDS ? &CARDS[i] : NULL; }

void drift_card_names(char *buf, size_t size)
{
    size_t n = 0;
    if (size) buf[0] = 0;
    for (int i = 0; i < NCARDS && n < size; i++) {
        int w = snprintf(buf + n, size - n, "%s%s", i ? ", " : "", CARDS[i].name);
        if (w < 0) break;
        n += (size_t)w;
    }
}

int drift_order_parse_card(drift_order_t *o, const char *spec)
{
    if (drift_order_parse(o, spec) == DRIFT_OK) return DRIFT_OK;
    drift_card_t c;
    if (!spec || strncmp(spec, "tc:", 3) != 0 || drift_card_parse(&c, spec + 3) != DRIFT_OK) {
        /* tc:H100 is tc:h100: the model names in any case too */
        if (spec && !strncmp(spec, "tc:", 3)) {
            char low[DRIFT_ORDER_SPEC_MAX];
            size_t n = strlen(spec);
            if (n >= sizeof low) return DRIFT_EINVAL;
            for (size_t i = 0; i <= n; i++) low[i] = (char)tolower((unsigned char)spec[i]);
            return drift_order_parse(o, low);
        }
        return DRIFT_EINVAL;
    }
    char canon[DRIFT_ORDER_SPEC_MAX];
    snprintf(canon, sizeof canon, "tc:%s", drift_tc_arch_name(c.arch));
    return drift_order_parse(o, canon);
}
