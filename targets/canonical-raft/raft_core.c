/*
 * raft_core.c: canonical/raft, as Debian ships it (libraft.so.2), under cmc.
 *
 * The library is not changed: this adapter is a `struct raft_io` over the
 * World and a heap-state core (include/cmc_heap.h). Per World event:
 *
 *   START    a node object: the library's struct raft over this raft_io,
 *            loading its term, vote and log from the durable part. raft_start
 *            runs at the node's first other event, at the START's clock;
 *   TICK     the io's time becomes the node's clock (one tick = TICK_MS) and
 *            the library's tick callback runs (timeouts, heartbeats);
 *   RECV     a message decoded and given to the library's recv callback;
 *   CLIENT   raft_apply of a command whose value is the request id + 1
 *            (a node that is not the leader ignores it);
 *   FLUSHED  the oldest storage write is durable: an append's callback runs
 *            once its entries are, and messages held back for a term or vote
 *            write are sent once it is (those over a step's outputs at a
 *            WAKE the step asks for).
 *
 * Storage: append and truncate are PERSISTs of the durable log's slots,
 * completed only by the World's FLUSHED (a crash loses what was issued and
 * not flushed). set_term and set_vote are synchronous in raft_io's contract:
 * they are PERSISTs too, and every message sent while one is not durable is
 * held back until it is, so no message reveals a term or vote a crash could
 * lose. Snapshots are off (threshold beyond the log's capacity).
 *
 * Memory: every allocation of the library (raft_heap_set) comes from the
 * node's arena, freed whole by destroy: the library's close path is never
 * needed, and a replay leaks nothing.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <raft.h>

#include "cmc_heap.h"
#include "raft_view.h"

/* Milliseconds of the library's time per tick of the node's clock. */
#define TICK_MS 1000u
#define ELECTION_TIMEOUT_MS 1000u
#define HEARTBEAT_TIMEOUT_MS 500u
/* Callbacks of sends completed at the end of a step. */
#define SENDS_MAX 32u

/* Adapter-level errors: the step's return code. */
enum {
    CR_ERR_LIBRARY = 1,  /* the library returned an error where none is expected */
    CR_ERR_CAPACITY = 2, /* a term, index, log, queue or message over the adapter's limits */
    CR_ERR_MESSAGE = 3,  /* a message the adapter cannot decode */
    CR_ERR_UNSUPPORTED = 4 /* the library asked for what the adapter does not model */
};

/* ---- the node's arena -------------------------------------------------- */

/* Header of an allocation; keeps the payload 16-byte aligned. */
typedef struct block {
    struct block *prev, *next;
    size_t size;
    size_t reserved;
} block;

typedef struct arena {
    block head; /* sentinel of a circular list */
} arena;

static _Thread_local arena *current_arena;

static void arena_init(arena *a) { a->head.prev = a->head.next = &a->head; }

static void *arena_malloc(void *data, size_t size) {
    (void)data;
    block *b = malloc(sizeof(block) + size);
    if (b == NULL || current_arena == NULL) {
        free(b);
        return NULL;
    }
    b->size = size;
    b->next = current_arena->head.next;
    b->prev = &current_arena->head;
    b->next->prev = b;
    current_arena->head.next = b;
    return b + 1;
}

static void arena_free(void *data, void *ptr) {
    (void)data;
    if (ptr == NULL) return;
    block *b = (block *)ptr - 1;
    b->prev->next = b->next;
    b->next->prev = b->prev;
    free(b);
}

static void *arena_calloc(void *data, size_t n, size_t size) {
    if (size != 0 && n > SIZE_MAX / size) return NULL;
    void *p = arena_malloc(data, n * size);
    if (p != NULL) memset(p, 0, n * size);
    return p;
}

static void *arena_realloc(void *data, void *ptr, size_t size) {
    if (ptr == NULL) return arena_malloc(data, size);
    block *old = (block *)ptr - 1;
    void *p = arena_malloc(data, size);
    if (p == NULL) return NULL;
    memcpy(p, ptr, old->size < size ? old->size : size);
    arena_free(data, ptr);
    return p;
}

static void *arena_aligned_alloc(void *data, size_t alignment, size_t size) {
    return alignment <= 16 ? arena_malloc(data, size) : NULL;
}

static void arena_aligned_free(void *data, size_t alignment, void *ptr) {
    (void)alignment;
    arena_free(data, ptr);
}

