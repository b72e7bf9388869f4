/*
 * product.c: the lease core in a product. It links the very object file the
 * checker loads (lease.o, unchanged) and runs a server and two candidates in
 * one process on the machine's monotonic clock (one clock tick = 10 ms), with
 * an in-memory network. The glue only translates: SEND -> a mailbox,
 * SET_TIMER_AT -> a deadline on the clock, WAKE -> a run-queue entry,
 * PERSIST -> a write into the durable part followed by FLUSHED, REPLY -> a
 * line on stdout. Client write r goes to candidate 1 + r % 2; the program
 * exits when every write is acknowledged (exit 0) or after 5 s (exit 1).
 *
 *   cc -std=c11 -O2 -I../../include product.c lease.o -o lease_product
 *   ./lease_product 4
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cmc.h"
#include "lease.h"

#define NODES 3
#define QUEUE_MAX 256

struct node {
    cmc_config cfg;
    struct lease_durable durable;
    struct lease_volatile vol;
    uint32_t timers, wakes;
    uint64_t deadline[CMC_TIMERS_MAX];
};

static struct node nodes[NODES];
static cmc_event queue[QUEUE_MAX]; /* events waiting for delivery; .src = sender */
static uint32_t queue_dst[QUEUE_MAX];
static int queued, replies;
static const cmc_core *core;

static uint64_t clock_ticks(void) {
    static struct timespec start;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (start.tv_sec == 0 && start.tv_nsec == 0) start = now;
    return (uint64_t)((now.tv_sec - start.tv_sec) * 100 + (now.tv_nsec - start.tv_nsec) / 10000000);
}

static void enqueue(uint32_t dst, uint32_t kind, uint32_t src, uint32_t id, const void *bytes,
                    uint32_t len) {
    if (queued == QUEUE_MAX) {
        fprintf(stderr, "queue full\n");
        exit(2);
    }
    cmc_event *ev = &queue[queued];
    memset(ev, 0, sizeof *ev);
    ev->kind = kind, ev->src = src, ev->id = id, ev->len = len;
    if (len) memcpy(ev->payload, bytes, len);
    queue_dst[queued++] = dst;
}

/* Runs one step of node n and carries out its outputs. */
static void deliver(uint32_t n, cmc_event ev) {
    struct node *me = &nodes[n];
    cmc_outputs out = {0};
    ev.clock = clock_ticks();
    if (core->step(&me->cfg, &me->durable, &me->vol, &ev, &out) != 0 || out.reserved) {
        fprintf(stderr, "n%u: step failed\n", n);
        exit(2);
    }
    for (uint32_t i = 0; i < out.count; i++) {
        const cmc_output *o = &out.items[i];
        switch (o->kind) {
        case CMC_OUT_SEND: enqueue(o->dst, CMC_EV_RECV, n, 0, o->payload, o->len); break;
        case CMC_OUT_SET_TIMER_AT:
            me->timers |= 1u << o->id;
            me->deadline[o->id] = 0;
            for (unsigned b = 0; b < 8; b++) me->deadline[o->id] |= (uint64_t)o->payload[b] << (8 * b);
            break;
        case CMC_OUT_CANCEL_TIMER: me->timers &= ~(1u << o->id); break;
        case CMC_OUT_WAKE: enqueue(n, CMC_EV_WAKE, n, o->id, NULL, 0); break;
        case CMC_OUT_PERSIST: /* durable at once in this demo; a real product fsyncs first */
            memcpy((uint8_t *)&me->durable + o->id, o->payload, o->len);
            enqueue(n, CMC_EV_FLUSHED, n, o->id, o->payload, o->len);
            break;
        case CMC_OUT_REPLY:
            printf("clock %3llu: n%u acknowledges write r%u\n", (unsigned long long)ev.clock, n, o->id);
            replies++;
            break;
        }
    }
}

int main(int argc, char **argv) {
    int writes = argc > 1 ? atoi(argv[1]) : 4;
    if (writes < 1 || writes > (int)LEASE_REQUESTS_MAX) return 2;
    core = cmc_core_entry();
    for (uint32_t n = 0; n < NODES; n++) {
        nodes[n].cfg = (cmc_config){.node = n, .nodes = NODES, .params = {20, 1}};
        deliver(n, (cmc_event){.kind = CMC_EV_START});
    }
    for (int r = 0; r < writes; r++) enqueue(1 + r % 2, CMC_EV_CLIENT, 0, (uint32_t)r, NULL, 0);
    while (replies < writes && clock_ticks() < 500) {
        if (queued > 0) { /* oldest event first */
            cmc_event ev = queue[0];
            uint32_t dst = queue_dst[0];
            memmove(queue, queue + 1, (size_t)(queued - 1) * sizeof queue[0]);
            memmove(queue_dst, queue_dst + 1, (size_t)(queued - 1) * sizeof queue_dst[0]);
            queued--;
            deliver(dst, ev);
        }
        for (uint32_t n = 0; n < NODES; n++)
            for (uint32_t t = 0; t < CMC_TIMERS_MAX; t++)
                if ((nodes[n].timers >> t & 1u) && clock_ticks() >= nodes[n].deadline[t]) {
                    nodes[n].timers &= ~(1u << t);
                    deliver(n, (cmc_event){.kind = CMC_EV_TIMER, .id = t});
                }
    }
    printf("%d of %d writes acknowledged\n", replies, writes);
    return replies == writes ? 0 : 1;
}
