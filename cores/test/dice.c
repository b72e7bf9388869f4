/* A C core that draws a random value: at START it asks for choice 0 among
 * cfg0 values (CMC_OUT_CHOOSE) and records the value CMC_EV_CHOICE brings.
 * Used by crates/world/tests/random_choice.rs to check that C and Rust cores
 * see the same ABI for random choices. Built with -DLINK_PROPS, it also
 * declares properties over the World view's cut links (tests/links.rs). */
#include "cmc.h"

struct dice {
    uint32_t drawn; /* 0 until drawn, then value + 1 */
};

static int step(const cmc_config *cfg, const void *durable, void *vol, const cmc_event *ev,
                cmc_outputs *out) {
    struct dice *d = vol;
    (void)durable;
    if (ev->kind == CMC_EV_START) return cmc_choose(out, 0, (uint8_t)cfg->params[0]);
    if (ev->kind == CMC_EV_CHOICE && ev->id == 0 && ev->len == 1) d->drawn = ev->payload[0] + 1u;
    return 0;
}

static const cmc_core core = {
    .abi_version = CMC_ABI_VERSION,
    .durable_size = 0,
    .volatile_size = sizeof(struct dice),
    .name = "dice",
    .step = step,
};

const cmc_core *cmc_core_entry(void) { return &core; }

#ifdef LINK_PROPS
/* Holds while every link is cut in both directions or in neither. */
static int cuts_are_symmetric(const cmc_world_view *w) {
    for (uint32_t a = 0; a < w->nodes; a++)
        for (uint32_t b = 0; b < w->nodes; b++)
            if (w->cut[a * w->nodes + b] != w->cut[b * w->nodes + a]) return 0;
    return 1;
}
/* links_down (pairs below 8) agrees with cut: bit a*8+b when a->b or b->a is cut. */
static int links_down_agrees(const cmc_world_view *w) {
    for (uint32_t a = 0; a < w->nodes && a < 8; a++)
        for (uint32_t b = a + 1; b < w->nodes && b < 8; b++) {
            int down = (w->links_down >> (a * 8 + b)) & 1;
            if (down != (w->cut[a * w->nodes + b] || w->cut[b * w->nodes + a])) return 0;
        }
    return 1;
}
CMC_PROPERTIES(CMC_INVARIANT("CutsAreSymmetric", cuts_are_symmetric),
               CMC_INVARIANT("LinksDownAgrees", links_down_agrees))
#endif