static void arena_release(arena *a) {
    block *b = a->head.next;
    while (b != &a->head) {
        block *next = b->next;
        free(b);
        b = next;
    }
    arena_init(a);
}

static struct raft_heap arena_heap = {NULL,         arena_malloc,        arena_free,        arena_calloc,
                                      arena_realloc, arena_aligned_alloc, arena_aligned_free};

/* ---- the node ------------------------------------------------------------ */

typedef struct pending_send {
    struct raft_io_send *req;
    raft_io_send_cb cb;
} pending_send;

typedef struct node {
    arena heap;
    cmc_config config;
    cr_durable durable;  /* as flushed at the START */
    struct raft raft;
    struct raft_io io;
    struct raft_fsm fsm;
    raft_io_tick_cb tick;
    raft_io_recv_cb recv;
    raft_time now;
    bool started;
    int error; /* the first adapter error of this step */
    cmc_outputs *out;
    cmc_output *header_write; /* this step's PERSIST of the term and vote */
    cr_durable issued;        /* the durable part once every issued write is flushed */
    uint8_t issued_last;
    cr_op op[CR_OPS_MAX];
    struct raft_io_append *append_req[CR_OPS_MAX]; /* an append op's request */
    uint8_t ops;
    cr_held hold[CR_HELD_MAX];
    uint8_t held;
    cr_op cause; /* the AppendEntries being handled: its term, prev index, commit */
    pending_send sends[SENDS_MAX];
    uint8_t n_sends;
    cr_entry applied_log[CR_INDEX_MAX + 1];
} node;

static const char *const addresses[CR_NODES_MAX] = {"1", "2", "3", "4", "5"};

static node *of(struct raft_io *io) { return io->impl; }

/* Records the first error of the step (later ones follow from it). */
static int fail(node *n, int error) {
    if (n->error == 0) n->error = error;
    return RAFT_IOERR;
}

/* A term, index or id as one byte, or a capacity error. */
static uint8_t byte(node *n, unsigned long long value) {
    if (value > 255) {
        fail(n, CR_ERR_CAPACITY);
        return 0;
    }
    return (uint8_t)value;
}

/* ---- messages: a compact encoding, one byte per field ---------------------- */

static uint8_t entry_value(const struct raft_entry *e) {
    return e->type == RAFT_COMMAND && e->buf.len > 0 ? ((const uint8_t *)e->buf.base)[0] : 0;
}

/* Encodes `m` into `bytes`; returns its length, 0 when it does not fit. */
static unsigned encode(node *n, const struct raft_message *m, uint8_t bytes[CR_MESSAGE_MAX]) {
    unsigned len = 0;
    bytes[len++] = (uint8_t)m->type;
    switch (m->type) {
    case RAFT_IO_APPEND_ENTRIES: {
        const struct raft_append_entries *a = &m->append_entries;
        if (5 + 3 * a->n_entries > CR_MESSAGE_MAX) return 0;
        bytes[len++] = byte(n, a->term);
        bytes[len++] = byte(n, a->prev_log_index);
        bytes[len++] = byte(n, a->prev_log_term);
        bytes[len++] = byte(n, a->leader_commit);
        bytes[len++] = (uint8_t)a->n_entries;
        for (unsigned i = 0; i < a->n_entries; i++) {
            bytes[len++] = byte(n, a->entries[i].term);
            bytes[len++] = (uint8_t)a->entries[i].type;
            bytes[len++] = entry_value(&a->entries[i]);
        }
        break;
    }
    case RAFT_IO_APPEND_ENTRIES_RESULT:
        bytes[len++] = byte(n, m->append_entries_result.term);
        bytes[len++] = byte(n, m->append_entries_result.rejected);
        bytes[len++] = byte(n, m->append_entries_result.last_log_index);
        break;
    case RAFT_IO_REQUEST_VOTE:
        bytes[len++] = byte(n, m->request_vote.term);
        bytes[len++] = byte(n, m->request_vote.candidate_id);
        bytes[len++] = byte(n, m->request_vote.last_log_index);
        bytes[len++] = byte(n, m->request_vote.last_log_term);
        bytes[len++] = (uint8_t)(m->request_vote.disrupt_leader | m->request_vote.pre_vote << 1);
        break;
    case RAFT_IO_REQUEST_VOTE_RESULT:
        bytes[len++] = byte(n, m->request_vote_result.term);
        bytes[len++] = (uint8_t)m->request_vote_result.vote_granted;
        bytes[len++] = (uint8_t)m->request_vote_result.pre_vote;
        break;
    case RAFT_IO_TIMEOUT_NOW:
        bytes[len++] = byte(n, m->timeout_now.term);
        bytes[len++] = byte(n, m->timeout_now.last_log_index);
        bytes[len++] = byte(n, m->timeout_now.last_log_term);
        break;
    default: /* InstallSnapshot: snapshots are off */
        fail(n, CR_ERR_UNSUPPORTED);
        return 0;
    }
    return len;
}

