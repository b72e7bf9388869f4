/*
 * lease.c: a leader lease, as a cmc core.
 *
 * Node 0 is the lease server; nodes 1.. are candidates. A client write sent
 * to a candidate is served only under an unexpired lease: the candidate
 * writes it durably (PERSIST) and replies once the write is flushed.
 *
 *   candidate                                   server
 *   CLIENT r, under a lease: queue r, WAKE to serve it
 *   CLIENT r, no lease: queue r, REQ(asked_at = clock) ->
 *                                               free: GRANT(asked_at, expiry),
 *                                                     expiry = clock + L + 2K,
 *                                                     SET_TIMER_AT(expiry)
 *                                               busy: BUSY
 *   <- GRANT: lease until asked_at + L (own clock); serve the queue
 *   <- BUSY: SET_TIMER_AT(clock + 1), then ask again
 *
 * L is the lease length (cfg0) and K the clock skew the protocol tolerates
 * (cfg1, to match the World's skew=K). Why 2K: the candidate's lease ends at
 * asked_at + L on its own clock. The server's clock was at least asked_at - K
 * when the REQ left, so the grant clock g >= asked_at - K; when the server's
 * clock reaches g + L + 2K, the candidate's is at least g + L + K >= asked_at + L.
 *
 * Planted bugs (compiled out unless CMC_BUG is set):
 *   1  forgets the WAKE for a write queued under a lease: it is never served;
 *   2  the holder keeps its lease until the server's expiry, read on its own
 *      clock: under skew it outlives the server's view and two nodes hold one;
 *   3  replies to a write before it is flushed.
 *
 * Build: cc -std=c11 -O2 -fPIC -I../../include -c lease.c -o lease.o
 * The step reads nothing but its arguments (cmc purity lease.o).
 */
#include <stdio.h>

#include "cmc.h"
#include "lease.h"

#ifndef CMC_BUG
#define CMC_BUG 0
#endif

static uint32_t lease_ticks(const cmc_config *cfg) {
    return cfg->params[0] ? (uint32_t)cfg->params[0] : LEASE_TICKS_DEFAULT;
}

static uint32_t lease_skew(const cmc_config *cfg) {
    return cfg->params[1] ? (uint32_t)cfg->params[1] : LEASE_SKEW_DEFAULT;
}

static int send_msg(cmc_outputs *out, uint32_t dst, uint32_t type, uint32_t asked_at,
                    uint32_t expiry) {
    struct lease_msg msg = {type, asked_at, expiry};
    return cmc_send(out, dst, &msg, sizeof msg);
}

/* Server: gives the lease to `candidate`, who asked at its clock `asked_at`. */
static int grant(const cmc_config *cfg, struct lease_volatile *v, uint32_t now,
                 uint32_t candidate, uint32_t asked_at, cmc_outputs *out) {
    v->holder = candidate + 1;
    v->expiry = now + lease_ticks(cfg) + 2 * lease_skew(cfg);
    v->granted_to |= 1u << candidate;
    if (cmc_set_timer_at(out, LEASE_TIMER_EXPIRY, v->expiry)) return -1;
    return send_msg(out, candidate, LEASE_GRANT, asked_at, v->expiry);
}

static int server_step(const cmc_config *cfg, struct lease_volatile *v, const cmc_event *ev,
                       cmc_outputs *out) {
    uint32_t now = (uint32_t)ev->clock;
    if (ev->kind == CMC_EV_RECV && ev->len == sizeof(struct lease_msg)) {
        struct lease_msg msg;
        memcpy(&msg, ev->payload, sizeof msg);
        if (msg.type != LEASE_REQ) return 0;
        if (v->holder == 0) return grant(cfg, v, now, ev->src, msg.asked_at, out);
        return send_msg(out, ev->src, LEASE_BUSY, msg.asked_at, v->expiry);
    }
    if (ev->kind == CMC_EV_TIMER && ev->id == LEASE_TIMER_EXPIRY) {
        v->holder = 0; /* the timer fires only once the clock reached the expiry */
    }
    return 0;
}

/* Candidate: whether it holds an unexpired lease at its clock `now`. */
static int lease_valid(const struct lease_volatile *v, uint32_t now) {
    return v->has_lease && now < v->lease_until;
}

static int ask(struct lease_volatile *v, uint32_t now, cmc_outputs *out) {
    v->asking = 1;
    return send_msg(out, LEASE_SERVER, LEASE_REQ, now, 0);
}

/* Candidate: writes request `r` durably; the reply waits for the flush. */
static int write_request(uint32_t r, cmc_outputs *out) {
    uint8_t one = 1;
    if (cmc_persist(out, r, &one, 1)) return -1;
#if CMC_BUG == 3
    uint8_t ok = 1;
    return cmc_reply(out, r, &ok, 1); /* BUG: acknowledged before it is durable */
#else
    return 0;
#endif
}

/* Candidate: serves the queued writes under the lease, or asks for one. */
static int serve_pending(struct lease_volatile *v, uint32_t now, cmc_outputs *out) {
    if (v->pending == 0) return 0;
    if (!lease_valid(v, now)) return v->asking ? 0 : ask(v, now, out);
    for (uint32_t r = 0; r < LEASE_REQUESTS_MAX; r++)
        if ((v->pending >> r) & 1u)
            if (write_request(r, out)) return -1;
    v->pending = 0;
    return 0;
}

