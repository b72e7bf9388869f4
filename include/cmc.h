/*
 * cmc.h: the C ABI between a cmc core and whoever runs it (the cmc checker or a product).
 *
 * A core is a deterministic step function over a fixed-size, pointer-free state:
 *
 *     step(config, durable, volatile, event) -> volatile', outputs
 *
 * Rules (checked by `cmc purity` and `--check-determinism`):
 *   - the step reads nothing but its arguments: no clock, randomness, globals, I/O, malloc;
 *   - the state bytes are the state's canonical encoding: keep arrays sorted and unused
 *     slots zeroed, so that equal states have equal bytes;
 *   - the durable part is read-only inside a step. To change it, emit CMC_OUT_PERSIST
 *     (offset, bytes); the environment writes those bytes into durable when it later
 *     delivers CMC_EV_FLUSHED. A crash drops unflushed persists and zeroes the volatile
 *     part; the restart delivers CMC_EV_START with the durable part as it was flushed.
 *
 * A core exports one symbol, CMC_ENTRY_SYMBOL, a function returning its descriptor.
 * The same object file is linked unchanged into a product (which calls step itself)
 * and loaded by the checker (`cmc check --core ./libcore.so`).
 *
 * Compile a core with nothing but this header, its own headers and libc.
 */
#ifndef CMC_H
#define CMC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version of this ABI. A core built against another version is refused at load time. */
#define CMC_ABI_VERSION 1u

/* Bytes of payload an event or output can carry (a message, a persist, a reply). */
#define CMC_PAYLOAD_MAX 64u
/* Outputs one step may emit. */
#define CMC_OUTPUTS_MAX 16u
/* Configuration parameters passed to every step (CFG0..CFG7 on the command line). */
#define CMC_PARAMS_MAX 8u
/* Timer ids and wake ids are 0..31. */
#define CMC_TIMERS_MAX 32u
/* Largest state (durable + volatile) a core may declare. */
#define CMC_STATE_MAX 65536u

/* Name of the exported entry point: `const cmc_core *cmc_core_entry(void)`. */
#define CMC_ENTRY_SYMBOL "cmc_core_entry"

/* What happened to the node. */
enum cmc_event_kind {
    CMC_EV_START = 1,      /* first start or restart; durable holds the flushed state */
    CMC_EV_RECV = 2,       /* message `payload[0..len)` from node `src` */
    CMC_EV_TIMER = 3,      /* armed timer `id` fired */
    CMC_EV_FLUSHED = 4,    /* the oldest persist (offset `id`, bytes `payload`) is durable */
    CMC_EV_CLIENT = 5,     /* client request `id` arrived (again, if retried); payload: its operation */
    CMC_EV_LOCAL_FAIL = 6, /* client request `id` failed locally */
    CMC_EV_WAKE = 7,       /* pending wake-up `id` ran */
    CMC_EV_TICK = 8,       /* the node's clock advanced to `clock` (by one; with the World's
                              skew=K, no two nodes' clocks ever differ by more than K) */
    CMC_EV_CHOICE = 10     /* random choice `id` was made: its value, below the k asked, is payload[0] */
};

/* What the node asks the environment to do. */
enum cmc_output_kind {
    CMC_OUT_SEND = 1,         /* send `payload[0..len)` to node `dst` */
    CMC_OUT_SET_TIMER = 2,    /* arm timer `id` (re-arming an armed timer is a no-op) */
    CMC_OUT_CANCEL_TIMER = 3, /* disarm timer `id` */
    CMC_OUT_PERSIST = 4,      /* write `payload[0..len)` at durable offset `id`, once flushed */
    CMC_OUT_WAKE = 5,         /* schedule wake-up `id` */
    CMC_OUT_REPLY = 6,        /* reply `payload[0..len)` to client request `id` */
    CMC_OUT_SET_TIMER_AT = 7, /* arm timer `id` with a deadline on this node's clock: it fires
                                 only once the clock has reached it (payload: the deadline,
                                 8 bytes little-endian; use cmc_set_timer_at). Re-arming
                                 replaces the deadline; CMC_OUT_SET_TIMER (no deadline) may
                                 fire at any moment */
    CMC_OUT_CHOOSE = 8        /* ask for random choice `id` among payload[0] = k values (1..255) */
};

/* The node's configuration: constant for the node's lifetime. */
typedef struct cmc_config {
    uint32_t node;                     /* this node's id, 0..nodes-1 */
    uint32_t nodes;                    /* number of nodes in the world */
    uint64_t params[CMC_PARAMS_MAX];   /* user parameters, zero unless set */
} cmc_config;

