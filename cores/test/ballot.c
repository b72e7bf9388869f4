/*
 * ballot: a C core whose nodes vote once for a candidate, with its properties and a ghost
 * variable in C (crates/cli/tests/c_ghosts.rs).
 *
 * A node whose timer fires votes for itself and asks the others for their votes. A node
 * asked for its vote makes the vote durable (persists `voted_for`) and sends it once the
 * persist is flushed; a node that voted never votes for another. A crash loses what was not
 * flushed, so a vote sent only after its flush is never forgotten.
 *
 *   -DCMC_BUG=1   the vote is sent at once, before it is durable: a crash before the flush
 *                 forgets it, and the restarted node votes again, for another candidate.
 *
 * No property of one state sees that bug: after the crash the node holds nothing of its
 * first vote. The ghost variable `Granted` remembers, per node, every candidate it sent its
 * vote to, and `VoteOnce` reads it. `GrantIsRecorded` is a property of one state, true
 * with and without the bug (a run that selects only it drops the ghost variable).
 *
 * Variants for the tests of bad input: -DGHOST_TOO_LARGE, -DGHOST_TWICE,
 * -DGHOST_UNKNOWN_READER, -DNO_RENAME (no rename hook: refused under symmetry),
 * -DUPDATE_FAILS (the update returns an error), -DUPDATE_CRASHES (the update writes through
 * a null pointer once a vote is granted) and -DREAD_BY_ANY (no readers named: the variable
 * is never dropped).
 */
#include <stddef.h>
#include <stdio.h>

#include "cmc.h"

#ifndef CMC_BUG
#define CMC_BUG 0
#endif

enum { MSG_VOTE_REQUEST = 1, MSG_VOTE = 2 };

struct ballot_durable {
    uint32_t voted_for;  /* candidate + 1; 0: none */
};

struct ballot_volatile {
    uint32_t pending;    /* candidate + 1 whose vote awaits its flush; 0: none */
    uint32_t granted_to; /* candidate + 1 this node sent its vote to; 0: none */
    uint32_t votes;      /* bit per node that sent this one its vote */
};

struct ballot_msg {
    uint8_t type;
    uint8_t node; /* the candidate (request) or the voter (vote) */
};

static int send_vote(cmc_outputs *out, struct ballot_volatile *v, const cmc_config *config,
                     uint32_t candidate) {
    struct ballot_msg vote = {MSG_VOTE, (uint8_t)config->node};
    v->granted_to = candidate + 1;
    return cmc_send(out, candidate, &vote, sizeof vote);
}

static int step(const cmc_config *config, const void *durable_part, void *volatile_part,
                const cmc_event *event, cmc_outputs *out) {
    const struct ballot_durable *d = durable_part;
    struct ballot_volatile *v = volatile_part;
    struct ballot_msg msg;
    switch (event->kind) {
    case CMC_EV_START:
        return cmc_set_timer(out, 0);
    case CMC_EV_TIMER:
        if (d->voted_for != 0 || v->pending != 0) return 0;
        {
            struct ballot_durable own = {config->node + 1};
            v->pending = config->node + 1;
            if (cmc_persist(out, 0, &own, sizeof own)) return 1;
        }
        msg.type = MSG_VOTE_REQUEST;
        msg.node = (uint8_t)config->node;
        for (uint32_t n = 0; n < config->nodes; n++)
            if (n != config->node && cmc_send(out, n, &msg, sizeof msg)) return 1;
        return 0;
    case CMC_EV_FLUSHED: {
        uint32_t candidate = v->pending;
        v->pending = 0;
        if (candidate == 0 || candidate == config->node + 1 || v->granted_to != 0) return 0;
        return send_vote(out, v, config, candidate - 1);
    }
    case CMC_EV_RECV:
        if (event->len != sizeof msg) return 2;
        memcpy(&msg, event->payload, sizeof msg);
        if (msg.node >= config->nodes) return 3;
        if (msg.type == MSG_VOTE) {
            v->votes |= 1u << msg.node;
            return 0;
        }
        if (d->voted_for != 0 || v->pending != 0) return 0;
        {
            struct ballot_durable vote = {(uint32_t)msg.node + 1};
            v->pending = vote.voted_for;
            if (cmc_persist(out, 0, &vote, sizeof vote)) return 1;
        }
        return CMC_BUG == 1 ? send_vote(out, v, config, msg.node) : 0;
    default:
        return 0;
    }
}

static const cmc_core core = {
    CMC_ABI_VERSION, sizeof(struct ballot_durable), sizeof(struct ballot_volatile), 0,
    "ballot", step, NULL, NULL, NULL};

const cmc_core *cmc_core_entry(void) { return &core; }

