/*
 * two_phase: two-phase commit with a durable decision, in C.
 *
 * Node 0 is the coordinator, nodes 1..n-1 are resource managers (RMs). A client
 * request to the coordinator is a transaction, tx = request id + 1; one runs at
 * a time (others are answered BUSY).
 *
 * Coordinator: durably records "tx begun", sends PREPARE to every RM and arms
 * the vote timer. All YES votes: durably decide COMMIT. A NO vote or the vote
 * timer: durably decide ABORT. Once the decision is flushed it is sent to every
 * RM and only then replied to the client. The decision is resent on a timer
 * until every RM has reported DONE; only then may the next transaction begin.
 * After a crash, a durable decision is resent; a begun, undecided transaction
 * is aborted (durably) and the client told so.
 *
 * RM: on PREPARE it votes NO if configured to (bit `node` of cfg0), recording
 * ABORTED; otherwise it durably records PREPARED and votes YES once that is
 * flushed, then asks the coordinator for the decision on a timer. A decision is
 * recorded durably and acknowledged with DONE once flushed. A decision for a
 * transaction the RM never prepared (its work was lost) is recorded as ABORTED.
 *
 * Planted bugs (compiled out by default):
 *   CMC_BUG 1: the coordinator replies COMMITTED before the decision is flushed;
 *   CMC_BUG 2: the vote count is off by one (commit on n-2 YES votes of n-1 RMs);
 *   CMC_BUG 3: an RM votes YES before its PREPARED record is flushed;
 *   CMC_BUG 4: a restarted coordinator skips recovery and answers STATUS from memory only,
 *              so a prepared RM is told "abort" for a committed transaction.
 */
#include <stdio.h>

#include "cmc.h"
#include "two_phase.h"

#ifndef CMC_BUG
#define CMC_BUG 0
#endif

#define TRY(expr) do { if ((expr) != 0) return -1; } while (0)

enum { ERR_SHORT_MESSAGE = 1, ERR_BAD_FLUSH = 2 };

static int send_msg(cmc_outputs *out, uint32_t dst, uint32_t type, uint32_t tx) {
    struct tpc_msg msg = { type, tx };
    return cmc_send(out, dst, &msg, sizeof msg);
}

static int persist_record(cmc_outputs *out, uint32_t tx, uint32_t record) {
    struct tpc_durable d = { tx, record };
    return cmc_persist(out, 0, &d, sizeof d);
}

static uint32_t all_rms(const cmc_config *cfg) {
    return (uint32_t)((1ull << cfg->nodes) - 2);
}

static uint32_t popcount(uint32_t bits) {
    uint32_t count = 0;
    for (; bits; bits &= bits - 1) count++;
    return count;
}

static int broadcast(const cmc_config *cfg, uint32_t skip, cmc_outputs *out, uint32_t type,
                     uint32_t tx) {
    for (uint32_t rm = 1; rm < cfg->nodes; rm++)
        if (!(skip & (1u << rm))) TRY(send_msg(out, rm, type, tx));
    return 0;
}

static uint32_t decision_msg(uint32_t decision) {
    return decision == TPC_COMMITTED ? TPC_COMMIT : TPC_ABORT;
}

/* ---- coordinator ---- */

static int decide(struct tpc_volatile *v, uint32_t decision, cmc_outputs *out) {
    v->phase = TPC_DECIDING;
    v->decision = decision;
    TRY(cmc_cancel_timer(out, TPC_TIMER_VOTES));
#if CMC_BUG == 1
    if (decision == TPC_COMMITTED) {
        uint8_t reply = TPC_REPLY_COMMITTED;
        TRY(cmc_reply(out, v->tx - 1, &reply, 1));
        v->replied = 1;
    }
#endif
    return persist_record(out, v->tx, decision);
}

static int finish(const cmc_config *cfg, struct tpc_volatile *v, cmc_outputs *out) {
    v->phase = TPC_FINISHING;
    TRY(broadcast(cfg, v->done, out, decision_msg(v->decision), v->tx));
    return cmc_set_timer(out, TPC_TIMER_RESEND);
}