/* One event delivered to a step. Bytes past `len` are zero. */
typedef struct cmc_event {
    uint32_t kind;                     /* enum cmc_event_kind */
    uint32_t src;                      /* CMC_EV_RECV: sending node */
    uint32_t id;                       /* timer, request, wake id or persist offset */
    uint32_t len;                      /* payload length, <= CMC_PAYLOAD_MAX */
    uint64_t clock;                    /* the node's clock */
    uint8_t payload[CMC_PAYLOAD_MAX];
} cmc_event;

/* One output of a step. */
typedef struct cmc_output {
    uint32_t kind;                     /* enum cmc_output_kind */
    uint32_t dst;                      /* CMC_OUT_SEND: destination node */
    uint32_t id;                       /* timer, wake or request id, or persist offset */
    uint32_t len;                      /* payload length, <= CMC_PAYLOAD_MAX */
    uint8_t payload[CMC_PAYLOAD_MAX];
} cmc_output;

/* The outputs of one step, in order. `count` starts at 0; use the helpers below. */
typedef struct cmc_outputs {
    uint32_t count;
    uint32_t reserved; /* outputs the helpers refused (over the limits): nonzero is a capacity fault */
    cmc_output items[CMC_OUTPUTS_MAX];
} cmc_outputs;

/* The step function: 0 on success, any other value is an error the checker reports. */
typedef int (*cmc_step_fn)(const cmc_config *config, const void *durable, void *volatile_part,
                           const cmc_event *event, cmc_outputs *out);
/* Optional: writes a description of the state into buf (at most cap bytes, NUL-terminated). */
typedef void (*cmc_describe_state_fn)(const cmc_config *config, const void *durable,
                                      const void *volatile_part, char *buf, size_t cap);
/* Optional: writes a description of a message into buf (at most cap bytes, NUL-terminated). */
typedef void (*cmc_describe_message_fn)(const cmc_config *config, const uint8_t *msg,
                                        uint32_t len, char *buf, size_t cap);
/* Optional (symmetry, see "Symmetry" below): renames the node ids a state holds by
 * `perm[old] = new` (perm has config->nodes entries), in place, keeping the state canonical.
 * For layouts CMC_ID_FIELDS cannot describe; it runs after the declared fields are renamed. */
typedef void (*cmc_permute_fn)(const cmc_config *config, void *durable, void *volatile_part,
                               const uint32_t *perm);

/* What a core exports. */
typedef struct cmc_core {
    uint32_t abi_version;                      /* CMC_ABI_VERSION */
    uint32_t durable_size;                     /* bytes of the durable part */
    uint32_t volatile_size;                    /* bytes of the volatile part */
    uint32_t reserved;                         /* zero */
    const char *name;                          /* short name, e.g. "reqack" */
    cmc_step_fn step;                          /* required */
    cmc_describe_state_fn describe_state;      /* optional, may be NULL */
    cmc_describe_message_fn describe_message;  /* optional, may be NULL */
    cmc_permute_fn permute;                    /* optional, may be NULL */
} cmc_core;

/* The entry point every core exports (see CMC_ENTRY_SYMBOL). */
const cmc_core *cmc_core_entry(void);

/*
 * Optional: describing replies and client operations. Traces show a reply's payload
 * and a client operation's payload (a CMC_EV_CLIENT event's) as hex, or an operation
 * by its workload's text; a core that exports a describe table shows them its way:
 *
 *     static void reply_text(const cmc_config *c, const uint8_t *p, uint32_t len,
 *                            char *buf, size_t cap) {
 *         snprintf(buf, cap, len == 1 && p[0] == MY_OK ? "OK" : "BUSY");
 *     }
 *     CMC_DESCRIBE(reply_text, NULL)   // the operation describer may be NULL too
 *
 * A separate exported table (not new fields of cmc_core), so that every core built
 * before it loads unchanged.
 */
#define CMC_DESCRIBE_SYMBOL "cmc_describe_entry"
/* Writes a description of `len` bytes of payload into buf (at most cap bytes, NUL-terminated);
 * an empty text means none of its own (traces show the World's text). */
typedef void (*cmc_describe_payload_fn)(const cmc_config *config, const uint8_t *payload,
                                        uint32_t len, char *buf, size_t cap);
typedef struct cmc_describe_table {
    uint32_t abi_version;                        /* CMC_ABI_VERSION */
    uint32_t reserved;                           /* zero */
    cmc_describe_payload_fn describe_reply;      /* a reply this core gives; may be NULL */
    cmc_describe_payload_fn describe_operation;  /* a client operation it receives; may be NULL */
} cmc_describe_table;

