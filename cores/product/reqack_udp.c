/*
 * reqack_udp: the "product". It links the very object file the checker loads
 * (reqack.o, unchanged) and runs its nodes over real UDP sockets on loopback.
 *
 *   reqack_udp NODES REQUESTS DIR [LOG]
 *
 * Each node gets its own socket on 127.0.0.1 (an ephemeral port). The glue only
 * translates: SEND -> sendto, SET_TIMER -> a 50 ms deadline, PERSIST -> pwrite +
 * fsync of DIR/node<N>.dat and then a FLUSHED event, REPLY -> a line on stdout.
 * Client requests are issued to node 0 one after another; the program exits when
 * every request has a reply. Events the glue itself causes (FLUSHED after a
 * write, the next CLIENT after a reply) wait in a queue until the current
 * step's outputs are all carried out.
 *
 * With LOG, the glue writes a glue log (include/cmc_glue_log.h) for
 * `cmc validate LOG --core libreqack.so --nodes NODES`. Deliberately broken
 * glues, for the validator's tests: -DGLUE_BUG=1 drops SET_TIMER outputs,
 * -DGLUE_BUG=2 delivers every received message twice, -DGLUE_BUG=3 reports
 * every flush twice.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cmc.h"
#include "cmc_glue_log.h"

#ifndef GLUE_BUG
#define GLUE_BUG 0
#endif

#define NODES_MAX 8

struct node {
    int sock, file;
    struct sockaddr_in addr;
    cmc_config cfg;
    uint8_t *durable, *vol;
    uint32_t timers;
    long long deadline_ms[CMC_TIMERS_MAX];
};

static struct node nodes[NODES_MAX];
static int node_count, replies, requests;
static const cmc_core *core;
static FILE *glue_log;

/* Events the glue causes while carrying out outputs, delivered afterwards. */
#define QUEUE_MAX 64
static struct queued { int node; cmc_event ev; } queue[QUEUE_MAX];
static int queued;

static void enqueue(int n, const cmc_event *ev) {
    if (queued == QUEUE_MAX) {
        fprintf(stderr, "event queue full\n");
        exit(1);
    }
    queue[queued].node = n;
    queue[queued].ev = *ev;
    queued++;
}

static long long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void run_outputs(int n, const cmc_outputs *out) {
    struct node *me = &nodes[n];
    for (uint32_t i = 0; i < out->count; i++) {
        const cmc_output *o = &out->items[i];
        cmc_event ev;
        if (GLUE_BUG == 1 && o->kind == CMC_OUT_SET_TIMER) continue;
        if (glue_log) cmc_glue_log_output(glue_log, (uint32_t)n, o);
        switch (o->kind) {
        case CMC_OUT_SEND:
            sendto(me->sock, o->payload, o->len, 0, (struct sockaddr *)&nodes[o->dst].addr,
                   sizeof nodes[o->dst].addr);
            break;
        case CMC_OUT_SET_TIMER:
            me->timers |= 1u << o->id;
            me->deadline_ms[o->id] = now_ms() + 50;
            break;
        case CMC_OUT_CANCEL_TIMER:
            me->timers &= ~(1u << o->id);
            break;
        case CMC_OUT_PERSIST:
            if (pwrite(me->file, o->payload, o->len, o->id) != (ssize_t)o->len || fsync(me->file) != 0) {
                perror("persist");
                exit(1);
            }
            memset(&ev, 0, sizeof ev);
            ev.kind = CMC_EV_FLUSHED;
            ev.id = o->id;
            ev.len = o->len;
            memcpy(ev.payload, o->payload, o->len);
            enqueue(n, &ev);
            if (GLUE_BUG == 3) enqueue(n, &ev);
            break;
        case CMC_OUT_REPLY:
            printf("reply r%u %s from node %d\n", o->id,
                   o->len && o->payload[0] ? "OK" : "BUSY", n);
            fflush(stdout);
            replies++;
            if (replies < requests) {
                memset(&ev, 0, sizeof ev);
                ev.kind = CMC_EV_CLIENT;
                ev.id = (uint32_t)replies;
                enqueue(0, &ev);
            }
            break;
        default:
            break;
        }
    }
}

