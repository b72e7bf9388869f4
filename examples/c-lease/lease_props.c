/*
 * lease_props.c: the properties of the lease core, in C. Linked into the same
 * shared library as lease.c; they read the World through a read-only view
 * (every node's durable and volatile parts and clock, the ghost history of
 * client requests and replies) and never decide what the World does.
 */
#include "cmc.h"
#include "lease.h"

static const struct lease_volatile *vol(const cmc_world_view *w, uint32_t node) {
    return cmc_view_volatile(w, node);
}

static const struct lease_durable *dur(const cmc_world_view *w, uint32_t node) {
    return cmc_view_durable(w, node);
}

/* Whether candidate `node` believes, right now, that it holds an unexpired
 * lease: judged on its clock in this state, not on the last event it saw. */
static int believes_it_holds(const cmc_world_view *w, uint32_t node) {
    const struct lease_volatile *v = vol(w, node);
    return !cmc_view_crashed(w, node) && v->has_lease && cmc_view_clock(w, node) < v->lease_until;
}

/* At most one node believes it holds an unexpired lease. Every state is one
 * instant of real time, with each node's clock as it reads at that instant. */
static int one_lease_holder(const cmc_world_view *w) {
    uint32_t holders = 0;
    for (uint32_t n = 0; n < w->nodes; n++)
        if (n != LEASE_SERVER) holders += (uint32_t)believes_it_holds(w, n);
    return holders <= 1;
}

/* A write acknowledged to its client is durable at the node that acknowledged it. */
static int replied_is_written(const cmc_world_view *w) {
    for (uint32_t i = 0; i < w->ghost_len; i++) {
        const cmc_ghost_view *g = &w->ghost[i];
        if (g->kind != CMC_GHOST_REPLY) continue;
        if (g->request >= LEASE_REQUESTS_MAX || !dur(w, g->node)->written[g->request]) return 0;
    }
    return 1;
}

/* A durable write is never undone. */
static int writes_stay(const cmc_world_view *pre, const cmc_world_view *post) {
    for (uint32_t n = 0; n < pre->nodes; n++)
        for (uint32_t r = 0; r < LEASE_REQUESTS_MAX; r++)
            if (dur(pre, n)->written[r] && !dur(post, n)->written[r]) return 0;
    return 1;
}

/* Some run acknowledges a write (else nothing was checked). */
static int write_acknowledged(const cmc_world_view *w) {
    for (uint32_t i = 0; i < w->ghost_len; i++)
        if (w->ghost[i].kind == CMC_GHOST_REPLY) return 1;
    return 0;
}

/* The goal of quiescence=STEPS: every issued write is acknowledged and no
 * candidate is still waiting for a lease. */
static int settled(const cmc_world_view *w) {
    for (uint32_t r = 0; r < w->issued; r++)
        if (cmc_view_reply(w, r) == NULL) return 0;
    for (uint32_t n = 0; n < w->nodes; n++)
        if (n != LEASE_SERVER && (vol(w, n)->pending || vol(w, n)->asking)) return 0;
    return 1;
}

CMC_PROPERTIES(
    CMC_INVARIANT("OneLeaseHolder", one_lease_holder),
    CMC_INVARIANT("RepliedIsWritten", replied_is_written),
    CMC_ACTION_PROP("WritesStay", writes_stay),
    CMC_WITNESS("WriteAcknowledged", write_acknowledged),
    CMC_QUIESCENCE_GOAL("Settled", settled)
)