/* Defines the exported CMC_DESCRIBE_SYMBOL; use it once per library. */
#define CMC_DESCRIBE(reply_fn, operation_fn)                                         \
    const cmc_describe_table *cmc_describe_entry(void);                              \
    const cmc_describe_table *cmc_describe_entry(void) {                             \
        static const cmc_describe_table table = {CMC_ABI_VERSION, 0, (reply_fn),     \
                                                 (operation_fn)};                    \
        return &table;                                                               \
    }

/* Appends an output; returns 0, or -1 if the outputs or the payload are full. */
static inline int cmc_emit(cmc_outputs *out, uint32_t kind, uint32_t dst, uint32_t id,
                           const void *payload, uint32_t len) {
    if (out->count >= CMC_OUTPUTS_MAX || len > CMC_PAYLOAD_MAX) {
        out->reserved++; /* the checker stops at a refused output even if the error is ignored */
        return -1;
    }
    cmc_output *o = &out->items[out->count++];
    memset(o, 0, sizeof *o);
    o->kind = kind;
    o->dst = dst;
    o->id = id;
    o->len = len;
    if (len) memcpy(o->payload, payload, len);
    return 0;
}

static inline int cmc_send(cmc_outputs *out, uint32_t dst, const void *msg, uint32_t len) {
    return cmc_emit(out, CMC_OUT_SEND, dst, 0, msg, len);
}
static inline int cmc_set_timer(cmc_outputs *out, uint32_t id) {
    return cmc_emit(out, CMC_OUT_SET_TIMER, 0, id, NULL, 0);
}
static inline int cmc_cancel_timer(cmc_outputs *out, uint32_t id) {
    return cmc_emit(out, CMC_OUT_CANCEL_TIMER, 0, id, NULL, 0);
}
static inline int cmc_persist(cmc_outputs *out, uint32_t offset, const void *bytes, uint32_t len) {
    return cmc_emit(out, CMC_OUT_PERSIST, 0, offset, bytes, len);
}
static inline int cmc_wake(cmc_outputs *out, uint32_t id) {
    return cmc_emit(out, CMC_OUT_WAKE, 0, id, NULL, 0);
}
static inline int cmc_reply(cmc_outputs *out, uint32_t request, const void *bytes, uint32_t len) {
    return cmc_emit(out, CMC_OUT_REPLY, 0, request, bytes, len);
}
/* Arms timer `id` to fire once this node's clock (cmc_event.clock) has reached `deadline`. */
static inline int cmc_set_timer_at(cmc_outputs *out, uint32_t id, uint64_t deadline) {
    uint8_t bytes[8];
    for (unsigned i = 0; i < 8; i++) bytes[i] = (uint8_t)(deadline >> (8 * i));
    return cmc_emit(out, CMC_OUT_SET_TIMER_AT, 0, id, bytes, 8);
}
/* Asks for random choice `id` (0..31) among k values (1..255): a later CMC_EV_CHOICE with
 * this id carries the value, 0..k-1, in payload[0]. The checker explores every value; a
 * random walk draws one from its seed; a product draws it from its own source. Asking
 * again for a pending id replaces its k; a crash forgets pending choices. */
static inline int cmc_choose(cmc_outputs *out, uint32_t id, uint8_t k) {
    return cmc_emit(out, CMC_OUT_CHOOSE, 0, id, &k, 1);
}

/*
 * Symmetry.
 *
 * With `symmetry=1,2` the checker treats nodes 1 and 2 as interchangeable and keeps one
 * state of each set of states that differ only by renaming them (up to 6x fewer states on
 * 3 nodes). That needs every node id the core stores renamed with its node: declare where
 * they are, once per library, as offsets and widths:
 *
 *     CMC_ID_FIELDS(
 *         CMC_ID_VALUE(CMC_ID_DURABLE, offsetof(struct durable, voted_for), 4, 1),  // id + 1; 0: none
 *         CMC_ID_BITSET(CMC_ID_VOLATILE, offsetof(struct volatile_part, votes), 4), // bit per node
 *         CMC_ID_INDEX(CMC_ID_VOLATILE, offsetof(struct volatile_part, match_index), 8, 5),
 *         CMC_ID_MESSAGE_VALUE(offsetof(struct msg, candidate), 4, 0,               // in messages
 *                              offsetof(struct msg, type), MSG_VOTE_REQUEST)        // of this type
 *     )
 *
 * Kinds: a VALUE holds one id plus a bias (1 when 0 means "none"; a value outside
 * bias..bias+nodes-1 is not an id and stays); a BITSET holds bit n for node n (give it a bit
 * for every node); an INDEX is an array with one entry per node (`count` entries of `width`
 * bytes), whose entries move with their nodes. Fields are little-endian, 1, 2, 4 or 8 bytes
 * wide; a message field applies to every message long enough, or only to those whose byte at
 * `tag_offset` is `tag`. Pending persists of the durable part are renamed with their node.
 * For what fields cannot say (ids kept sorted), set the descriptor's `permute` hook for the
 * state and the table's `permute_message` hook for messages (CMC_ID_FIELDS_WITH_HOOK).
 *
 * The checker verifies the claim: it takes steps again from the renamed state (every step
 * with --check-determinism, a sample otherwise) and refuses, as NOT A SYMMETRY, nodes that
 * do not behave alike or ids the declaration misses. Sound only when the core's behaviour
 * does not depend on which of the interchangeable ids it has.
 */

