/*
 * raft_view.h: the layouts the canonical/raft adapter and its properties
 * share: the durable part (the library's storage as the World keeps it) and
 * the view (the node's canonical state, read from the library's struct raft
 * and the adapter's own bookkeeping).
 *
 * Terms, indexes and node ids are one byte each: the checked configurations
 * stay far below 255, and the adapter faults rather than wrap.
 */
#ifndef CR_VIEW_H
#define CR_VIEW_H

#include <stdint.h>

#include "cmc.h"

#define CR_NODES_MAX 5u
/* Highest log index a node may hold (index 1 is the bootstrap configuration). */
#define CR_INDEX_MAX 8u
/* Storage writes issued and not yet flushed, per node. */
#define CR_OPS_MAX 12u
/* Messages held back until a term or vote write is durable, per node. */
#define CR_HELD_MAX 24u
/* Bytes of the longest encoded message. */
#define CR_MESSAGE_MAX 32u

/* Roles as the view records them. */
enum { CR_DOWN = 0, CR_FOLLOWER = 1, CR_CANDIDATE = 2, CR_LEADER = 3 };

/* One log entry: its term, type (RAFT_COMMAND, RAFT_BARRIER, RAFT_CHANGE) and,
 * for a command, its value (the client request id plus one). All zero: no entry. */
typedef struct cr_entry {
    uint8_t term;
    uint8_t type;
    uint8_t value;
    uint8_t reserved;
} cr_entry;

/* The durable part: the term and vote, and the log's entries from index 2 on
 * (index 1 is the bootstrap configuration every node starts with). All zero
 * is a freshly bootstrapped node: term 1, no vote. */
typedef struct cr_durable {
    uint8_t term;
    uint8_t vote; /* node id + 1, 0: none */
    uint8_t reserved[2];
    cr_entry log[CR_INDEX_MAX - 1]; /* log[i] holds index i + 2 */
} cr_durable;

/* A storage write issued and not yet flushed. */
typedef struct cr_op {
    uint8_t kind;  /* CR_OP_* */
    uint8_t first; /* first index written (append, truncate) */
    uint8_t count; /* entries written (append) or cleared (truncate) */
    /* A follower's append: the AppendEntries that asked for it (its term,
     * previous index and leader commit), which the library consults when the
     * append completes. Zero otherwise. */
    uint8_t cause_term;
    uint8_t cause_prev;
    uint8_t cause_commit;
    uint8_t reserved[2];
} cr_op;

enum { CR_OP_NONE = 0, CR_OP_HEADER = 1, CR_OP_APPEND = 2, CR_OP_TRUNCATE = 3 };

/* A message held back until the term and vote it depends on are durable.
 * Identical messages to one node are held once, with their copies counted
 * up to 2 ("more than one"): the network holds surplus copies the same way
 * (net_bound=1), and it is unordered, so their order does not matter. */
typedef struct cr_held {
    uint8_t dst;
    uint8_t len;
    uint8_t copies;
    uint8_t bytes[CR_MESSAGE_MAX];
} cr_held;

/* What a leader knows of one follower. */
typedef struct cr_progress {
    uint8_t next;
    uint8_t match;
    uint8_t mode; /* probe, pipeline or snapshot */
    uint8_t recent_recv;
    uint8_t last_send; /* in ticks */
    uint8_t reserved[3];
} cr_progress;

/* The view: everything that decides what the node does next. */
typedef struct cr_view {
    uint8_t role; /* CR_*; CR_DOWN: created, not started yet */
    uint8_t term;
    uint8_t vote;       /* node id + 1, 0: none */
    uint8_t last_index; /* of the in-memory log */
    uint8_t commit;
    uint8_t applied;
    uint8_t stored; /* raft's last_stored */
    uint8_t leader; /* follower: the leader it knows, node id + 1 */
    uint8_t timer_start; /* election timer start, in ticks */
    uint8_t issued_last; /* last index of the log as issued to storage */
    uint8_t ops;   /* entries of `op` in use */
    uint8_t held;  /* entries of `hold` in use */
    uint8_t votes; /* candidate: bit per node that granted its vote */
    uint8_t pre_vote;
    uint8_t reserved[2];
    cr_entry log[CR_INDEX_MAX + 1];     /* log[i]: index i (log[0] unused) */
    cr_entry applied_log[CR_INDEX_MAX + 1]; /* the entry applied at each index */
    cr_progress progress[CR_NODES_MAX];
    cr_op op[CR_OPS_MAX];
    cr_held hold[CR_HELD_MAX];
} cr_view;

#endif /* CR_VIEW_H */
