/*
 * Properties in C of the reqack core (cores/reqack), for the tests of
 * crates/world/src/core/property_table.rs. Linked with reqack.c into one library:
 *
 *     cc -shared -fPIC -I include -I cores/reqack cores/reqack/reqack.c \
 *        cores/test/reqack_props.c [-DVARIANT] -o libreqack_props.so
 *
 * Without a flag every property holds and the witness is reached. The call
 * counter below makes this file impure on purpose (`cmc purity` refuses writable
 * statics); a real properties file has none. Flags (one at a time):
 *   VIOLATED       adds the invariant NothingStored, violated once a request is stored;
 *   UNREACHED      adds the witness TwoReplies, never reached on a correct core;
 *   CRASHES        adds the invariant Crashes, which dereferences NULL once a request is issued;
 *   WRITES         adds the invariant Writes, which writes into its read-only view;
 *   HANGS          adds the invariant Hangs, which loops forever once a request is issued;
 *   REPEATED       declares StoredOnlyIssued twice (the table is refused at load);
 *   BUILTIN_NAME   declares an invariant named AtMostOneReply, a name cmc already uses;
 *   GOAL_NEVER     declares the quiescence goal NeverReached, false everywhere;
 *   WHY            adds the invariant NothingStored, saying which node stored what (cmc_why);
 *   WHY_STEP       adds the action property NeverStores, saying which node stored what when;
 *   WHY_WITNESS    declares a witness with CMC_PROP_WHY (refused at load: only invariants
 *                  and action properties say why).
 *   CONFIG         adds the invariant IssuedAtMostCfg0: at most cfg0 requests are issued.
 * With DESCRIBE (alone or with a flag above), the library also describes reqack's
 * replies (OK, BUSY) and client operations (op=N) with CMC_DESCRIBE.
 */
#include <stdio.h>
#include "cmc.h"
#include "reqack.h"

/* Calls to the properties (for the test that they never decide what is enabled). */
static uint64_t calls;
uint64_t reqack_props_calls(void);
uint64_t reqack_props_calls(void) { return calls; }

static const struct reqack_durable *durable_of(const cmc_world_view *w, uint32_t node) {
    return (const struct reqack_durable *)cmc_view_durable(w, node);
}

/* A node stores only requests that were issued. */
static int stored_only_issued(const cmc_world_view *w) {
    calls++;
    for (uint32_t n = 0; n < w->nodes; n++) {
        uint32_t stored = durable_of(w, n)->stored;
        if (w->issued < 32 && (stored >> w->issued) != 0) return 0;
    }
    return 1;
}

/* A step never stores less: durable `stored` bits only grow. */
static int stored_grows(const cmc_world_view *pre, const cmc_world_view *post) {
    calls++;
    for (uint32_t n = 0; n < pre->nodes; n++) {
        uint32_t before = durable_of(pre, n)->stored, after = durable_of(post, n)->stored;
        if ((before & after) != before) return 0;
    }
    return 1;
}

/* Some reachable state has a request stored and acknowledged to the client. */
static int stored_and_replied(const cmc_world_view *w) {
    calls++;
    for (uint32_t n = 0; n < w->nodes; n++)
        if (durable_of(w, n)->stored != 0 && cmc_view_reply(w, 0) != NULL) return 1;
    return 0;
}

#ifdef VIOLATED
static int nothing_stored(const cmc_world_view *w) {
    for (uint32_t n = 0; n < w->nodes; n++)
        if (durable_of(w, n)->stored != 0) return 0;
    return 1;
}
#endif

#ifdef WHY
static int nothing_stored_why(const cmc_world_view *w, cmc_why *why) {
    for (uint32_t n = 0; n < w->nodes; n++) {
        uint32_t stored = durable_of(w, n)->stored;
        if (stored != 0) {
            snprintf(why->text, sizeof why->text, "n%u stored requests 0x%x", n, stored);
            return 0;
        }
    }
    return 1;
}
#endif

#ifdef WHY_STEP
static int never_stores(const cmc_world_view *pre, const cmc_world_view *post, cmc_why *why) {
    for (uint32_t n = 0; n < pre->nodes; n++) {
        uint32_t before = durable_of(pre, n)->stored, after = durable_of(post, n)->stored;
        if (before != after) {
            snprintf(why->text, sizeof why->text, "n%u stored 0x%x, then 0x%x", n, before, after);
            return 0;
        }
    }
    return 1;
}
#endif