/* The data of an entry of `type` carrying `value`, allocated in the arena. */
static int entry_data(node *n, uint8_t type, uint8_t value, struct raft_buffer *buf) {
    if (type == RAFT_CHANGE) {
        struct raft_configuration conf;
        raft_configuration_init(&conf);
        int rv = 0;
        for (unsigned i = 0; i < n->config.nodes && rv == 0; i++)
            rv = raft_configuration_add(&conf, i + 1, addresses[i], RAFT_VOTER);
        if (rv == 0) rv = raft_configuration_encode(&conf, buf);
        raft_configuration_close(&conf);
        return rv;
    }
    buf->len = 8;
    buf->base = raft_calloc(1, 8);
    if (buf->base == NULL) return RAFT_NOMEM;
    ((uint8_t *)buf->base)[0] = value;
    return 0;
}

/* An array of entries for the library to own: each entry's data is its own batch. */
static struct raft_entry *entries_of(node *n, const cr_entry *from, unsigned count) {
    struct raft_entry *entries = raft_calloc(count ? count : 1, sizeof *entries);
    if (entries == NULL) return NULL;
    for (unsigned i = 0; i < count; i++) {
        entries[i].term = from[i].term;
        entries[i].type = from[i].type;
        if (entry_data(n, from[i].type, from[i].value, &entries[i].buf) != 0) return NULL;
        entries[i].batch = entries[i].buf.base;
    }
    return entries;
}

/* Decodes `bytes` from node `src` into `m`; 0 on success. */
static int decode(node *n, uint32_t src, const uint8_t *bytes, uint32_t len, struct raft_message *m) {
    memset(m, 0, sizeof *m);
    if (len < 1 || src >= n->config.nodes) return CR_ERR_MESSAGE;
    m->type = bytes[0];
    m->server_id = src + 1;
    m->server_address = addresses[src];
    static const uint8_t sizes[] = {0, 6, 4, 6, 4, 0, 4};
    if (m->type >= sizeof sizes || sizes[m->type] == 0 || len < sizes[m->type]) return CR_ERR_MESSAGE;
    switch (m->type) {
    case RAFT_IO_APPEND_ENTRIES: {
        struct raft_append_entries *a = &m->append_entries;
        a->term = bytes[1];
        a->prev_log_index = bytes[2];
        a->prev_log_term = bytes[3];
        a->leader_commit = bytes[4];
        a->n_entries = bytes[5];
        if (len != 6 + 3u * a->n_entries) return CR_ERR_MESSAGE;
        if (a->n_entries > 0) {
            cr_entry from[CR_INDEX_MAX + 1];
            if (a->n_entries > CR_INDEX_MAX) return CR_ERR_MESSAGE;
            for (unsigned i = 0; i < a->n_entries; i++)
                from[i] = (cr_entry){bytes[6 + 3 * i], bytes[7 + 3 * i], bytes[8 + 3 * i], 0};
            a->entries = entries_of(n, from, a->n_entries);
            if (a->entries == NULL) return CR_ERR_LIBRARY;
        }
        break;
    }
    case RAFT_IO_APPEND_ENTRIES_RESULT:
        m->append_entries_result.term = bytes[1];
        m->append_entries_result.rejected = bytes[2];
        m->append_entries_result.last_log_index = bytes[3];
        break;
    case RAFT_IO_REQUEST_VOTE:
        m->request_vote.term = bytes[1];
        m->request_vote.candidate_id = bytes[2];
        m->request_vote.last_log_index = bytes[3];
        m->request_vote.last_log_term = bytes[4];
        m->request_vote.disrupt_leader = bytes[5] & 1;
        m->request_vote.pre_vote = (bytes[5] >> 1) & 1;
        break;
    case RAFT_IO_REQUEST_VOTE_RESULT:
        m->request_vote_result.term = bytes[1];
        m->request_vote_result.vote_granted = bytes[2] != 0;
        m->request_vote_result.pre_vote = bytes[3];
        break;
    case RAFT_IO_TIMEOUT_NOW:
        m->timeout_now.term = bytes[1];
        m->timeout_now.last_log_index = bytes[2];
        m->timeout_now.last_log_term = bytes[3];
        break;
    }
    return 0;
}

