/*
 * cmc_heap.h: the C ABI of a heap-state core: an adapter that brings a C
 * library whose state lives on the heap (pointers, malloc'ed logs, callbacks)
 * under cmc without changing the library.
 *
 * A core of cmc.h is a step over fixed-size bytes. A library such as
 * canonical/raft keeps its node in heap objects instead, so its adapter
 * exports these four functions over an opaque node object:
 *
 *     start(config, durable, out) -> node    the node created from its flushed
 *                                            durable bytes (the World's START)
 *     step(node, config, event, out)         one other World event delivered
 *     view(node, config, view)               the node's canonical view
 *     destroy(node)                          everything the node holds released
 *
 * cmc never stores a node object. The World stores the node's *view*
 * (view_size bytes, the node's volatile part: fingerprinted, compared and
 * read by properties) and its durable part (durable_size bytes, the
 * library's storage in a fixed layout the adapter chooses, changed only by
 * CMC_OUT_PERSIST and made durable by CMC_EV_FLUSHED). To step a node, cmc
 * creates it again from the durable bytes of its last START and replays the
 * events it received since (their outputs discarded), checks that the
 * replay's view is the stored one, delivers the new event, takes the view
 * and destroys the node. So:
 *
 *   - start and step must be deterministic given their arguments: time is the
 *     event's `clock`, randomness a CMC_OUT_CHOOSE or a value the adapter
 *     fixes. The library's own calls to libc for time or randomness are
 *     answered by cmc (see `libc_calls` below); any other is a core fault;
 *   - the view must hold everything that decides what the node does next,
 *     canonically (equal nodes, equal bytes): two histories that reach equal
 *     views are one state. cmc checks a sample of such pairs (every one under
 *     --check-determinism) by stepping both and comparing what they do;
 *   - destroy must release everything: a node lives for one step, and a
 *     search makes millions.
 *
 * A library exports one symbol, CMC_HEAP_ENTRY_SYMBOL, returning its
 * descriptor; its C properties (cmc.h's CMC_PROPERTIES) read the views as
 * the nodes' volatile parts, and its describe table (cmc.h's CMC_DESCRIBE)
 * names the replies and client operations of its traces, as a plain core's
 * does. `cmc check --core ./libadapter.so` loads it.
 */
#ifndef CMC_HEAP_H
#define CMC_HEAP_H

#include "cmc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Version of this ABI. An adapter built against another version is refused at load time. */
#define CMC_HEAP_ABI_VERSION 1u

/* Name of the exported entry point: `const cmc_heap_core *cmc_heap_core_entry(void)`. */
#define CMC_HEAP_ENTRY_SYMBOL "cmc_heap_core_entry"

/* The libc calls cmc answers for the checked library (bits of `libc_calls`). */
enum cmc_libc_call {
    CMC_LIBC_RAND = 1u << 0,          /* rand(): `libc_random` (masked to RAND_MAX) */
    CMC_LIBC_RANDOM = 1u << 1,        /* random(): `libc_random` (masked to RAND_MAX) */
    CMC_LIBC_TIME = 1u << 2,          /* time(): the node's clock, in seconds */
    CMC_LIBC_CLOCK_GETTIME = 1u << 3, /* clock_gettime(): the node's clock, any clock id */
    CMC_LIBC_GETTIMEOFDAY = 1u << 4,  /* gettimeofday(): the node's clock */
    CMC_LIBC_GETRANDOM = 1u << 5,     /* getrandom(): every byte `libc_random`'s low byte */
    CMC_LIBC_SRAND = 1u << 6          /* srand(): ignored */
};

/* What a heap-state adapter exports. */
typedef struct cmc_heap_core {
    uint32_t abi_version;   /* CMC_HEAP_ABI_VERSION */
    uint32_t durable_size;  /* bytes of the durable part (the library's storage) */
    uint32_t view_size;     /* bytes of the view (the node's volatile part) */
    uint32_t libc_calls;    /* enum cmc_libc_call bits: the calls the adapter declares */
    const char *name;       /* short name, e.g. "canonical-raft" */
    /* The checked library, as the dynamic loader names it (its soname, e.g.
     * "libraft.so.2"), or NULL when the library makes no libc call for time
     * or randomness. Its calls to rand, random, srand, time, clock_gettime,
     * gettimeofday and getrandom are redirected, in that library only, to
     * cmc: declared ones are answered from the node's clock and `libc_random`,
     * any other is a core fault naming the function. */
    const char *library;
    uint64_t libc_random;   /* the value cmc's rand/random/getrandom answer */
    uint64_t libc_tick_ns;  /* nanoseconds of the node's clock per TICK, for the time calls */
    /* Required. The node created from its flushed durable part (durable_size bytes, zero
     * at the first start): the World's START. NULL is a fault. */
    void *(*start)(const cmc_config *config, const void *durable, cmc_outputs *out);
    /* Required. Delivers one event other than START; 0 on success, else an error code. */
    int (*step)(void *node, const cmc_config *config, const cmc_event *event, cmc_outputs *out);
    /* Required. Writes the node's view (view_size bytes, zeroed beforehand); 0 on success. */
    int (*view)(const void *node, const cmc_config *config, void *view);
    /* Required. Releases the node and everything it holds. */
    void (*destroy)(void *node);
    /* Optional: as cmc.h's, over the durable part and the view. */
    cmc_describe_state_fn describe_state;
    cmc_describe_message_fn describe_message;
} cmc_heap_core;

/* The entry point every heap-state adapter exports (see CMC_HEAP_ENTRY_SYMBOL). */
const cmc_heap_core *cmc_heap_core_entry(void);

#ifdef __cplusplus
}
#endif

#endif /* CMC_HEAP_H */