static int coordinator_start(const cmc_config *cfg, const struct tpc_durable *d,
                             struct tpc_volatile *v, cmc_outputs *out) {
#if CMC_BUG == 4
    /* Bug: recovery is skipped; the durable record is never read again. */
    (void)cfg, (void)d, (void)v, (void)out;
    return 0;
#else
    if (d->tx == 0) return 0;
    v->tx = d->tx;
    if (d->record == TPC_COMMITTED || d->record == TPC_ABORTED) {
        /* The client may or may not have been answered before the crash. */
        v->decision = d->record;
        v->replied = 1;
        return finish(cfg, v, out);
    }
    return decide(v, TPC_ABORTED, out);
#endif
}

static int coordinator_flushed(const cmc_config *cfg, struct tpc_volatile *v,
                               const struct tpc_durable *flushed, cmc_outputs *out) {
    if (flushed->tx != v->tx) return 0;
    if (v->phase == TPC_BEGINNING && flushed->record == TPC_NONE) {
        v->phase = TPC_COLLECTING;
        TRY(broadcast(cfg, 0, out, TPC_PREPARE, v->tx));
        return cmc_set_timer(out, TPC_TIMER_VOTES);
    }
    if (v->phase == TPC_DECIDING && flushed->record == v->decision) {
        if (!v->replied) {
            uint8_t reply = v->decision == TPC_COMMITTED ? TPC_REPLY_COMMITTED : TPC_REPLY_ABORTED;
            TRY(cmc_reply(out, v->tx - 1, &reply, 1));
            v->replied = 1;
        }
        return finish(cfg, v, out);
    }
    return 0;
}

static int coordinator_recv(const cmc_config *cfg, const struct tpc_durable *d,
                            struct tpc_volatile *v, uint32_t src, const struct tpc_msg *m,
                            cmc_outputs *out) {
    uint32_t bit = 1u << src;
    switch (m->type) {
    case TPC_YES:
        if (v->phase != TPC_COLLECTING || m->tx != v->tx) return 0;
        v->yes |= bit;
#if CMC_BUG == 2
        if (popcount(v->yes) + 1 >= popcount(all_rms(cfg))) return decide(v, TPC_COMMITTED, out);
#else
        if (popcount(v->yes) == popcount(all_rms(cfg))) return decide(v, TPC_COMMITTED, out);
#endif
        return 0;
    case TPC_NO:
        if (v->phase != TPC_COLLECTING || m->tx != v->tx) return 0;
        return decide(v, TPC_ABORTED, out);
    case TPC_STATUS: {
        /* Answer only from the flushed decision; an unknown tx was aborted (presumed abort). */
        struct tpc_durable known = *d;
#if CMC_BUG == 4
        /* Bug: answers from memory, so after a restart every transaction looks unknown. */
        known.tx = v->phase == TPC_FINISHING ? v->tx : 0;
        known.record = v->decision;
#endif
        if (known.tx == m->tx && (known.record == TPC_COMMITTED || known.record == TPC_ABORTED))
            return send_msg(out, src, decision_msg(known.record), m->tx);
        if (m->tx != known.tx && m->tx != v->tx) return send_msg(out, src, TPC_ABORT, m->tx);
        return 0;
    }
    case TPC_DONE:
        if (v->phase != TPC_FINISHING || m->tx != v->tx) return 0;
        v->done |= bit;
        if (v->done == all_rms(cfg)) {
            TRY(cmc_cancel_timer(out, TPC_TIMER_RESEND));
            memset(v, 0, sizeof *v);
        }
        return 0;
    default:
        return 0;
    }
}