/* ---- storage ----------------------------------------------------------------- */

static bool header_pending(const node *n) {
    for (unsigned i = 0; i < n->ops; i++)
        if (n->op[i].kind == CR_OP_HEADER) return true;
    return false;
}

static int push_op(node *n, cr_op op, struct raft_io_append *req) {
    if (n->ops == CR_OPS_MAX) return fail(n, CR_ERR_CAPACITY);
    n->append_req[n->ops] = req;
    n->op[n->ops++] = op;
    return 0;
}

/* Writes the term and vote: one PERSIST per step, rewritten by later changes. */
static int write_header(node *n) {
    uint8_t header[2] = {n->issued.term, n->issued.vote};
    if (n->header_write != NULL) {
        memcpy(n->header_write->payload, header, sizeof header);
        return 0;
    }
    if (cmc_persist(n->out, 0, header, sizeof header) != 0) return fail(n, CR_ERR_CAPACITY);
    n->header_write = &n->out->items[n->out->count - 1];
    return push_op(n, (cr_op){.kind = CR_OP_HEADER}, NULL);
}

/* Writes log slots [first, first + count) of the issued durable part. */
static int write_slots(node *n, unsigned first, unsigned count) {
    unsigned offset = (unsigned)offsetof(cr_durable, log) + (first - 2) * sizeof(cr_entry);
    if (cmc_persist(n->out, offset, &n->issued.log[first - 2], count * sizeof(cr_entry)) != 0)
        return fail(n, CR_ERR_CAPACITY);
    return 0;
}

static int io_init(struct raft_io *io, raft_id id, const char *address) {
    (void)io, (void)id, (void)address;
    return 0;
}

static void io_close(struct raft_io *io, raft_io_close_cb cb) {
    if (cb != NULL) cb(io);
}

static int io_load(struct raft_io *io, raft_term *term, raft_id *vote, struct raft_snapshot **snapshot,
                   raft_index *start_index, struct raft_entry *entries[], size_t *n_entries) {
    node *n = of(io);
    const cr_durable *d = &n->durable;
    *term = d->term == 0 ? 1 : d->term;
    *vote = d->vote;
    *snapshot = NULL;
    *start_index = 1;
    cr_entry from[CR_INDEX_MAX];
    unsigned count = 0;
    from[count++] = (cr_entry){1, RAFT_CHANGE, 0, 0};
    while (count < CR_INDEX_MAX && d->log[count - 1].term != 0) {
        from[count] = d->log[count - 1];
        count++;
    }
    *entries = entries_of(n, from, count);
    *n_entries = count;
    return *entries == NULL ? RAFT_NOMEM : 0;
}

static int io_start(struct raft_io *io, unsigned msecs, raft_io_tick_cb tick, raft_io_recv_cb recv) {
    (void)msecs;
    of(io)->tick = tick;
    of(io)->recv = recv;
    return 0;
}

static int io_unsupported_conf(struct raft_io *io, const struct raft_configuration *conf) {
    (void)conf;
    return fail(of(io), CR_ERR_UNSUPPORTED);
}

static int io_set_term(struct raft_io *io, raft_term term) {
    node *n = of(io);
    n->issued.term = byte(n, term);
    n->issued.vote = 0;
    return write_header(n);
}

static int io_set_vote(struct raft_io *io, raft_id id) {
    node *n = of(io);
    n->issued.vote = byte(n, id);
    return write_header(n);
}

static int io_send(struct raft_io *io, struct raft_io_send *req, const struct raft_message *m,
                   raft_io_send_cb cb) {
    node *n = of(io);
    uint8_t bytes[CR_MESSAGE_MAX];
    unsigned len = encode(n, m, bytes);
    if (len == 0 || m->server_id < 1 || m->server_id > n->config.nodes || n->n_sends == SENDS_MAX)
        return fail(n, CR_ERR_CAPACITY);
    uint32_t dst = (uint32_t)m->server_id - 1;
    if (header_pending(n)) {
        cr_held *h = NULL;
        for (unsigned i = 0; i < n->held && h == NULL; i++)
            if (n->hold[i].dst == dst && n->hold[i].len == len && memcmp(n->hold[i].bytes, bytes, len) == 0)
                h = &n->hold[i];
        if (h != NULL) {
            h->copies = 2;
        } else {
            if (n->held == CR_HELD_MAX) return fail(n, CR_ERR_CAPACITY);
            h = &n->hold[n->held++];
            memset(h, 0, sizeof *h);
            h->dst = (uint8_t)dst;
            h->len = (uint8_t)len;
            h->copies = 1;
            memcpy(h->bytes, bytes, len);
        }
    } else if (cmc_send(n->out, dst, bytes, len) != 0) {
        return fail(n, CR_ERR_CAPACITY);
    }
    n->sends[n->n_sends++] = (pending_send){req, cb};
    return 0;
}

