/*
 * votes: a C core whose durable state, volatile state and messages hold node ids, declared
 * with CMC_ID_FIELDS so that symmetry reduction renames them (crates/world/tests/symmetry.rs).
 *
 * Every node, when its timer fires, votes for itself (a durable `voted_for`, persisted) and
 * asks every other node for its vote; a node that hears a request records it in `heard`
 * (an array indexed by node id) and grants its vote; a candidate records the votes it got
 * (a bit per node).
 *
 *   -DCMC_BUG=1        a node counts a request as a vote for itself
 *   -DFORGET_MESSAGE   the id in messages is not declared
 *   -DFORGET_INDEX     `heard` is not declared
 */
#include <stddef.h>

#include "cmc.h"

#ifndef CMC_BUG
#define CMC_BUG 0
#endif

enum { MSG_VOTE_REQUEST = 1, MSG_VOTE = 2 };

struct votes_durable {
    uint32_t voted_for; /* id + 1; 0: none */
};

struct votes_volatile {
    uint32_t votes;    /* bit per node that voted for this one */
    uint8_t heard[8];  /* heard[n]: node n asked this one for its vote */
};

struct votes_msg {
    uint8_t type;
    uint8_t node; /* the candidate (request) or the voter (vote) */
};

static int step(const cmc_config *config, const void *durable_part, void *volatile_part,
                const cmc_event *event, cmc_outputs *out) {
    const struct votes_durable *d = durable_part;
    struct votes_volatile *v = volatile_part;
    struct votes_msg msg;
    switch (event->kind) {
    case CMC_EV_START:
        return cmc_set_timer(out, 0);
    case CMC_EV_TIMER:
        if (d->voted_for != 0) return 0;
        {
            struct votes_durable vote = {config->node + 1};
            if (cmc_persist(out, 0, &vote, sizeof vote)) return 1;
        }
        msg.type = MSG_VOTE_REQUEST;
        msg.node = (uint8_t)config->node;
        for (uint32_t n = 0; n < config->nodes; n++)
            if (n != config->node && cmc_send(out, n, &msg, sizeof msg)) return 1;
        return 0;
    case CMC_EV_RECV:
        if (event->len != sizeof msg) return 2;
        memcpy(&msg, event->payload, sizeof msg);
        if (msg.node >= config->nodes) return 3;
        if (msg.type == MSG_VOTE_REQUEST) {
            v->heard[msg.node] = 1;
            if (CMC_BUG == 1) v->votes |= 1u << msg.node;
            struct votes_msg vote = {MSG_VOTE, (uint8_t)config->node};
            return cmc_send(out, msg.node, &vote, sizeof vote);
        }
        if (msg.type == MSG_VOTE) v->votes |= 1u << msg.node;
        return 0;
    default:
        return 0;
    }
}

static const cmc_core core = {
    CMC_ABI_VERSION, sizeof(struct votes_durable), sizeof(struct votes_volatile), 0, "votes",
    step, NULL, NULL, NULL};

const cmc_core *cmc_core_entry(void) { return &core; }

CMC_ID_FIELDS(
    CMC_ID_VALUE(CMC_ID_DURABLE, offsetof(struct votes_durable, voted_for), 4, 1),
    CMC_ID_BITSET(CMC_ID_VOLATILE, offsetof(struct votes_volatile, votes), 4),
#ifndef FORGET_INDEX
    CMC_ID_INDEX(CMC_ID_VOLATILE, offsetof(struct votes_volatile, heard), 1, 8),
#endif
#ifndef FORGET_MESSAGE
    CMC_ID_MESSAGE_VALUE(offsetof(struct votes_msg, node), 1, 0, -1, 0),
#endif
)
