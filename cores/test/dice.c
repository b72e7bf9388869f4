/* A C core that draws a random value: at START it asks for choice 0 among
 * cfg0 values (CMC_OUT_CHOOSE) and records the value CMC_EV_CHOICE brings.
 * Used by crates/world/tests/random_choice.rs to check that C and Rust cores
 * see the same ABI for random choices. */
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