static int coordinator(const cmc_config *cfg, const struct tpc_durable *d, struct tpc_volatile *v,
                       const cmc_event *ev, const struct tpc_msg *m, cmc_outputs *out) {
    uint8_t reply;
    switch (ev->kind) {
    case CMC_EV_START:
        return coordinator_start(cfg, d, v, out);
    case CMC_EV_CLIENT:
        if (v->phase != TPC_IDLE) {
            reply = TPC_REPLY_BUSY;
            return cmc_reply(out, ev->id, &reply, 1);
        }
        v->phase = TPC_BEGINNING;
        v->tx = ev->id + 1;
        return persist_record(out, v->tx, TPC_NONE);
    case CMC_EV_FLUSHED: {
        struct tpc_durable flushed;
        if (ev->len != sizeof flushed) return ERR_BAD_FLUSH;
        memcpy(&flushed, ev->payload, sizeof flushed);
        return coordinator_flushed(cfg, v, &flushed, out);
    }
    case CMC_EV_TIMER:
        if (ev->id == TPC_TIMER_VOTES && v->phase == TPC_COLLECTING)
            return decide(v, TPC_ABORTED, out);
        if (ev->id == TPC_TIMER_RESEND && v->phase == TPC_FINISHING) return finish(cfg, v, out);
        return 0;
    case CMC_EV_RECV:
        return coordinator_recv(cfg, d, v, ev->src, m, out);
    default:
        return 0;
    }
}

/* ---- resource manager ---- */

/* The RM's latest record: the unflushed one if a persist is outstanding. */
static void rm_latest(const struct tpc_durable *d, const struct tpc_volatile *v,
                      struct tpc_durable *latest) {
    if (v->phase) {
        latest->tx = v->tx;
        latest->record = v->decision;
    } else {
        *latest = *d;
    }
}

/* Records `record` durably; `decided` says whether it carries out the coordinator's decision
 * (then DONE follows the flush) or is the RM's own vote. */
static int rm_record(struct tpc_volatile *v, uint32_t tx, uint32_t record, uint32_t decided,
                     cmc_outputs *out) {
    v->phase = 1;
    v->tx = tx;
    v->decision = record;
    v->done = decided;
    return persist_record(out, tx, record);
}

static int rm_recv(const cmc_config *cfg, const struct tpc_durable *d, struct tpc_volatile *v,
                   const struct tpc_msg *m, cmc_outputs *out) {
    struct tpc_durable latest;
    rm_latest(d, v, &latest);
    int votes_no = (cfg->params[0] >> cfg->node) & 1;
    switch (m->type) {
    case TPC_PREPARE:
        if (latest.tx == m->tx) {
            /* A retransmitted PREPARE: repeat a vote that is already durable. */
            if (!v->phase && d->record == TPC_PREPARED) return send_msg(out, 0, TPC_YES, m->tx);
            if (latest.record == TPC_ABORTED) return send_msg(out, 0, TPC_NO, m->tx);
            return 0;
        }
        if (latest.tx > m->tx) return 0;
        if (votes_no) {
            TRY(rm_record(v, m->tx, TPC_ABORTED, 0, out));
            return send_msg(out, 0, TPC_NO, m->tx);
        }
        TRY(rm_record(v, m->tx, TPC_PREPARED, 0, out));
#if CMC_BUG == 3
        TRY(send_msg(out, 0, TPC_YES, m->tx));
#endif
        return 0;
    case TPC_COMMIT:
    case TPC_ABORT: {
        uint32_t outcome = m->type == TPC_COMMIT ? TPC_COMMITTED : TPC_ABORTED;
        if (latest.tx > m->tx) return 0;
        if (latest.tx == m->tx && latest.record != TPC_PREPARED) {
            /* Already decided: acknowledge again once it is durable. */
            if (!v->phase) return send_msg(out, 0, TPC_DONE, m->tx);
            return 0;
        }
        /* A decision for a tx this RM never prepared: its work is lost, so it aborted. */
        if (latest.tx != m->tx) outcome = TPC_ABORTED;
        TRY(cmc_cancel_timer(out, TPC_TIMER_STATUS));
        return rm_record(v, m->tx, outcome, 1, out);
    }
    default:
        return 0;
    }
}

