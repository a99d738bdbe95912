/* test_cards.c — the one table of GPU cards (lib/ops/cards.h): every card a user names, its
 * multiprocessor count and tensor-core model, and the places that take a card.
 *
 * The expected counts are the vendors' (the source column of the table names each document):
 * NVIDIA's architecture whitepapers and product pages (SMs), AMD's ROCm documents (CUs);
 * B200 as measured on the device (two dies of 74 SMs), NVIDIA publishing no count. */
#include <criterion/criterion.h>
#include <string.h>

#include "cards.h"
#include "cost_model.h"
#include "drift.h"
#include "gpu_gemm.h"
#include "policy.h"

typedef struct {
    const char *name;
    int sms;
    const char *model; /* the tc: model's canonical name */
} card_t;

static const card_t CARDS[] = {
    {"a100", 108, "a100"},
    {"h100", 132, "h100"},
    {"h200", 132, "h200"},
    {"b200", 148, "b200"},
    {"l40s", 142, "l40s"},
    {"rtx4090", 128, "ada"},
    {"rtx3090", 82, "a2"},
    {"v100", 80, "v100"},
    {"mi300x", 304, "mi300x"},
    {"a2", 10, "a2"},
    {"a30", 56, "a30"},
    {"h100pcie", 114, "h100"},
};

Test(cards, vendor_counts_and_models)
{
    for (size_t i = 0; i < sizeof CARDS / sizeof CARDS[0]; i++) {
        drift_card_t c;
        cr_assert_eq(drift_card_parse(&c, CARDS[i].name), 0, "%s refused", CARDS[i].name);
        cr_expect_eq(c.sms, CARDS[i].sms, "%s: %d, want %d", CARDS[i].name, c.sms, CARDS[i].sms);
        cr_expect_str_eq(drift_tc_arch_name(c.arch), CARDS[i].model, "%s", CARDS[i].name);
        cr_expect(!strncmp(c.source, "https://", 8), "%s: no source URL: %s", CARDS[i].name, c.source);
    }
}

Test(cards, spellings)
{
    static const char *const SAME_AS_RTX4090[] = {"RTX4090", "rtx-4090", "RTX 4090", "GeForce RTX 4090", "rtx_4090"};
    for (size_t i = 0; i < sizeof SAME_AS_RTX4090 / sizeof *SAME_AS_RTX4090; i++) {
        drift_card_t c;
        cr_assert_eq(drift_card_parse(&c, SAME_AS_RTX4090[i]), 0, "%s", SAME_AS_RTX4090[i]);
        cr_expect_str_eq(c.name, "rtx4090");
    }
    drift_card_t c;
    cr_assert_eq(drift_card_parse(&c, "H100 SXM"), 0);
    cr_expect_eq(c.sms, 132);
    cr_expect_neq(drift_card_parse(&c, "h200x"), 0);
    cr_expect_neq(drift_card_parse(&c, ""), 0);
    cr_expect_neq(drift_card_parse(&c, "---"), 0);
}

/* tc:CARD is the card's model, printed canonically: data never carries the card's spelling. */
Test(cards, tc_orders_print_the_model)
{
    static const char *const SPEC[][2] = {{"tc:rtx4090", "tc:ada"}, {"tc:RTX-4090", "tc:ada"}, {"tc:H100", "tc:h100"},
        {"tc:h100pcie", "tc:h100"}, {"tc:MI300X", "tc:mi300x"}, {"seq", "seq"}};
    for (size_t i = 0; i < sizeof SPEC / sizeof *SPEC; i++) {
        drift_order_t o;
        char buf[DRIFT_ORDER_SPEC_MAX];
        cr_assert_eq(drift_order_parse_card(&o, SPEC[i][0]), 0, "%s", SPEC[i][0]);
        drift_order_print(buf, sizeof buf, &o);
        cr_expect_str_eq(buf, SPEC[i][1]);
    }
    drift_order_t o;
    cr_expect_neq(drift_order_parse_card(&o, "tc:z80"), 0);
    cr_expect_neq(drift_order_parse_card(&o, "tc:"), 0);
}

/* The kernel policies, the cost model and the GPU-arch lookup read their SM counts and models
 * from the one table: the four devices they always knew keep their counts (80, 108, 132, 148). */
Test(cards, one_table_everywhere)
{
    drift_device_t d;
    cr_assert_eq(drift_device_lookup(&d, "L40S"), 0);
    cr_expect_str_eq(d.name, "l40s");
    cr_expect_eq(d.sms, 142);
    static const card_t OLD[] = {
        {"v100", 80, "v100"}, {"a100", 108, "a100"}, {"h100", 132, "h100"}, {"b200", 148, "b200"}};
    for (size_t i = 0; i < 4; i++) {
        drift_device_perf_t p;
        cr_assert_eq(drift_device_perf(&p, OLD[i].name), 0);
        cr_expect_eq(p.sms, OLD[i].sms, "%s", OLD[i].name);
        drift_tc_arch_t a;
        cr_assert_eq(drift_gpu_arch(&a, OLD[i].name), 0);
        cr_expect_str_eq(drift_tc_arch_name(a), OLD[i].model);
    }
    drift_tc_arch_t a;
    cr_assert_eq(drift_gpu_arch(&a, "rtx4090"), 0);
    cr_expect_str_eq(drift_tc_arch_name(a), "ada");
}