static void step(int n, const cmc_event *ev) {
    cmc_outputs out;
    memset(&out, 0, sizeof out);
    if (glue_log) cmc_glue_log_event(glue_log, (uint32_t)n, ev);
    /* The write is on disk; the node's durable part changes as FLUSHED arrives. */
    if (ev->kind == CMC_EV_FLUSHED) memcpy(nodes[n].durable + ev->id, ev->payload, ev->len);
    if (core->step(&nodes[n].cfg, nodes[n].durable, nodes[n].vol, ev, &out) != 0) {
        fprintf(stderr, "node %d: step failed on event %u\n", n, ev->kind);
        exit(1);
    }
    run_outputs(n, &out);
}

/* Runs `ev` at node `n`, then every event the glue caused meanwhile. */
static void deliver(int n, const cmc_event *ev) {
    step(n, ev);
    for (int next = 0; next < queued; next++) step(queue[next].node, &queue[next].ev);
    queued = 0;
}

int main(int argc, char **argv) {
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: %s NODES REQUESTS DIR [LOG]\n", argv[0]);
        return 2;
    }
    if (argc == 5) {
        glue_log = fopen(argv[4], "w");
        if (!glue_log) {
            perror(argv[4]);
            return 1;
        }
        cmc_glue_log_start(glue_log);
    }
    node_count = atoi(argv[1]);
    requests = atoi(argv[2]);
    core = cmc_core_entry();
    if (node_count < 2 || node_count > NODES_MAX || core->abi_version != CMC_ABI_VERSION) return 2;
    for (int n = 0; n < node_count; n++) {
        struct node *me = &nodes[n];
        char path[4096];
        socklen_t len = sizeof me->addr;
        snprintf(path, sizeof path, "%s/node%d.dat", argv[3], n);
        me->file = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
        me->sock = socket(AF_INET, SOCK_DGRAM, 0);
        memset(&me->addr, 0, sizeof me->addr);
        me->addr.sin_family = AF_INET;
        me->addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (me->file < 0 || me->sock < 0 || bind(me->sock, (struct sockaddr *)&me->addr, len) != 0 ||
            getsockname(me->sock, (struct sockaddr *)&me->addr, &len) != 0) {
            perror("setup");
            return 1;
        }
        me->cfg.node = (uint32_t)n;
        me->cfg.nodes = (uint32_t)node_count;
        me->durable = calloc(1, core->durable_size);
        me->vol = calloc(1, core->volatile_size);
    }
    cmc_event ev;
    for (int n = 0; n < node_count; n++) {
        memset(&ev, 0, sizeof ev);
        ev.kind = CMC_EV_START;
        deliver(n, &ev);
    }
    memset(&ev, 0, sizeof ev);
    ev.kind = CMC_EV_CLIENT;
    if (requests > 0) deliver(0, &ev);
    long long give_up = now_ms() + 10000;
    while (replies < requests && now_ms() < give_up) {
        struct pollfd fds[NODES_MAX];
        for (int n = 0; n < node_count; n++) fds[n] = (struct pollfd){ nodes[n].sock, POLLIN, 0 };
        poll(fds, (nfds_t)node_count, 10);
        for (int n = 0; n < node_count; n++) {
            if (fds[n].revents & POLLIN) {
                struct sockaddr_in from;
                socklen_t len = sizeof from;
                memset(&ev, 0, sizeof ev);
                ssize_t got = recvfrom(nodes[n].sock, ev.payload, CMC_PAYLOAD_MAX, 0,
                                       (struct sockaddr *)&from, &len);
                if (got < 0) continue;
                ev.kind = CMC_EV_RECV;
                ev.len = (uint32_t)got;
                for (int s = 0; s < node_count; s++)
                    if (nodes[s].addr.sin_port == from.sin_port) ev.src = (uint32_t)s;
                deliver(n, &ev);
                if (GLUE_BUG == 2) deliver(n, &ev);
            }
            for (uint32_t t = 0; t < CMC_TIMERS_MAX; t++) {
                if ((nodes[n].timers & (1u << t)) && now_ms() >= nodes[n].deadline_ms[t]) {
                    nodes[n].timers &= ~(1u << t);
                    memset(&ev, 0, sizeof ev);
                    ev.kind = CMC_EV_TIMER;
                    ev.id = t;
                    deliver(n, &ev);
                }
            }
        }
    }
    printf("%d of %d requests replied\n", replies, requests);
    if (glue_log && fclose(glue_log) != 0) {
        perror("glue log");
        return 1;
    }
    return replies == requests ? 0 : 1;
}
