/*
 * cmc_glue_log.h: the glue log a product writes for `cmc validate`.
 *
 * The glue is the code around a core that the checker never runs: it turns
 * sockets, timers and disks into events and outputs into system calls. Log
 * every event just before you give it to a core's step, and every output as
 * you carry it out (not as the step returns it), and `cmc validate LOG --core
 * lib.so --nodes N` replays the events through the same core and checks that
 * the glue did what the step asked and what a network, a disk and timers can
 * do. The format is documented in cmc-world's `glue_log` module:
 *
 *   cmc-glue-log 1
 *   event NODE KIND [src=N] [id=N] [clock=N] [payload=HEX]
 *   output NODE KIND [dst=N] [id=N] [payload=HEX]
 *   crash NODE
 *
 * Header-only; needs <stdio.h> and cmc.h. The functions return what fprintf
 * returns (negative on error).
 */
#ifndef CMC_GLUE_LOG_H
#define CMC_GLUE_LOG_H

#include <stdio.h>

#include "cmc.h"

static inline const char *cmc_glue_event_name(uint32_t kind) {
    static const char *const names[] = {"?", "START", "RECV", "TIMER", "FLUSHED",
                                        "CLIENT", "LOCAL_FAIL", "WAKE", "TICK",
                                        "?", "CHOICE"};
    return kind < sizeof names / sizeof names[0] ? names[kind] : "?";
}

static inline const char *cmc_glue_output_name(uint32_t kind) {
    static const char *const names[] = {"?", "SEND", "SET_TIMER", "CANCEL_TIMER",
                                        "PERSIST", "WAKE", "REPLY", "SET_TIMER_AT",
                                        "CHOOSE"};
    return kind < sizeof names / sizeof names[0] ? names[kind] : "?";
}

static inline void cmc_glue_payload(FILE *log, const uint8_t *payload, uint32_t len) {
    if (len == 0) return;
    fputs(" payload=", log);
    for (uint32_t i = 0; i < len && i < CMC_PAYLOAD_MAX; i++) fprintf(log, "%02x", payload[i]);
}

/* Writes the header; call once, when the log is opened. */
static inline int cmc_glue_log_start(FILE *log) {
    return fprintf(log, "cmc-glue-log 1\n");
}

/* Logs that `node`'s step is given `ev`. */
static inline int cmc_glue_log_event(FILE *log, uint32_t node, const cmc_event *ev) {
    fprintf(log, "event %u %s src=%u id=%u clock=%llu", node, cmc_glue_event_name(ev->kind),
            ev->src, ev->id, (unsigned long long)ev->clock);
    cmc_glue_payload(log, ev->payload, ev->len);
    return fprintf(log, "\n");
}

/* Logs that the glue carries out output `o` of `node`'s last step. */
static inline int cmc_glue_log_output(FILE *log, uint32_t node, const cmc_output *o) {
    fprintf(log, "output %u %s dst=%u id=%u", node, cmc_glue_output_name(o->kind), o->dst, o->id);
    cmc_glue_payload(log, o->payload, o->len);
    return fprintf(log, "\n");
}

/* Logs that `node` crashed (lost its volatile part and unflushed writes). */
static inline int cmc_glue_log_crash(FILE *log, uint32_t node) {
    return fprintf(log, "crash %u\n", node);
}

#endif
