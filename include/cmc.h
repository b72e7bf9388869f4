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
    CMC_EV_CLIENT = 5,     /* client request `id` arrived */
    CMC_EV_LOCAL_FAIL = 6, /* client request `id` failed locally */
    CMC_EV_WAKE = 7,       /* pending wake-up `id` ran */
    CMC_EV_TICK = 8        /* the node's clock advanced to `clock` */
};

/* What the node asks the environment to do. */
enum cmc_output_kind {
    CMC_OUT_SEND = 1,         /* send `payload[0..len)` to node `dst` */
    CMC_OUT_SET_TIMER = 2,    /* arm timer `id` (re-arming an armed timer is a no-op) */
    CMC_OUT_CANCEL_TIMER = 3, /* disarm timer `id` */
    CMC_OUT_PERSIST = 4,      /* write `payload[0..len)` at durable offset `id`, once flushed */
    CMC_OUT_WAKE = 5,         /* schedule wake-up `id` */
    CMC_OUT_REPLY = 6         /* reply `payload[0..len)` to client request `id` */
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
/* Optional (symmetry, reserved): renames nodes in a state by `perm[old] = new`. */
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

#ifdef __cplusplus
}
#endif

#endif /* CMC_H */
