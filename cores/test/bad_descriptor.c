/* Shared libraries that are not valid cores, one per -D flag, for the loader's tests. */
#include "cmc.h"

#ifdef NO_ENTRY
int not_a_core(void) { return 0; }
#else
#ifndef NO_STEP
static int step(const cmc_config *c, const void *d, void *v, const cmc_event *e, cmc_outputs *o) {
    (void)c; (void)d; (void)v; (void)e; (void)o;
    return 0;
}
#endif

static const cmc_core core = {
#ifdef WRONG_ABI
    .abi_version = 99,
#else
    .abi_version = CMC_ABI_VERSION,
#endif
#ifdef HUGE_STATE
    .durable_size = 1u << 30,
#else
    .durable_size = 4,
#endif
    .volatile_size = 4,
    .name = "bad",
#ifndef NO_STEP
    .step = step,
#endif
};
const cmc_core *cmc_core_entry(void) { return &core; }
#endif