static int io_append(struct raft_io *io, struct raft_io_append *req, const struct raft_entry entries[],
                     unsigned count, raft_io_append_cb cb) {
    node *n = of(io);
    unsigned first = n->issued_last + 1u;
    if (first + count - 1 > CR_INDEX_MAX || count == 0) return fail(n, CR_ERR_CAPACITY);
    for (unsigned i = 0; i < count; i++)
        n->issued.log[first - 2 + i] =
            (cr_entry){byte(n, entries[i].term), (uint8_t)entries[i].type, entry_value(&entries[i]), 0};
    req->cb = cb;
    n->issued_last = (uint8_t)(first + count - 1);
    if (write_slots(n, first, count) != 0) return RAFT_IOERR;
    cr_op op = n->cause;
    op.kind = CR_OP_APPEND;
    op.first = (uint8_t)first;
    op.count = (uint8_t)count;
    return push_op(n, op, req);
}

static int io_truncate(struct raft_io *io, raft_index index) {
    node *n = of(io);
    if (index < 2) return fail(n, CR_ERR_UNSUPPORTED);
    if (index > n->issued_last) return 0;
    unsigned count = n->issued_last - (unsigned)index + 1;
    memset(&n->issued.log[index - 2], 0, count * sizeof(cr_entry));
    n->issued_last = (uint8_t)(index - 1);
    if (write_slots(n, (unsigned)index, count) != 0) return RAFT_IOERR;
    return push_op(n, (cr_op){.kind = CR_OP_TRUNCATE, .first = (uint8_t)index, .count = (uint8_t)count}, NULL);
}

static int io_snapshot_put(struct raft_io *io, unsigned trailing, struct raft_io_snapshot_put *req,
                           const struct raft_snapshot *snapshot, raft_io_snapshot_put_cb cb) {
    (void)trailing, (void)req, (void)snapshot, (void)cb;
    return fail(of(io), CR_ERR_UNSUPPORTED);
}

static int io_snapshot_get(struct raft_io *io, struct raft_io_snapshot_get *req,
                           raft_io_snapshot_get_cb cb) {
    (void)req, (void)cb;
    return fail(of(io), CR_ERR_UNSUPPORTED);
}

static raft_time io_time(struct raft_io *io) { return of(io)->now; }

/* The randomized election timeout: its least value, so that one tick times out. */
static int io_random(struct raft_io *io, int min, int max) {
    (void)io, (void)max;
    return min;
}

static int fsm_apply(struct raft_fsm *fsm, const struct raft_buffer *buf, void **result) {
    (void)fsm, (void)buf;
    *result = NULL;
    return 0;
}

/* ---- the heap-state core ------------------------------------------------------ */

static void *cr_start(const cmc_config *config, const void *durable, cmc_outputs *out) {
    (void)out;
    static bool heap_set;
    if (!heap_set) {
        raft_heap_set(&arena_heap);
        heap_set = true;
    }
    if (config->nodes < 1 || config->nodes > CR_NODES_MAX) return NULL;
    node *n = calloc(1, sizeof *n);
    if (n == NULL) return NULL;
    arena_init(&n->heap);
    current_arena = &n->heap;
    n->config = *config;
    memcpy(&n->durable, durable, sizeof n->durable);
    n->issued = n->durable;
    if (n->issued.term == 0) n->issued.term = 1;
    n->issued_last = 1;
    while (n->issued_last < CR_INDEX_MAX && n->issued.log[n->issued_last - 1].term != 0) n->issued_last++;
    n->io = (struct raft_io){.version = 1,
                             .impl = n,
                             .init = io_init,
                             .close = io_close,
                             .load = io_load,
                             .start = io_start,
                             .bootstrap = io_unsupported_conf,
                             .recover = io_unsupported_conf,
                             .set_term = io_set_term,
                             .set_vote = io_set_vote,
                             .send = io_send,
                             .append = io_append,
                             .truncate = io_truncate,
                             .snapshot_put = io_snapshot_put,
                             .snapshot_get = io_snapshot_get,
                             .time = io_time,
                             .random = io_random};
    n->fsm = (struct raft_fsm){.version = 1, .apply = fsm_apply};
    int rv = raft_init(&n->raft, &n->io, &n->fsm, config->node + 1, addresses[config->node]);
    current_arena = NULL;
    if (rv != 0) {
        arena_release(&n->heap);
        free(n);
        return NULL;
    }
    raft_set_election_timeout(&n->raft, ELECTION_TIMEOUT_MS);
    raft_set_heartbeat_timeout(&n->raft, HEARTBEAT_TIMEOUT_MS);
    raft_set_snapshot_threshold(&n->raft, 1u << 30);
    return n;
}

