/* reqack: request/acknowledge with retransmission. State layout and messages. */
#ifndef REQACK_H
#define REQACK_H

#include <stdint.h>

#define REQACK_MSG_DATA 1u
#define REQACK_MSG_ACK 2u
#define REQACK_REPLY_OK 1u
#define REQACK_REPLY_BUSY 0u
#define REQACK_TIMER_RESEND 0u

enum reqack_phase { REQACK_IDLE = 0, REQACK_PERSISTING = 1, REQACK_SENDING = 2, REQACK_CLEARING = 3 };

struct reqack_durable {
    uint32_t pending; /* sender: request id + 1 being delivered, 0 for none */
    uint32_t stored;  /* receiver: bit per request id stored */
};

struct reqack_volatile {
    uint32_t phase;    /* sender: enum reqack_phase */
    uint32_t request;  /* sender: request id + 1 in progress, 0 for none */
    uint32_t acked;    /* sender: bit per receiver that ACKed */
    uint32_t flushing; /* receiver: bit per request id persisted, not yet flushed */
};

struct reqack_msg {
    uint32_t type;    /* REQACK_MSG_DATA or REQACK_MSG_ACK */
    uint32_t request; /* request id */
};

#endif
