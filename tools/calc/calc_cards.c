/* calc_cards.c — `drift-calc cards`: the table of GPU cards a program accepts wherever it asks
 * for an architecture or a device (cards.h), with the source of every SM count. */
#include <stdio.h>

#include "calc.h"
#include "cards.h"
#include "cli.h"

static void usage(FILE *to)
{
    fprintf(to, "usage: drift-calc cards\n"
                "prints CSV: card,product,tc_model,multiprocessors,unit,source\n"
                "  card: the name to give (--orders tc:CARD, --device CARD; any case, '-', '_' and blanks ignored);\n"
                "  tc_model: the tensor-core model it selects (what data files print); multiprocessors: SMs (NVIDIA)\n"
                "  or compute units (AMD), with the document the count comes from\n");
}

int calc_cards(int argc, char **argv)
{
    drift_args_parse(NULL, 0, NULL, 0, argc, argv, usage);
    printf("card,product,tc_model,multiprocessors,unit,source\n");
    for (int i = 0; drift_card_at(i); i++) {
        const drift_card_t *c = drift_card_at(i);
        printf("%s,%s,%s,%d,%s,\"%s\"\n", c->name, c->product, drift_tc_arch_name(c->arch), c->sms, c->unit, c->source);
    }
    return 0;
}