/* Sends the messages held back, once no term or vote write is pending: as
 * many as this step's outputs can take, the rest at a WAKE it asks for. */
static void release_held(node *n) {
    if (header_pending(n) || n->held == 0) return;
    unsigned room = CMC_OUTPUTS_MAX - n->out->count, sent = 0, outputs = 0;
    /* Whole entries only, leaving one output for the WAKE if some remain. */
    while (sent < n->held && outputs + n->hold[sent].copies + (sent + 1 < n->held) <= room)
        outputs += n->hold[sent++].copies;
    for (unsigned i = 0; i < sent; i++)
        for (unsigned c = 0; c < n->hold[i].copies; c++)
            if (cmc_send(n->out, n->hold[i].dst, n->hold[i].bytes, n->hold[i].len) != 0) fail(n, CR_ERR_CAPACITY);
    memmove(&n->hold[0], &n->hold[sent], (n->held - sent) * sizeof n->hold[0]);
    n->held = (uint8_t)(n->held - sent);
    memset(&n->hold[n->held], 0, sent * sizeof n->hold[0]);
    if (n->held > 0 && cmc_wake(n->out, 0) != 0) fail(n, CR_ERR_CAPACITY);
}

/* The flush of the oldest write: an append completes once all of it is durable. */
static void flushed(node *n) {
    if (n->ops == 0) {
        fail(n, CR_ERR_LIBRARY);
        return;
    }
    cr_op op = n->op[0];
    struct raft_io_append *req = n->append_req[0];
    memmove(&n->op[0], &n->op[1], (n->ops - 1u) * sizeof n->op[0]);
    memmove(&n->append_req[0], &n->append_req[1], (n->ops - 1u) * sizeof n->append_req[0]);
    n->ops--;
    n->op[n->ops] = (cr_op){0};
    n->append_req[n->ops] = NULL;
    if (op.kind == CR_OP_APPEND) req->cb(req, 0);
    release_held(n);
}

static void apply_cb(struct raft_apply *req, int status, void *result) {
    (void)status, (void)result;
    raft_free(req);
}

static void client(node *n, const cmc_event *e) {
    if (raft_state(&n->raft) != RAFT_LEADER) return;
    struct raft_apply *req = raft_malloc(sizeof *req);
    struct raft_buffer buf;
    if (req == NULL || entry_data(n, RAFT_COMMAND, byte(n, e->id + 1u), &buf) != 0) {
        fail(n, CR_ERR_LIBRARY);
        return;
    }
    if (raft_apply(&n->raft, req, &buf, 1, apply_cb) != 0) fail(n, CR_ERR_LIBRARY);
}

/* The entry at `index` of the library's in-memory log, or NULL. */
static const struct raft_entry *log_entry(const struct raft *r, raft_index index) {
    const struct raft_log *l = &r->log;
    size_t n = l->back >= l->front ? l->back - l->front : l->size - l->front + l->back;
    if (index <= l->offset || index > l->offset + n) return NULL;
    return &l->entries[(l->front + (index - l->offset - 1)) % l->size];
}