/* Name of the optional exported table: `const cmc_id_field_table *cmc_id_fields_entry(void)`. */
#define CMC_ID_FIELDS_SYMBOL "cmc_id_fields_entry"

enum cmc_id_part { CMC_ID_DURABLE = 1, CMC_ID_VOLATILE = 2, CMC_ID_MESSAGE = 3 };
enum cmc_id_kind { CMC_ID_KIND_VALUE = 1, CMC_ID_KIND_BITSET = 2, CMC_ID_KIND_INDEX = 3 };

/* One field holding node ids: use the macros below. */
typedef struct cmc_id_field {
    uint32_t part;                     /* enum cmc_id_part */
    uint32_t kind;                     /* enum cmc_id_kind */
    uint32_t offset;                   /* byte offset in the part */
    uint32_t width;                    /* bytes of one value, set or entry: 1, 2, 4 or 8 */
    uint32_t count;                    /* consecutive values or sets; INDEX: entries (>= nodes) */
    uint32_t bias;                     /* VALUE: the field holds id + bias */
    int32_t tag_offset;                /* CMC_ID_MESSAGE: -1, or the offset of the type byte */
    uint32_t tag;                      /* ... that must equal this */
} cmc_id_field;

/* Optional: renames the node ids in a message (`len` bytes) by `perm[old] = new`, in place. */
typedef void (*cmc_permute_message_fn)(const cmc_config *config, uint8_t *msg, uint32_t len,
                                       const uint32_t *perm);

/* What CMC_ID_FIELDS_SYMBOL returns. */
typedef struct cmc_id_field_table {
    uint32_t abi_version;              /* CMC_ABI_VERSION */
    uint32_t count;
    const cmc_id_field *items;
    cmc_permute_message_fn permute_message; /* optional, may be NULL */
} cmc_id_field_table;

#define CMC_ID_VALUE(part, offset, width, bias) \
    {(part), CMC_ID_KIND_VALUE, (offset), (width), 1, (bias), -1, 0}
#define CMC_ID_VALUES(part, offset, width, bias, count) \
    {(part), CMC_ID_KIND_VALUE, (offset), (width), (count), (bias), -1, 0}
#define CMC_ID_BITSET(part, offset, width) \
    {(part), CMC_ID_KIND_BITSET, (offset), (width), 1, 0, -1, 0}
#define CMC_ID_INDEX(part, offset, width, count) \
    {(part), CMC_ID_KIND_INDEX, (offset), (width), (count), 0, -1, 0}
#define CMC_ID_MESSAGE_VALUE(offset, width, bias, tag_offset, tag) \
    {CMC_ID_MESSAGE, CMC_ID_KIND_VALUE, (offset), (width), 1, (bias), (tag_offset), (tag)}
#define CMC_ID_MESSAGE_BITSET(offset, width, tag_offset, tag) \
    {CMC_ID_MESSAGE, CMC_ID_KIND_BITSET, (offset), (width), 1, 0, (tag_offset), (tag)}

/* Defines the library's id-field table, with a message hook (or NULL), from the macros above. */
#define CMC_ID_FIELDS_WITH_HOOK(hook, ...)                                           \
    static const cmc_id_field cmc_id_field_items_[] = {__VA_ARGS__};                \
    const cmc_id_field_table *cmc_id_fields_entry(void);                             \
    const cmc_id_field_table *cmc_id_fields_entry(void) {                            \
        static const cmc_id_field_table table = {                                    \
            CMC_ABI_VERSION,                                                         \
            (uint32_t)(sizeof cmc_id_field_items_ / sizeof cmc_id_field_items_[0]),  \
            cmc_id_field_items_, (hook)};                                            \
        return &table;                                                               \
    }
/* Defines the library's id-field table from the macros above. */
#define CMC_ID_FIELDS(...) CMC_ID_FIELDS_WITH_HOOK(NULL, __VA_ARGS__)