static int rm(const cmc_config *cfg, const struct tpc_durable *d, struct tpc_volatile *v,
              const cmc_event *ev, const struct tpc_msg *m, cmc_outputs *out) {
    uint8_t reply = TPC_REPLY_BUSY;
    switch (ev->kind) {
    case CMC_EV_START:
        if (d->record == TPC_PREPARED) return cmc_set_timer(out, TPC_TIMER_STATUS);
        return 0;
    case CMC_EV_CLIENT:
        return cmc_reply(out, ev->id, &reply, 1);
    case CMC_EV_RECV:
        return rm_recv(cfg, d, v, m, out);
    case CMC_EV_FLUSHED: {
        struct tpc_durable flushed;
        if (ev->len != sizeof flushed) return ERR_BAD_FLUSH;
        memcpy(&flushed, ev->payload, sizeof flushed);
        if (!v->phase || flushed.tx != v->tx || flushed.record != v->decision) return 0;
        uint32_t decided = v->done;
        memset(v, 0, sizeof *v);
        if (flushed.record == TPC_PREPARED) {
#if CMC_BUG != 3
            TRY(send_msg(out, 0, TPC_YES, flushed.tx));
#endif
            return cmc_set_timer(out, TPC_TIMER_STATUS);
        }
        return decided ? send_msg(out, 0, TPC_DONE, flushed.tx) : 0;
    }
    case CMC_EV_TIMER:
        if (ev->id == TPC_TIMER_STATUS && !v->phase && d->record == TPC_PREPARED) {
            TRY(send_msg(out, 0, TPC_STATUS, d->tx));
            return cmc_set_timer(out, TPC_TIMER_STATUS);
        }
        return 0;
    default:
        return 0;
    }
}

static int two_phase_step(const cmc_config *cfg, const void *durable, void *volatile_part,
                          const cmc_event *ev, cmc_outputs *out) {
    const struct tpc_durable *d = durable;
    struct tpc_volatile *v = volatile_part;
    struct tpc_msg m = { 0, 0 };
    if (ev->kind == CMC_EV_RECV) {
        if (ev->len != sizeof m) return ERR_SHORT_MESSAGE;
        memcpy(&m, ev->payload, sizeof m);
    }
    return cfg->node == 0 ? coordinator(cfg, d, v, ev, &m, out) : rm(cfg, d, v, ev, &m, out);
}

static const char *record_name(uint32_t record) {
    static const char *const names[] = { "NONE", "COMMITTED", "ABORTED", "PREPARED" };
    return record < 4 ? names[record] : "?";
}

static void two_phase_describe_state(const cmc_config *cfg, const void *durable,
                                     const void *volatile_part, char *buf, size_t cap) {
    static const char *const phases[] = { "IDLE", "BEGINNING", "COLLECTING", "DECIDING",
                                          "FINISHING" };
    const struct tpc_durable *d = durable;
    const struct tpc_volatile *v = volatile_part;
    if (cfg->node == 0)
        snprintf(buf, cap, "coordinator %s tx=%u decision=%s yes=0x%x done=0x%x durable=(tx %u, %s)",
                 v->phase < 5 ? phases[v->phase] : "?", v->tx, record_name(v->decision), v->yes,
                 v->done, d->tx, record_name(d->record));
    else
        snprintf(buf, cap, "rm %s durable=(tx %u, %s)%s", v->phase ? "persisting" : "idle", d->tx,
                 record_name(d->record), v->phase ? " (unflushed record pending)" : "");
}

static void two_phase_describe_message(const cmc_config *cfg, const uint8_t *msg, uint32_t len,
                                       char *buf, size_t cap) {
    static const char *const names[] = { "?", "PREPARE", "YES", "NO", "COMMIT", "ABORT",
                                         "STATUS", "DONE" };
    struct tpc_msg m;
    (void)cfg;
    if (len == sizeof m) {
        memcpy(&m, msg, sizeof m);
        snprintf(buf, cap, "%s(tx=%u)", m.type < 8 ? names[m.type] : "?", m.tx);
        return;
    }
    snprintf(buf, cap, "?(%u bytes)", len);
}

static const cmc_core two_phase_core = {
    .abi_version = CMC_ABI_VERSION,
    .durable_size = sizeof(struct tpc_durable),
    .volatile_size = sizeof(struct tpc_volatile),
    .name = "two_phase",
    .step = two_phase_step,
    .describe_state = two_phase_describe_state,
    .describe_message = two_phase_describe_message,
    .permute = NULL,
};

const cmc_core *cmc_core_entry(void) { return &two_phase_core; }