static int cr_step(void *opaque, const cmc_config *config, const cmc_event *e, cmc_outputs *out) {
    node *n = opaque;
    (void)config;
    current_arena = &n->heap;
    n->out = out;
    n->header_write = NULL;
    n->error = 0;
    n->now = e->clock * TICK_MS;
    raft_index applied_before = n->raft.last_applied;
    if (!n->started) {
        /* The node's clock at its START: a TICK advanced it by one since;
         * any other first event finds it unchanged. */
        n->now = (e->kind == CMC_EV_TICK ? e->clock - 1 : e->clock) * TICK_MS;
        n->started = true;
        if (raft_start(&n->raft) != 0) fail(n, CR_ERR_LIBRARY);
        n->now = e->clock * TICK_MS;
    }
    if (n->error == 0) switch (e->kind) {
        case CMC_EV_TICK:
            n->tick(&n->io);
            break;
        case CMC_EV_RECV: {
            struct raft_message m;
            int rv = decode(n, e->src, e->payload, e->len, &m);
            if (rv != 0) {
                fail(n, rv);
            } else {
                if (m.type == RAFT_IO_APPEND_ENTRIES)
                    n->cause = (cr_op){.cause_term = e->payload[1], .cause_prev = e->payload[2],
                                       .cause_commit = e->payload[4]};
                n->recv(&n->io, &m);
                n->cause = (cr_op){0};
            }
            break;
        }
        case CMC_EV_FLUSHED:
            flushed(n);
            break;
        case CMC_EV_CLIENT:
            client(n, e);
            break;
        case CMC_EV_WAKE:
            release_held(n);
            break;
        default:
            break;
        }
    for (unsigned i = 0; i < n->n_sends; i++)
        if (n->sends[i].cb != NULL) n->sends[i].cb(n->sends[i].req, 0);
    n->n_sends = 0;
    for (raft_index i = applied_before + 1; i <= n->raft.last_applied && i <= CR_INDEX_MAX; i++) {
        const struct raft_entry *entry = log_entry(&n->raft, i);
        if (entry != NULL)
            n->applied_log[i] = (cr_entry){(uint8_t)entry->term, (uint8_t)entry->type, entry_value(entry), 0};
    }
    n->out = NULL;
    n->header_write = NULL;
    current_arena = NULL;
    return n->error;
}

static int cr_view_of(const void *opaque, const cmc_config *config, void *out) {
    const node *n = opaque;
    const struct raft *r = &n->raft;
    cr_view *v = out;
    (void)config;
    if (!n->started) {
        /* What the node will load at its first event. */
        v->role = CR_DOWN;
        v->term = n->issued.term;
        v->vote = n->issued.vote;
        v->last_index = n->issued_last;
        v->log[1] = (cr_entry){1, RAFT_CHANGE, 0, 0};
        for (unsigned i = 2; i <= n->issued_last; i++) v->log[i] = n->issued.log[i - 2];
        v->issued_last = n->issued_last;
        return 0;
    }
    if (r->current_term > 255 || raft_last_index((struct raft *)r) > CR_INDEX_MAX) return CR_ERR_CAPACITY;
    v->role = r->state == RAFT_LEADER ? CR_LEADER : r->state == RAFT_CANDIDATE ? CR_CANDIDATE : CR_FOLLOWER;
    v->term = (uint8_t)r->current_term;
    v->vote = (uint8_t)r->voted_for;
    v->last_index = (uint8_t)raft_last_index((struct raft *)r);
    v->commit = (uint8_t)r->commit_index;
    v->applied = (uint8_t)r->last_applied;
    v->stored = (uint8_t)r->last_stored;
    v->timer_start = (uint8_t)(r->election_timer_start / TICK_MS);
    v->issued_last = n->issued_last;
    for (raft_index i = 1; i <= v->last_index; i++) {
        const struct raft_entry *entry = log_entry(r, i);
        if (entry == NULL) return CR_ERR_LIBRARY;
        v->log[i] = (cr_entry){(uint8_t)entry->term, (uint8_t)entry->type, entry_value(entry), 0};
    }
    memcpy(v->applied_log, n->applied_log, sizeof v->applied_log);
    if (r->state == RAFT_FOLLOWER) v->leader = (uint8_t)r->follower_state.current_leader.id;
    if (r->state == RAFT_CANDIDATE) {
        for (unsigned i = 0; i < r->configuration.n; i++)
            if (r->candidate_state.votes[i]) v->votes |= (uint8_t)(1u << i);
        v->pre_vote = r->candidate_state.in_pre_vote;
    }
    if (r->state == RAFT_LEADER)
        for (unsigned i = 0; i < r->configuration.n; i++) {
            const struct raft_progress *p = &r->leader_state.progress[i];
            v->progress[i] = (cr_progress){(uint8_t)p->next_index, (uint8_t)p->match_index,
                                           (uint8_t)p->state, p->recent_recv,
                                           (uint8_t)(p->last_send / TICK_MS), {0}};
        }
    v->ops = n->ops;
    memcpy(v->op, n->op, sizeof v->op);
    v->held = n->held;
    memcpy(v->hold, n->hold, sizeof v->hold);
    return 0;
}

