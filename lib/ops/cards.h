/* cards.h — the GPUs a user can name, one table: each card's tensor-core model (tc_model.h),
 * its multiprocessor count (SMs on NVIDIA, CUs on AMD) and the document that count comes from.
 *
 * Wherever a program asks for an architecture or a device (--orders tc:CARD, --device CARD,
 * calc --order tc:CARD), a card name is accepted: the vendor's product name in lower case
 * without blanks ("h100", "rtx4090", "mi300x"), in any case, with '-', '_' and blanks ignored
 * ("RTX-4090", "H100 SXM"). What is printed in data is always the tensor-core model's
 * canonical name (tc:ada for an RTX 4090): a card chooses a model, it is not one. */
#ifndef DRIFT_CARDS_H
#define DRIFT_CARDS_H

#include "drift.h"
#include "order.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    const char *name;     /* canonical card name: "h100" */
    const char *product;  /* "NVIDIA H100 SXM5" */
    drift_tc_arch_t arch; /* the tensor-core model that stands for its matrix units */
    int sms;              /* streaming multiprocessors (NVIDIA) or compute units (AMD) */
    const char *unit;     /* "SM" or "CU" */
    const char *source;   /* where the count is published (URL), and how it was read */
} drift_card_t;

/* The card called name (see above), copied into *c. 0, or DRIFT_EINVAL for an unknown name
 * (c untouched). */
DRIFT_MUST_CHECK int drift_card_parse(drift_card_t *c, const char *name);
/* The i-th card of the table (0 ..), NULL past the last: for --help texts and the docs. */
const drift_card_t *drift_card_at(int i);
/* "a100, a2, a30, ..." (every canonical card name, comma-separated) into buf. */
void drift_card_names(char *buf, size_t size);

/* drift_order_parse(o, spec), and also tc:CARD for every card (tc:rtx4090 is tc:ada): the
 * order printed stays the model's canonical spec. 0 or DRIFT_EINVAL. */
DRIFT_MUST_CHECK int drift_order_parse_card(drift_order_t *o, const char *spec);

#ifdef __cplusplus
}
#endif

#endif
