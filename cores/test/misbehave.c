/*
 * A core that answers client requests, and misbehaves on them in the way its
 * -D flag selects (for the gates' tests):
 *   ERROR_CODE     the step returns 7
 *   NONDET_STATIC  the reply carries a counter kept in a static
 *   NONDET_UNINIT  the reply carries an uninitialised local (build with -O0)
 *   SEGV           the step writes through a null pointer
 *   HANG           the step never returns
 *   CALLS_TIME     the reply carries time(NULL) (for the purity gate)
 */
#include "cmc.h"
#ifdef CALLS_TIME
#include <time.h>
#endif

static int step(const cmc_config *c, const void *d, void *v, const cmc_event *e, cmc_outputs *o) {
    uint32_t value = 0;
    (void)c; (void)d; (void)v;
    if (e->kind != CMC_EV_CLIENT) return 0;
#if defined(ERROR_CODE)
    return 7;
#elif defined(NONDET_STATIC)
    static uint32_t calls;
    value = ++calls;
#elif defined(NONDET_UNINIT)
    uint32_t junk[4]; /* deliberately uninitialised, read through a pointer */
    uint32_t *volatile unseen = junk; /* the compiler cannot follow, so it does not warn */
    value = unseen[1];
#elif defined(SEGV)
    *(volatile uint32_t *)0 = 1;
#elif defined(HANG)
    volatile int spin = 1;
    while (spin) {}
#elif defined(CALLS_TIME)
    value = (uint32_t)time(NULL);
#endif
    return cmc_reply(o, e->id, &value, sizeof value);
}

static const cmc_core core = {
    .abi_version = CMC_ABI_VERSION,
    .durable_size = 4,
    .volatile_size = 4,
    .name = "misbehave",
    .step = step,
};

const cmc_core *cmc_core_entry(void) { return &core; }
