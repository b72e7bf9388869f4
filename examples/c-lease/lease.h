/*
 * lease.h: the private state layout and messages of the lease core (lease.c).
 * Shared with the properties (lease_props.c), which read the same structs.
 *
 * Node 0 is the lease server; every other node is a candidate that serves
 * client writes only while it holds an unexpired lease.
 */
#ifndef LEASE_H
#define LEASE_H

#include <stdint.h>

#define LEASE_SERVER 0u
#define LEASE_NODES_MAX 8u
#define LEASE_REQUESTS_MAX 32u

/* Configuration (World parameters cfg0, cfg1; zero means the default). */
#define LEASE_TICKS_DEFAULT 3u /* cfg0: lease length on the holder's clock */
#define LEASE_SKEW_DEFAULT 1u  /* cfg1: the clock skew the protocol tolerates (World: skew=K) */

/* Timers and wake-ups. */
#define LEASE_TIMER_EXPIRY 0u /* server: the current lease is over (deadline timer) */
#define LEASE_TIMER_RETRY 1u  /* candidate: ask again after BUSY (deadline timer) */
#define LEASE_WAKE_SERVE 0u   /* candidate: serve the writes queued under its lease */

/* Durable part: the writes a candidate has made durable. */
struct lease_durable {
    uint8_t written[LEASE_REQUESTS_MAX]; /* 1: client request r is written here */
};

/* Volatile part (one layout for both roles; unused fields stay zero). */
struct lease_volatile {
    /* server */
    uint32_t holder;     /* candidate holding the lease, plus one; 0: free */
    uint32_t expiry;     /* server clock from which the lease is free again */
    uint32_t granted_to; /* bit per candidate that was ever granted a lease */
    /* candidate */
    uint32_t asking;      /* a REQ is outstanding */
    uint32_t has_lease;   /* a lease was granted (valid while clock < lease_until) */
    uint32_t lease_until; /* own clock at which the lease ends */
    uint32_t pending;     /* bit per client request waiting for the lease */
};

/* Messages. */
enum lease_msg_type { LEASE_REQ = 1, LEASE_GRANT = 2, LEASE_BUSY = 3 };

struct lease_msg {
    uint32_t type;     /* enum lease_msg_type */
    uint32_t asked_at; /* REQ: the candidate's clock when it asked; GRANT: echoed back */
    uint32_t expiry;   /* GRANT: the server's expiry, on the server's clock */
};

#endif /* LEASE_H */
