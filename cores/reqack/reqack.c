/*
 * reqack: a request/acknowledge protocol with retransmission, in C.
 *
 * Node 0 is the sender, every other node a receiver. A client request to the sender
 * is made durable (PERSIST pending), then sent as DATA to every receiver and
 * retransmitted on timer 0 until each receiver has ACKed. A receiver stores the
 * request id durably and ACKs only once the store is flushed. When all ACKs are in,
 * the sender durably clears pending and only then replies OK. A request arriving
 * while one is in progress is answered BUSY.
 *
 * Same semantics and state layout as crates/world/src/example_cores/reqack.rs.
 * Planted bugs: -DCMC_BUG=1 replies before the clear of pending is flushed;
 * -DCMC_BUG=2 makes receivers ACK before their store is flushed.
 */
#include <stdio.h>

#include "cmc.h"
#include "reqack.h"

#ifndef CMC_BUG
#define CMC_BUG 0
#endif

#define TRY(expr) do { if ((expr) != 0) return -1; } while (0)

static int send_msg(cmc_outputs *out, uint32_t dst, uint32_t type, uint32_t request) {
    struct reqack_msg msg = { type, request };
    return cmc_send(out, dst, &msg, sizeof msg);
}

static uint32_t receivers(const cmc_config *cfg) {
    return (uint32_t)((1ull << cfg->nodes) - 2);
}

static int read_word(const cmc_event *ev, uint32_t at, uint32_t *value) {
    if (ev->len < at + 4) return -1;
    memcpy(value, ev->payload + at, 4);
    return 0;
}

static int send_data(const cmc_config *cfg, const struct reqack_volatile *v, cmc_outputs *out) {
    for (uint32_t node = 1; node < cfg->nodes; node++)
        if (!(v->acked & (1u << node))) TRY(send_msg(out, node, REQACK_MSG_DATA, v->request - 1));
    return cmc_set_timer(out, REQACK_TIMER_RESEND);
}

static int sender(const cmc_config *cfg, const struct reqack_durable *d, struct reqack_volatile *v,
                  const cmc_event *ev, cmc_outputs *out) {
    uint8_t reply;
    uint32_t value, type, request;
    switch (ev->kind) {
    case CMC_EV_START:
        if (d->pending != 0) {
            memset(v, 0, sizeof *v);
            v->phase = REQACK_SENDING;
            v->request = d->pending;
            TRY(send_data(cfg, v, out));
        }
        return 0;
    case CMC_EV_CLIENT:
        if (v->phase != REQACK_IDLE) {
            reply = REQACK_REPLY_BUSY;
            return cmc_reply(out, ev->id, &reply, 1);
        }
        v->phase = REQACK_PERSISTING;
        v->request = ev->id + 1;
        return cmc_persist(out, offsetof(struct reqack_durable, pending), &v->request, 4);
    case CMC_EV_FLUSHED:
        if (read_word(ev, 0, &value) != 0) return 3;
        if (value != 0 && v->phase == REQACK_PERSISTING) {
            v->phase = REQACK_SENDING;
            v->acked = 0;
            TRY(send_data(cfg, v, out));
        } else if (value == 0 && v->phase == REQACK_CLEARING) {
            reply = REQACK_REPLY_OK;
            TRY(cmc_reply(out, v->request - 1, &reply, 1));
            memset(v, 0, sizeof *v);
        }
        return 0;
    case CMC_EV_TIMER:
        if (v->phase == REQACK_SENDING) TRY(send_data(cfg, v, out));
        return 0;
    case CMC_EV_RECV:
        if (read_word(ev, 0, &type) != 0 || read_word(ev, 4, &request) != 0) return 1;
        if (type == REQACK_MSG_ACK && v->phase == REQACK_SENDING && request + 1 == v->request &&
            ev->src != 0) {
            v->acked |= 1u << ev->src;
            if (v->acked == receivers(cfg)) {
                value = 0;
                TRY(cmc_cancel_timer(out, REQACK_TIMER_RESEND));
                TRY(cmc_persist(out, offsetof(struct reqack_durable, pending), &value, 4));
#if CMC_BUG == 1
                reply = REQACK_REPLY_OK;
                TRY(cmc_reply(out, v->request - 1, &reply, 1));
                memset(v, 0, sizeof *v);
#else
                v->phase = REQACK_CLEARING;
#endif
            }
        }
        return 0;
    default:
        return 0;
    }
}