static int candidate_step(const cmc_config *cfg, struct lease_volatile *v, const cmc_event *ev,
                          cmc_outputs *out) {
    uint32_t now = (uint32_t)ev->clock;
    (void)cfg; /* read by lease_ticks, except in bug 2 */
    switch (ev->kind) {
    case CMC_EV_CLIENT:
        if (ev->id >= LEASE_REQUESTS_MAX) return -1;
        v->pending |= 1u << ev->id;
        if (!lease_valid(v, now)) return serve_pending(v, now, out); /* asks for a lease */
#if CMC_BUG == 1
        return 0; /* BUG: queued for a wake-up that is never scheduled */
#else
        return cmc_wake(out, LEASE_WAKE_SERVE); /* served in its own step, as the product's loop does */
#endif
    case CMC_EV_RECV: {
        struct lease_msg msg;
        if (ev->len != sizeof msg) return 0;
        memcpy(&msg, ev->payload, sizeof msg);
        v->asking = 0;
        if (msg.type == LEASE_BUSY) return cmc_set_timer_at(out, LEASE_TIMER_RETRY, now + 1);
        if (msg.type != LEASE_GRANT) return 0;
        v->has_lease = 1;
#if CMC_BUG == 2
        v->lease_until = msg.expiry; /* BUG: the server's clock read as its own */
#else
        v->lease_until = msg.asked_at + lease_ticks(cfg);
#endif
        return serve_pending(v, now, out);
    }
    case CMC_EV_WAKE:
    case CMC_EV_TIMER:
        return serve_pending(v, now, out);
    case CMC_EV_FLUSHED: {
#if CMC_BUG == 3
        return 0; /* already replied */
#else
        uint8_t ok = 1;
        return cmc_reply(out, ev->id, &ok, 1); /* the write at offset id is durable */
#endif
    }
    default:
        return 0;
    }
}

static int lease_step(const cmc_config *cfg, const void *durable, void *volatile_part,
                      const cmc_event *ev, cmc_outputs *out) {
    (void)durable;
    struct lease_volatile *v = volatile_part;
    if (cfg->nodes > LEASE_NODES_MAX) return -1;
    return cfg->node == LEASE_SERVER ? server_step(cfg, v, ev, out)
                                     : candidate_step(cfg, v, ev, out);
}

/* The written (durable) or pending requests as digits, e.g. "01". */
static void request_set(char *buf, size_t cap, uint32_t bits) {
    size_t at = 0;
    for (uint32_t r = 0; r < 10 && at + 1 < cap; r++)
        if ((bits >> r) & 1u) buf[at++] = (char)('0' + r);
    if (at == 0 && cap > 1) buf[at++] = '-';
    buf[at] = '\0';
}

static void describe_state(const cmc_config *cfg, const void *durable, const void *volatile_part,
                           char *buf, size_t cap) {
    const struct lease_durable *d = durable;
    const struct lease_volatile *v = volatile_part;
    if (cfg->node == LEASE_SERVER) {
        if (v->holder == 0)
            snprintf(buf, cap, "server: free");
        else
            snprintf(buf, cap, "server: n%u holds until %u", v->holder - 1, v->expiry);
        return;
    }
    uint32_t written = 0;
    for (uint32_t r = 0; r < LEASE_REQUESTS_MAX; r++) written |= (uint32_t)(d->written[r] != 0) << r;
    char pending[12], done[12];
    request_set(pending, sizeof pending, v->pending);
    request_set(done, sizeof done, written);
    if (v->has_lease)
        snprintf(buf, cap, "lease until %u, pending %s, written %s%s", v->lease_until, pending,
                 done, v->asking ? ", asking" : "");
    else
        snprintf(buf, cap, "no lease, pending %s, written %s%s", pending, done,
                 v->asking ? ", asking" : "");
}

static void describe_message(const cmc_config *cfg, const uint8_t *bytes, uint32_t len,
                             char *buf, size_t cap) {
    (void)cfg;
    struct lease_msg msg;
    if (len != sizeof msg) {
        snprintf(buf, cap, "?");
        return;
    }
    memcpy(&msg, bytes, sizeof msg);
    if (msg.type == LEASE_REQ)
        snprintf(buf, cap, "REQ(asked_at=%u)", msg.asked_at);
    else if (msg.type == LEASE_GRANT)
        snprintf(buf, cap, "GRANT(asked_at=%u, expiry=%u)", msg.asked_at, msg.expiry);
    else if (msg.type == LEASE_BUSY)
        snprintf(buf, cap, "BUSY(until=%u)", msg.expiry);
    else
        snprintf(buf, cap, "?(%u)", msg.type);
}

static const cmc_core lease_core = {
    .abi_version = CMC_ABI_VERSION,
    .durable_size = sizeof(struct lease_durable),
    .volatile_size = sizeof(struct lease_volatile),
    .name = "lease",
    .step = lease_step,
    .describe_state = describe_state,
    .describe_message = describe_message,
};

const cmc_core *cmc_core_entry(void) { return &lease_core; }