CMC_ID_FIELDS(
    CMC_ID_VALUE(CMC_ID_DURABLE, offsetof(struct ballot_durable, voted_for), 4, 1),
    CMC_ID_VALUE(CMC_ID_VOLATILE, offsetof(struct ballot_volatile, pending), 4, 1),
    CMC_ID_VALUE(CMC_ID_VOLATILE, offsetof(struct ballot_volatile, granted_to), 4, 1),
    CMC_ID_BITSET(CMC_ID_VOLATILE, offsetof(struct ballot_volatile, votes), 4),
    CMC_ID_MESSAGE_VALUE(offsetof(struct ballot_msg, node), 1, 0, -1, 0)
)

/* Properties and the ghost variable. */

/* Granted: byte n is the set of candidates node n sent its vote to, a bit per candidate. */
#define GRANTED_SIZE 8

static int note_grant(const cmc_world_view *pre, const cmc_action_view *action,
                      const cmc_world_view *post, uint8_t *granted) {
    (void)pre;
    uint32_t n = action->node;
    if (n == CMC_NO_NODE || n >= post->nodes || n >= GRANTED_SIZE) return 0;
    const struct ballot_volatile *v = cmc_view_volatile(post, n);
    if (v->granted_to != 0) granted[n] |= (uint8_t)(1u << (v->granted_to - 1));
#ifdef UPDATE_CRASHES
    if (v->granted_to != 0) *(volatile uint8_t *)0 = 1;
#endif
#ifdef UPDATE_FAILS
    return 7;
#else
    return 0;
#endif
}

/* Under symmetry: byte n moves to perm[n], and each bit c of it to perm[c]. (Unused by
 * the variants whose ghost has no rename hook.) */
__attribute__((unused)) static void rename_granted(uint8_t *granted, uint32_t size, const uint32_t *perm,
                           uint32_t nodes) {
    uint8_t renamed[GRANTED_SIZE] = {0};
    for (uint32_t n = 0; n < nodes && n < size; n++)
        for (uint32_t c = 0; c < nodes; c++)
            if (granted[n] >> c & 1) renamed[perm[n]] |= (uint8_t)(1u << perm[c]);
    memcpy(granted, renamed, size);
}

static int vote_once(const cmc_world_view *w, cmc_why *why) {
    const uint8_t *granted = cmc_view_ghost_var(w, "Granted");
    if (!granted) return 0;
    for (uint32_t n = 0; n < w->nodes; n++) {
        uint8_t set = granted[n];
        if (set & (set - 1)) {
            snprintf(why->text, sizeof why->text, "n%u sent its vote to the candidates 0x%02x",
                     n, set);
            return 0;
        }
    }
    return 1;
}

static int grant_is_recorded(const cmc_world_view *w) {
    for (uint32_t n = 0; n < w->nodes; n++) {
        const struct ballot_durable *d = cmc_view_durable(w, n);
        const struct ballot_volatile *v = cmc_view_volatile(w, n);
        if (v->granted_to != 0 && d->voted_for != v->granted_to && w->node[n].unflushed == 0)
            return 0;
    }
    return 1;
}

CMC_PROPERTIES(
    CMC_INVARIANT_WHY("VoteOnce", vote_once),
    CMC_INVARIANT("GrantIsRecorded", grant_is_recorded)
)

/* The ghost's initial value (unused by -DGHOST_TOO_LARGE, which declares none). */
__attribute__((unused)) static const uint8_t no_grant[GRANTED_SIZE] = {0};

#if defined(GHOST_TOO_LARGE)
CMC_GHOSTS(CMC_GHOST("Granted", CMC_GHOST_VARS_MAX + 1, NULL, note_grant, "VoteOnce"))
#elif defined(GHOST_TWICE)
CMC_GHOSTS(CMC_GHOST("Granted", GRANTED_SIZE, no_grant, note_grant, "VoteOnce"),
           CMC_GHOST("Granted", GRANTED_SIZE, no_grant, note_grant, "VoteOnce"))
#elif defined(GHOST_UNKNOWN_READER)
CMC_GHOSTS(CMC_GHOST("Granted", GRANTED_SIZE, no_grant, note_grant, "VoteTwice"))
#elif defined(READ_BY_ANY)
CMC_GHOSTS(CMC_GHOST_RENAMED("Granted", GRANTED_SIZE, no_grant, note_grant, NULL,
                             rename_granted))
#elif defined(NO_RENAME)
CMC_GHOSTS(CMC_GHOST("Granted", GRANTED_SIZE, no_grant, note_grant, "VoteOnce"))
#else
CMC_GHOSTS(CMC_GHOST_RENAMED("Granted", GRANTED_SIZE, no_grant, note_grant, "VoteOnce",
                             rename_granted))
#endif
