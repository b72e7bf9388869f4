/* two_phase: two-phase commit with a durable decision. State layout and messages.
 * Mirrored in crates/protocols/src/two_phase.rs, which reads it in properties. */
#ifndef TWO_PHASE_H
#define TWO_PHASE_H

#include <stdint.h>

/* Messages: { type, tx } where tx is the client request id + 1. */
enum tpc_msg_type {
    TPC_PREPARE = 1, /* coordinator -> RM: vote on tx */
    TPC_YES = 2,     /* RM -> coordinator: prepared (durably) */
    TPC_NO = 3,      /* RM -> coordinator: refuses (has aborted) */
    TPC_COMMIT = 4,  /* coordinator -> RM: the decision is commit */
    TPC_ABORT = 5,   /* coordinator -> RM: the decision is abort */
    TPC_STATUS = 6,  /* prepared RM -> coordinator: what was decided? */
    TPC_DONE = 7     /* RM -> coordinator: outcome recorded durably */
};

/* Durable record, coordinator: tx begun and its decision. RM: tx and its state. */
enum tpc_record {
    TPC_NONE = 0,      /* coordinator: tx begun, undecided */
    TPC_COMMITTED = 1, /* coordinator decision / RM outcome */
    TPC_ABORTED = 2,   /* coordinator decision / RM outcome */
    TPC_PREPARED = 3   /* RM: voted yes, waiting for the decision */
};

/* Reply to the client. */
enum tpc_reply { TPC_REPLY_BUSY = 0, TPC_REPLY_COMMITTED = 1, TPC_REPLY_ABORTED = 2 };

/* Timers. */
#define TPC_TIMER_VOTES 0u  /* coordinator: votes took too long, abort */
#define TPC_TIMER_RESEND 1u /* coordinator: resend the decision to RMs without DONE */
#define TPC_TIMER_STATUS 2u /* RM: prepared for too long, ask the coordinator */

/* Coordinator phases (volatile). */
enum tpc_phase {
    TPC_IDLE = 0,
    TPC_BEGINNING = 1,  /* waiting for the begin record to be flushed */
    TPC_COLLECTING = 2, /* PREPARE sent, counting votes */
    TPC_DECIDING = 3,   /* waiting for the decision to be flushed */
    TPC_FINISHING = 4   /* decision sent, waiting for every RM's DONE */
};

struct tpc_durable {
    uint32_t tx;     /* request id + 1 of the latest transaction; 0 for none */
    uint32_t record; /* enum tpc_record */
};

struct tpc_volatile {
    uint32_t phase;    /* coordinator: enum tpc_phase; RM: 1 while a persist is unflushed */
    uint32_t tx;       /* transaction in progress (RM: of the unflushed record) */
    uint32_t decision; /* coordinator: TPC_COMMITTED or TPC_ABORTED once decided;
                          RM: the unflushed record */
    uint32_t yes;      /* coordinator: bit per RM that voted yes */
    uint32_t done;     /* coordinator: bit per RM that reported DONE; RM: 1 if the record
                          being persisted carries out a decision (DONE follows) */
    uint32_t replied;  /* coordinator: 1 once the client was answered */
};

struct tpc_msg {
    uint32_t type; /* enum tpc_msg_type */
    uint32_t tx;
};

#endif