/*
 * Properties in C.
 *
 * Properties live in a separate C file that includes the core's private header and
 * is linked into the same shared library as the core. They read a read-only view of
 * the whole World (cmc_world_view below): every node's durable and volatile bytes,
 * crashed bit and clock; the network bag; the ghost history of client invocations
 * and replies; the ghost variables (CMC_GHOSTS below). The checker builds the view through its explicit inspection path and
 * never calls a property to decide what is enabled. A property runs under the same
 * supervision as a step: one that crashes, hangs, exits or writes to its view is a
 * core fault "while checking property NAME", never a verdict.
 *
 * Declare them with one table per library (the simplest portable registration: no
 * linker sections, no constructors):
 *
 *     static int agreement(const cmc_world_view *w) { ... return 1 if it holds; }
 *     static int monotonic(const cmc_world_view *pre, const cmc_world_view *post) { ... }
 *     static int decided(const cmc_world_view *w) { ... return 1 when reached; }
 *     static int all_replied(const cmc_world_view *w) { ... }
 *
 *     CMC_PROPERTIES(
 *         CMC_INVARIANT("Agreement", agreement),        // holds in every reachable state
 *         CMC_ACTION_PROP("Monotonic", monotonic),      // holds for every step pre -> post
 *         CMC_WITNESS("Decided", decided),              // some reachable state satisfies it
 *         CMC_QUIESCENCE_GOAL("all replied", all_replied) // goal of quiescence=STEPS
 *     )
 *
 * CMC_PROPERTIES defines the exported CMC_PROPERTIES_SYMBOL; use it once per library.
 * A predicate returns nonzero for "holds" (invariant, action property) or "reached"
 * (witness, quiescence goal). The quiescence goal replaces the default goal "every
 * client replied" when the World is run with quiescence=STEPS.
 *
 * Saying why. An invariant or action property declared with CMC_INVARIANT_WHY or
 * CMC_ACTION_PROP_WHY also gets a cmc_why to fill when it fails: the report shows its
 * text as the violation's explanation (the `explanation` of --json).
 *
 *     static int one_leader(const cmc_world_view *w, cmc_why *why) {
 *         ... if (leaders > 1) { snprintf(why->text, sizeof why->text,
 *                                        "n%u and n%u both lead term %u", a, b, term);
 *                                return 0; } ...
 *     }
 *     CMC_PROPERTIES(CMC_INVARIANT_WHY("OneLeader", one_leader))
 *
 * `why->text` is empty at each call; leave it so when there is nothing to add. It is
 * read only after the predicate returned 0, and only up to its first NUL (at most
 * CMC_WHY_MAX - 1 bytes). Such an entry's kind carries CMC_PROP_WHY: a cmc older than
 * this flag refuses the library ("unknown kind") rather than calling the predicate
 * without its cmc_why; every library built without the _WHY macros loads as before.
 */

/* Name of the optional exported table: `const cmc_property_table *cmc_properties_entry(void)`. */
#define CMC_PROPERTIES_SYMBOL "cmc_properties_entry"

/* One node as a property sees it. */
typedef struct cmc_node_view {
    const uint8_t *durable;            /* durable part, as flushed (durable_size bytes) */
    const uint8_t *volatile_part;      /* volatile part (volatile_size bytes; zero while crashed) */
    uint32_t durable_size;
    uint32_t volatile_size;
    uint32_t crashed;                  /* nonzero while the node is down */
    uint32_t clock;                    /* the node's clock */
    uint32_t timers;                   /* armed timers, bit per id */
    uint32_t wakes;                    /* pending wake-ups, bit per id */
    uint32_t unflushed;                /* persists not flushed yet */
    uint32_t reserved;
} cmc_node_view;

/* Copies of one message in flight (the network is a bag of such entries). */
typedef struct cmc_packet_view {
    uint32_t src;
    uint32_t dst;
    uint32_t len;
    uint32_t count;                    /* copies in flight, exact up to the network bound */
    uint32_t surplus;                  /* nonzero: more than `count` copies (bound reached) */
    uint32_t reserved;
    uint8_t payload[CMC_PAYLOAD_MAX];
} cmc_packet_view;

/* What a ghost history entry records. */
enum cmc_ghost_kind {
    CMC_GHOST_INVOKE = 1,              /* the environment issued client request `request` to `node` */
    CMC_GHOST_REPLY = 2,               /* `node` replied `payload` to `request` */
    CMC_GHOST_LOCAL_FAIL = 3,          /* the request failed locally at `node` */
    CMC_GHOST_RETRY = 4                /* the client timed out and sent `request` again, to `node` */
};

/* One entry of the ghost history of client invocations and replies, in order. `payload`:
 * the operation (invoke, retry; empty without a workload), the reply's bytes (reply). */