static void cr_destroy(void *opaque) {
    node *n = opaque;
    arena_release(&n->heap);
    free(n);
}

/* ---- descriptions ---------------------------------------------------------------- */

static const char *const role_names[] = {"unstarted", "follower", "candidate", "leader"};

static size_t put_entry(char *buf, size_t cap, size_t at, unsigned index, cr_entry e) {
    if (at >= cap) return at;
    int k = e.type == RAFT_COMMAND ? snprintf(buf + at, cap - at, " %u:t%u=v%u", index, e.term, e.value)
                                   : snprintf(buf + at, cap - at, " %u:t%u%s", index, e.term,
                                              e.type == RAFT_CHANGE ? "(conf)" : "(barrier)");
    return k < 0 ? at : at + (size_t)k;
}

static void cr_describe_state(const cmc_config *config, const void *durable, const void *view, char *buf,
                              size_t cap) {
    (void)config, (void)durable;
    const cr_view *v = view;
    size_t at = (size_t)snprintf(buf, cap, "%s term %u vote %u commit %u applied %u log[", role_names[v->role & 3],
                                 v->term, v->vote, v->commit, v->applied);
    for (unsigned i = 1; i <= v->last_index && i <= CR_INDEX_MAX; i++) at = put_entry(buf, cap, at, i, v->log[i]);
    if (at < cap) snprintf(buf + at, cap - at, " ] unflushed writes %u, held messages %u", v->ops, v->held);
}

static void cr_describe_message(const cmc_config *config, const uint8_t *m, uint32_t len, char *buf, size_t cap) {
    (void)config;
    if (len < 4) {
        snprintf(buf, cap, "?");
        return;
    }
    switch (m[0]) {
    case RAFT_IO_APPEND_ENTRIES: {
        size_t at = (size_t)snprintf(buf, cap, "AppendEntries term %u prev %u/t%u commit %u [", m[1], m[2], m[3], m[4]);
        for (unsigned i = 0; i < m[5] && 8 + 3 * i < len; i++)
            at = put_entry(buf, cap, at, m[2] + 1 + i, (cr_entry){m[6 + 3 * i], m[7 + 3 * i], m[8 + 3 * i], 0});
        if (at < cap) snprintf(buf + at, cap - at, " ]");
        break;
    }
    case RAFT_IO_APPEND_ENTRIES_RESULT:
        snprintf(buf, cap, "AppendEntriesResult term %u rejected %u last %u", m[1], m[2], m[3]);
        break;
    case RAFT_IO_REQUEST_VOTE:
        snprintf(buf, cap, "RequestVote term %u candidate %u last %u/t%u", m[1], m[2], m[3], m[4]);
        break;
    case RAFT_IO_REQUEST_VOTE_RESULT:
        snprintf(buf, cap, "RequestVoteResult term %u granted %u", m[1], m[2]);
        break;
    default:
        snprintf(buf, cap, "TimeoutNow term %u", m[1]);
        break;
    }
}

#ifndef CR_LIBC_CALLS
/* libraft.so.2 imports rand, srand, getrandom, gettimeofday and clock_gettime
 * (nm -D): rand/srand/getrandom only in its libuv io (not used here), and
 * clock_gettime in its stderr tracer (LIBRAFT_TRACE set). cmc answers the
 * tracer's clock from the node's clock; any other call is a fault. */
#define CR_LIBC_CALLS CMC_LIBC_CLOCK_GETTIME
#endif

const cmc_heap_core *cmc_heap_core_entry(void) {
    static const cmc_heap_core core = {
        .abi_version = CMC_HEAP_ABI_VERSION,
        .durable_size = sizeof(cr_durable),
        .view_size = sizeof(cr_view),
        .libc_calls = CR_LIBC_CALLS,
        .name = "canonical-raft",
        .library = "libraft.so.2",
        .libc_random = 0,
        .libc_tick_ns = TICK_MS * 1000000ull,
        .start = cr_start,
        .step = cr_step,
        .view = cr_view_of,
        .destroy = cr_destroy,
        .describe_state = cr_describe_state,
        .describe_message = cr_describe_message,
    };
    return &core;
}
