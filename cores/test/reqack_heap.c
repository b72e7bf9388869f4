/*
 * reqack_heap: the reqack core (cores/reqack/reqack.c) behind a heap-state adapter
 * (include/cmc_heap.h), its node a malloc'ed object: start copies the flushed durable
 * part into it, a FLUSHED event writes the flushed bytes there, and the view is reqack's
 * volatile part followed by that copy (what the node reads decides what it does next, so
 * the view holds it; reqack_props.c reads the view's start as reqack's volatile part). Linked with reqack.c and reqack_props.c (-DDESCRIBE for its describe
 * table), its counterexamples read as the plain core's (crates/cli/tests/c_properties.rs).
 */
#include <stdlib.h>

#include "cmc_heap.h"
#include "reqack.h"

struct node {
    struct reqack_volatile volatile_part;
    struct reqack_durable durable;
};

static void *start(const cmc_config *config, const void *durable, cmc_outputs *out) {
    struct node *node = calloc(1, sizeof *node);
    if (!node) return NULL;
    memcpy(&node->durable, durable, sizeof node->durable);
    cmc_event event = {0};
    event.kind = CMC_EV_START;
    if (cmc_core_entry()->step(config, &node->durable, &node->volatile_part, &event, out)) {
        free(node);
        return NULL;
    }
    return node;
}

static int step(void *opaque, const cmc_config *config, const cmc_event *event,
                cmc_outputs *out) {
    struct node *node = opaque;
    if (event->kind == CMC_EV_FLUSHED) {
        if (event->id + event->len > sizeof node->durable) return -1;
        memcpy((uint8_t *)&node->durable + event->id, event->payload, event->len);
    }
    return cmc_core_entry()->step(config, &node->durable, &node->volatile_part, event, out);
}

static int view(const void *opaque, const cmc_config *config, void *out) {
    (void)config;
    const struct node *node = opaque;
    memcpy(out, node, sizeof *node);
    return 0;
}

static void destroy(void *node) { free(node); }

static const cmc_heap_core adapter = {
    CMC_HEAP_ABI_VERSION, sizeof(struct reqack_durable), sizeof(struct node), 0,
    "reqack-heap", NULL, 0, 0, start, step, view, destroy, NULL, NULL};

const cmc_heap_core *cmc_heap_core_entry(void) { return &adapter; }