typedef struct cmc_ghost_view {
    uint32_t kind;                     /* enum cmc_ghost_kind */
    uint32_t request;
    uint32_t node;
    uint32_t len;
    uint8_t payload[CMC_PAYLOAD_MAX];
} cmc_ghost_view;

/* The whole World, read-only. Valid only during the call. */
typedef struct cmc_world_view {
    uint32_t nodes;
    uint32_t packets;
    uint32_t ghost_len;
    uint32_t issued;                   /* client requests issued so far (ids 0..issued-1) */
    uint64_t links_down;               /* bit a*8+b for each link a<b<8 cut in some direction */
    const cmc_node_view *node;         /* `nodes` entries */
    const cmc_packet_view *net;        /* `packets` entries */
    const cmc_ghost_view *ghost;       /* `ghost_len` entries */
    const uint8_t *cut;                /* nodes*nodes: cut[src*nodes+dst] != 0 when src->dst is cut */
    uint64_t params[CMC_PARAMS_MAX];   /* the World's cfg0..cfg7: every core's config.params */
    uint32_t ghost_vars;               /* the World's ghost variables (see CMC_GHOSTS) */
    uint32_t reserved;
    const struct cmc_ghost_var_view *ghost_var; /* `ghost_vars` entries; read with cmc_view_ghost_var */
} cmc_world_view;

/* One ghost variable as a property sees it. */
typedef struct cmc_ghost_var_view {
    const char *name;
    const uint8_t *bytes;              /* `size` bytes */
    uint32_t size;
    uint32_t reserved;
} cmc_ghost_var_view;

/* Why a property failed, in words, filled by a predicate declared with a _WHY macro. */
#define CMC_WHY_MAX 512
typedef struct cmc_why {
    char text[CMC_WHY_MAX];            /* NUL-terminated; empty: nothing to add */
} cmc_why;

/* Predicate over one state: nonzero if it holds (or is reached). */
typedef int (*cmc_state_pred_fn)(const cmc_world_view *world);
/* Predicate over one step from `pre` to `post`: nonzero if it holds. */
typedef int (*cmc_step_pred_fn)(const cmc_world_view *pre, const cmc_world_view *post);
/* The same, saying why they fail (CMC_INVARIANT_WHY, CMC_ACTION_PROP_WHY). */
typedef int (*cmc_state_why_fn)(const cmc_world_view *world, cmc_why *why);
typedef int (*cmc_step_why_fn)(const cmc_world_view *pre, const cmc_world_view *post,
                               cmc_why *why);

enum cmc_property_kind {
    CMC_PROP_INVARIANT = 1,
    CMC_PROP_ACTION = 2,
    CMC_PROP_WITNESS = 3,
    CMC_PROP_QUIESCENCE_GOAL = 4
};

/* Added to an invariant's or action property's kind: its predicate takes a cmc_why
 * (stored in `state` or `step` as the plain type, called as the _why type). */
#define CMC_PROP_WHY 0x100u

/* One declared property: use the macros below. */
typedef struct cmc_property {
    uint32_t kind;                     /* enum cmc_property_kind, maybe | CMC_PROP_WHY */
    uint32_t reserved;
    const char *name;
    cmc_state_pred_fn state;           /* invariant, witness, quiescence goal */
    cmc_step_pred_fn step;             /* action property */
} cmc_property;

/* What CMC_PROPERTIES_SYMBOL returns. */
typedef struct cmc_property_table {
    uint32_t abi_version;              /* CMC_ABI_VERSION */
    uint32_t count;
    const cmc_property *items;
} cmc_property_table;

/* A _why predicate `fn` stored in the plain predicate field of a cmc_property (cmc
 * calls it back as the _why type). The cast goes through `void (*)(void)`, the one
 * function pointer type that compilers let stand for any other, so that the header
 * builds clean under -Wall -Wextra -Werror (-Wcast-function-type); the first cast
 * still warns (-Wcast-function-type) when `fn` is not a _why predicate. */
#define CMC_STATE_WHY_AS_PRED(fn) ((cmc_state_pred_fn)(void (*)(void))(cmc_state_why_fn)(fn))
#define CMC_STEP_WHY_AS_PRED(fn) ((cmc_step_pred_fn)(void (*)(void))(cmc_step_why_fn)(fn))

#define CMC_INVARIANT(name, fn) {CMC_PROP_INVARIANT, 0, (name), (fn), NULL}
#define CMC_ACTION_PROP(name, fn) {CMC_PROP_ACTION, 0, (name), NULL, (fn)}
#define CMC_WITNESS(name, fn) {CMC_PROP_WITNESS, 0, (name), (fn), NULL}
#define CMC_QUIESCENCE_GOAL(name, fn) {CMC_PROP_QUIESCENCE_GOAL, 0, (name), (fn), NULL}
#define CMC_INVARIANT_WHY(name, fn)                                                  \
    {CMC_PROP_INVARIANT | CMC_PROP_WHY, 0, (name), CMC_STATE_WHY_AS_PRED(fn), NULL}