static int receiver(const struct reqack_durable *d, struct reqack_volatile *v, const cmc_event *ev,
                    cmc_outputs *out) {
    uint8_t reply;
    uint32_t value, type, request, bit, newly;
    switch (ev->kind) {
    case CMC_EV_CLIENT:
        reply = REQACK_REPLY_BUSY;
        return cmc_reply(out, ev->id, &reply, 1);
    case CMC_EV_RECV:
        if (read_word(ev, 0, &type) != 0 || read_word(ev, 4, &request) != 0) return 1;
        if (type != REQACK_MSG_DATA || request >= 32) return 2;
        bit = 1u << request;
        if (d->stored & bit) {
            TRY(send_msg(out, ev->src, REQACK_MSG_ACK, request));
        } else if (!(v->flushing & bit)) {
            v->flushing |= bit;
            value = d->stored | v->flushing;
            TRY(cmc_persist(out, offsetof(struct reqack_durable, stored), &value, 4));
#if CMC_BUG == 2
            TRY(send_msg(out, ev->src, REQACK_MSG_ACK, request));
#endif
        }
        return 0;
    case CMC_EV_FLUSHED:
        if (read_word(ev, 0, &value) != 0) return 3;
        newly = v->flushing & value;
        for (request = 0; request < 32; request++)
            if (newly & (1u << request)) TRY(send_msg(out, 0, REQACK_MSG_ACK, request));
        v->flushing &= ~value;
        return 0;
    default:
        return 0;
    }
}

static int reqack_step(const cmc_config *cfg, const void *durable, void *volatile_part,
                       const cmc_event *ev, cmc_outputs *out) {
    const struct reqack_durable *d = durable;
    struct reqack_volatile *v = volatile_part;
    return cfg->node == 0 ? sender(cfg, d, v, ev, out) : receiver(d, v, ev, out);
}

static void reqack_describe_state(const cmc_config *cfg, const void *durable,
                                  const void *volatile_part, char *buf, size_t cap) {
    static const char *const phases[] = { "IDLE", "PERSISTING", "SENDING", "CLEARING" };
    const struct reqack_durable *d = durable;
    const struct reqack_volatile *v = volatile_part;
    if (cfg->node == 0)
        snprintf(buf, cap, "sender %s request=%u acked=0x%x durable.pending=%u",
                 v->phase < 4 ? phases[v->phase] : "?", v->request, v->acked, d->pending);
    else
        snprintf(buf, cap, "receiver stored=0x%x flushing=0x%x", d->stored, v->flushing);
}

static void reqack_describe_message(const cmc_config *cfg, const uint8_t *msg, uint32_t len,
                                    char *buf, size_t cap) {
    struct reqack_msg m;
    (void)cfg;
    if (len >= sizeof m) {
        memcpy(&m, msg, sizeof m);
        if (m.type == REQACK_MSG_DATA) { snprintf(buf, cap, "DATA(r=%u)", m.request); return; }
        if (m.type == REQACK_MSG_ACK) { snprintf(buf, cap, "ACK(r=%u)", m.request); return; }
    }
    snprintf(buf, cap, "?(%u bytes)", len);
}

static const cmc_core reqack_core = {
    .abi_version = CMC_ABI_VERSION,
    .durable_size = sizeof(struct reqack_durable),
    .volatile_size = sizeof(struct reqack_volatile),
    .name = "reqack",
    .step = reqack_step,
    .describe_state = reqack_describe_state,
    .describe_message = reqack_describe_message,
    .permute = NULL,
};

const cmc_core *cmc_core_entry(void) { return &reqack_core; }

/* Node ids in the state, for symmetry reduction (`symmetry=1,2`: the receivers are
 * interchangeable): the sender's `acked`, a bit per receiver. Messages carry none. */
CMC_ID_FIELDS(CMC_ID_BITSET(CMC_ID_VOLATILE, offsetof(struct reqack_volatile, acked), 4))