#ifdef WHY_WITNESS
static int says_why_when_reached(const cmc_world_view *w, cmc_why *why) {
    return why != NULL && w->issued > 0;
}
#endif

#ifdef UNREACHED
static int two_replies(const cmc_world_view *w) { return cmc_view_replies(w, 0) >= 2; }
#endif

#ifdef CRASHES
static int crashes(const cmc_world_view *w) {
    volatile const uint32_t *nowhere = NULL;
    return w->issued == 0 || *nowhere == 0;
}
#endif

#ifdef WRITES
static int writes(const cmc_world_view *w) {
    ((cmc_node_view *)w->node)[0].clock += w->issued;
    return 1;
}
#endif

#ifdef WRITES_FAR
/* Writes one byte WRITES_FAR bytes past the end of its node-view array. */
static int writes_far(const cmc_world_view *w) {
    volatile char *past = (char *)(w->node + w->nodes) + (WRITES_FAR);
    *past = 1;
    return 1;
}
#endif

#ifdef HANGS
static int hangs(const cmc_world_view *w) {
    volatile uint32_t spin = w->issued;
    while (spin) spin = w->issued;
    return 1;
}
#endif

#ifdef CONFIG
static int issued_at_most_cfg0(const cmc_world_view *w) { return w->issued <= cmc_view_cfg(w, 0); }
#endif

#ifdef GOAL_NEVER
static int never(const cmc_world_view *w) { return w == NULL; }
#endif

/* The variant's extra entry (one flag at a time). */
#if defined(VIOLATED)
#define EXTRA , CMC_INVARIANT("NothingStored", nothing_stored)
#elif defined(UNREACHED)
#define EXTRA , CMC_WITNESS("TwoReplies", two_replies)
#elif defined(CRASHES)
#define EXTRA , CMC_INVARIANT("Crashes", crashes)
#elif defined(WRITES)
#define EXTRA , CMC_INVARIANT("Writes", writes)
#elif defined(HANGS)
#define EXTRA , CMC_INVARIANT("Hangs", hangs)
#elif defined(WRITES_FAR)
#define EXTRA , CMC_INVARIANT("WritesFar", writes_far)
#elif defined(REPEATED)
#define EXTRA , CMC_INVARIANT("StoredOnlyIssued", stored_only_issued)
#elif defined(BUILTIN_NAME)
#define EXTRA , CMC_INVARIANT("AtMostOneReply", stored_only_issued)
#elif defined(WHY)
#define EXTRA , CMC_INVARIANT_WHY("NothingStored", nothing_stored_why)
#elif defined(WHY_STEP)
#define EXTRA , CMC_ACTION_PROP_WHY("NeverStores", never_stores)
#elif defined(WHY_WITNESS)
#define EXTRA                                                                      \
    , {CMC_PROP_WITNESS | CMC_PROP_WHY, 0, "Issued",                              \
       CMC_STATE_WHY_AS_PRED(says_why_when_reached), NULL}
#elif defined(GOAL_NEVER)
#define EXTRA , CMC_QUIESCENCE_GOAL("NeverReached", never)
#elif defined(CONFIG)
#define EXTRA , CMC_INVARIANT("IssuedAtMostCfg0", issued_at_most_cfg0)
#else
#define EXTRA
#endif

CMC_PROPERTIES(
    CMC_INVARIANT("StoredOnlyIssued", stored_only_issued),
    CMC_ACTION_PROP("StoredGrows", stored_grows),
    CMC_WITNESS("StoredAndReplied", stored_and_replied)
    EXTRA
)

#ifdef DESCRIBE
static void reply_text(const cmc_config *config, const uint8_t *payload, uint32_t len, char *buf,
                       size_t cap) {
    (void)config;
    if (len == 1 && payload[0] == REQACK_REPLY_OK)
        snprintf(buf, cap, "OK");
    else if (len == 1 && payload[0] == REQACK_REPLY_BUSY)
        snprintf(buf, cap, "BUSY");
    else
        snprintf(buf, cap, "?(%u bytes)", len);
}

static void operation_text(const cmc_config *config, const uint8_t *payload, uint32_t len,
                           char *buf, size_t cap) {
    (void)config;
    snprintf(buf, cap, "op=%u", len > 0 ? payload[0] : 0);
}

CMC_DESCRIBE(reply_text, operation_text)
#endif