#define CMC_ACTION_PROP_WHY(name, fn)                                                \
    {CMC_PROP_ACTION | CMC_PROP_WHY, 0, (name), NULL, CMC_STEP_WHY_AS_PRED(fn)}

/* Defines the library's property table from a list of the macros above. */
#define CMC_PROPERTIES(...)                                                          \
    static const cmc_property cmc_property_items_[] = {__VA_ARGS__};                \
    const cmc_property_table *cmc_properties_entry(void);                            \
    const cmc_property_table *cmc_properties_entry(void) {                           \
        static const cmc_property_table table = {                                    \
            CMC_ABI_VERSION,                                                         \
            (uint32_t)(sizeof cmc_property_items_ / sizeof cmc_property_items_[0]),  \
            cmc_property_items_};                                                    \
        return &table;                                                               \
    }

/* Accessors. Node, packet and entry indexes are not checked: stay below the counts. */
static inline const void *cmc_view_durable(const cmc_world_view *w, uint32_t node) {
    return w->node[node].durable;
}
static inline const void *cmc_view_volatile(const cmc_world_view *w, uint32_t node) {
    return w->node[node].volatile_part;
}
static inline int cmc_view_crashed(const cmc_world_view *w, uint32_t node) {
    return w->node[node].crashed != 0;
}
static inline uint32_t cmc_view_clock(const cmc_world_view *w, uint32_t node) {
    return w->node[node].clock;
}
/* The World's configuration value cfgI (`cfg0=V` on the command line), I < CMC_PARAMS_MAX. */
static inline uint64_t cmc_view_cfg(const cmc_world_view *w, uint32_t i) {
    return w->params[i];
}
/* Copies of messages in flight from `src` to `dst` (surplus copies not counted). */
static inline uint32_t cmc_view_in_flight(const cmc_world_view *w, uint32_t src, uint32_t dst) {
    uint32_t total = 0;
    for (uint32_t i = 0; i < w->packets; i++)
        if (w->net[i].src == src && w->net[i].dst == dst) total += w->net[i].count;
    return total;
}
/* The first reply to client request `request`, or NULL if it has none. */
static inline const cmc_ghost_view *cmc_view_reply(const cmc_world_view *w, uint32_t request) {
    for (uint32_t i = 0; i < w->ghost_len; i++)
        if (w->ghost[i].kind == CMC_GHOST_REPLY && w->ghost[i].request == request)
            return &w->ghost[i];
    return NULL;
}
/* Number of replies to client request `request`. */
static inline uint32_t cmc_view_replies(const cmc_world_view *w, uint32_t request) {
    uint32_t total = 0;
    for (uint32_t i = 0; i < w->ghost_len; i++)
        total += w->ghost[i].kind == CMC_GHOST_REPLY && w->ghost[i].request == request;
    return total;
}
/* The bytes of the ghost variable `name` (see CMC_GHOSTS), or NULL if the World has none
 * so named. */
static inline const uint8_t *cmc_view_ghost_var(const cmc_world_view *w, const char *name) {
    for (uint32_t i = 0; i < w->ghost_vars; i++)
        if (strcmp(w->ghost_var[i].name, name) == 0) return w->ghost_var[i].bytes;
    return NULL;
}

/*
 * Ghost variables in C.
 *
 * Some properties need what happened before, which a node may have forgotten: "a node
 * never sends its vote to two candidates" must remember a vote the node lost in a crash.
 * A ghost variable is bytes the World keeps in every state for the properties, as TLA+
 * history variables are: declared with a name, a size and an initial value, updated from
 * every step, part of the state's identity (its fingerprint, traces, replay files and
 * checkpoints; `replay` shows it as ghost.NAME). Properties read it with
 * cmc_view_ghost_var. Declare them in the library's property file, once per library:
 *
 *     static const uint8_t no_grant[8] = {0};
 *     // Called on every step: pre and post are the World before and after it (post's
 *     // ghost variables still hold their values before it); edit `bytes` in place.
 *     static int note_grants(const cmc_world_view *pre, const cmc_action_view *action,
 *                            const cmc_world_view *post, uint8_t *bytes) {
 *         if (action->node < post->nodes) { ... bytes[action->node] |= ...; }
 *         return 0;                                  // nonzero: a fault of the run
 *     }
 *     static int vote_once(const cmc_world_view *w) {
 *         const uint8_t *granted = cmc_view_ghost_var(w, "Granted"); ...
 *     }
 *     CMC_PROPERTIES(CMC_INVARIANT("VoteOnce", vote_once))
 *     CMC_GHOSTS(CMC_GHOST("Granted", 8, no_grant, note_grants, "VoteOnce"))
 *
 * The last field lists the properties that read the variable, comma-separated: a run whose
 * INVARIANTS= leaves all of them out drops the variable (it would only multiply states),
 * and a property outside the list that reads it then finds NULL. NULL (or "") means every
 * property may read it: it is never dropped. An update must be a pure function of its
 * arguments, like a step. It runs within the World's step it follows: a crash, hang or exit
 * in it is reported as a fault of that step (its trace ends there), a nonzero return or a
 * write to its views as a fault naming the variable; never a verdict. `init` may be
 * NULL (all zero). Refused at load: a name used twice, a size of 0, more than
 * CMC_GHOST_VARS_MAX bytes in all, no update.
 *
 * Ghosts and symmetry. With `symmetric=` the checker renames node ids; it can rename those
 * a ghost variable holds only if told how: CMC_GHOST_RENAMED adds a hook that renames the
 * bytes in place by `perm[old] = new` (perm has `nodes` entries), keeping them canonical.
 * A World with symmetry refuses a ghost variable without such a hook.
 */
#define CMC_GHOSTS_SYMBOL "cmc_ghosts_entry"
/* Most bytes of all ghost variables together. */
#define CMC_GHOST_VARS_MAX 4096u
/* cmc_action_view.node when the step changes no node's state (a drop, a link change). */
#define CMC_NO_NODE 0xffffffffu

/* One step of the World, as a ghost update sees it. */
typedef struct cmc_action_view {
    const char *kind;     /* DELIVER, DROP, DUP, FLUSH, FIRE, WAKE, TICK, CHOOSE, CRASH, RESTART,
                             PARTITION, HEAL, ONEWAY_CUT, ONEWAY_HEAL, ISOLATE, SPLIT, CLIENT,
                             LOCAL_FAIL or RETRY */
    const char *text;     /* the step as traces print it, e.g. "CRASH n2" */
    uint32_t node;        /* the node whose state the step may change, or CMC_NO_NODE */
    uint32_t fault;       /* nonzero: the step is a fault, taken from a budget */
} cmc_action_view;

/* A ghost variable's update: 0 on success, any other value is a fault of the run. */
typedef int (*cmc_ghost_update_fn)(const cmc_world_view *pre, const cmc_action_view *action,
                                   const cmc_world_view *post, uint8_t *bytes);
/* Renames the node ids in a ghost variable's `size` bytes by `perm[old] = new`, in place. */
typedef void (*cmc_ghost_rename_fn)(uint8_t *bytes, uint32_t size, const uint32_t *perm,
                                    uint32_t nodes);

/* One declared ghost variable: use the macros below. */
typedef struct cmc_ghost {
    const char *name;
    uint32_t size;                     /* bytes, 1..CMC_GHOST_VARS_MAX */
    uint32_t reserved;
    const uint8_t *init;               /* `size` bytes, or NULL: all zero */
    cmc_ghost_update_fn update;        /* required */
    const char *read_by;               /* properties that read it, comma-separated; NULL: all */
    cmc_ghost_rename_fn rename;        /* for symmetry; may be NULL */
} cmc_ghost;

/* What CMC_GHOSTS_SYMBOL returns. */
typedef struct cmc_ghost_table {
    uint32_t abi_version;              /* CMC_ABI_VERSION */
    uint32_t count;
    const cmc_ghost *items;
} cmc_ghost_table;

#define CMC_GHOST(name, size, init, update, read_by) \
    {(name), (size), 0, (init), (update), (read_by), NULL}
#define CMC_GHOST_RENAMED(name, size, init, update, read_by, rename) \
    {(name), (size), 0, (init), (update), (read_by), (rename)}

/* Defines the library's ghost variables from a list of the macros above. */
#define CMC_GHOSTS(...)                                                              \
    static const cmc_ghost cmc_ghost_items_[] = {__VA_ARGS__};                      \
    const cmc_ghost_table *cmc_ghosts_entry(void);                                   \
    const cmc_ghost_table *cmc_ghosts_entry(void) {                                  \
        static const cmc_ghost_table table = {                                       \
            CMC_ABI_VERSION,                                                         \
            (uint32_t)(sizeof cmc_ghost_items_ / sizeof cmc_ghost_items_[0]),        \
            cmc_ghost_items_};                                                       \
        return &table;                                                               \
    }

#ifdef __cplusplus
}
#endif

#endif /* CMC_H */
