/*
 * A core that answers client requests correctly, and attacks its checker in
 * the way its -D flag selects (for the supervisor's tests):
 *   EXIT_IN_STEP=c    exit(c) on the first client request
 *   UNDERSCORE_EXIT   _exit(0) on the first client request
 *   EXIT_AFTER=n      exit(0) on a client request to the last node after its
 *                     n replies (deep in a search, whose workers have been
 *                     started again and again, and not the first action of
 *                     its pre-state)
 *   EXIT_IN_ENTRY     exit(0) in cmc_core_entry
 *   LOOP_IN_ENTRY     cmc_core_entry never returns
 *   EXIT_IN_DESCRIBE  never replies (a deadlock) and exit(0)s in describe_state
 *   PAST_VOLATILE     writes 8 bytes past the end of the volatile part
 *   WILD_WRITE=n      writes one byte n bytes past the end of the volatile
 *                     part (n < 0: before it)
 *   INTO_DURABLE      writes into the (const) durable part
 *   INTO_EVENT        writes into the (const) event
 *   PRINTS            printf()s to standard output in every step
 *   SLOW              sleeps 2 ms in every step (to be interrupted)
 *   FORGE_FRAME       on the first client request, writes a supervisor's
 *                     end-of-run frame saying "pass" (in the layout of
 *                     frames without a nonce) to every pipe it has open
 *                     beyond standard error, then _exit(0)s
 */
#include "cmc.h"
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#if defined(FORGE_FRAME)
#include <signal.h>
#include <string.h>
#include <sys/stat.h>

/* A frame as a supervised child once sent it: magic, payload length (u64),
 * payload = tag 0 (report), exit code 0 (i32), stdout (u32 length, bytes). */
static void forge_frame(void) {
    static const char text[] = "Model checking completed. No error has been found.\n";
    unsigned char frame[128];
    uint32_t text_len = sizeof text - 1;
    uint64_t payload_len = 1 + 4 + 4 + text_len;
    size_t at = 0;
    memcpy(frame, "CMCEND01", 8); at += 8;
    memcpy(frame + at, &payload_len, 8); at += 8;
    frame[at++] = 0;
    memset(frame + at, 0, 4); at += 4;
    memcpy(frame + at, &text_len, 4); at += 4;
    memcpy(frame + at, text, text_len); at += text_len;
    /* A pipe it inherited whose reader is gone must not end it by SIGPIPE
     * before the forged frame's exit. */
    signal(SIGPIPE, SIG_IGN);
    for (int fd = 3; fd < 1024; fd++) {
        struct stat st;
        if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode)) {
            ssize_t ignored = write(fd, frame, at);
            (void)ignored;
        }
    }
    _exit(0);
}
#endif

typedef struct { uint32_t replies; } volatile_state;

static int step(const cmc_config *c, const void *d, void *v, const cmc_event *e, cmc_outputs *o) {
    volatile_state *state = v;
    (void)c; (void)d;
#if defined(PRINTS)
    printf("hostile core: event %u\n", e->kind);
    fflush(stdout);
#endif
#if defined(SLOW)
    usleep(2000);
#endif
    if (e->kind != CMC_EV_CLIENT) return 0;
#if defined(EXIT_AFTER)
    if (c->node + 1 == c->nodes && state->replies == EXIT_AFTER) exit(0);
#endif
#if defined(EXIT_IN_STEP)
    exit(EXIT_IN_STEP);
#elif defined(UNDERSCORE_EXIT)
    _exit(0);
#elif defined(FORGE_FRAME)
    forge_frame();
#elif defined(PAST_VOLATILE)
    memset((char *)v + sizeof(volatile_state), 0, 8);
#elif defined(WILD_WRITE)
    *((volatile char *)v + sizeof(volatile_state) + (WILD_WRITE)) = 1;
#elif defined(INTO_DURABLE)
    *(uint32_t *)d = 0xdead;
#elif defined(INTO_EVENT)
    ((cmc_event *)e)->id = 77;
#elif defined(EXIT_IN_DESCRIBE)
    return 0; /* never replies: a deadlock, whose trace describes the state */
#endif
    state->replies++;
    return cmc_reply(o, e->id, &state->replies, sizeof state->replies);
}

static void describe_state(const cmc_config *c, const void *d, const void *v, char *buf, size_t cap) {
    (void)c; (void)d;
#if defined(EXIT_IN_DESCRIBE)
    exit(0);
#endif
    snprintf(buf, cap, "replies=%u", ((const volatile_state *)v)->replies);
}

static const cmc_core core = {
    .abi_version = CMC_ABI_VERSION,
    .durable_size = 4,
    .volatile_size = sizeof(volatile_state),
    .name = "hostile",
    .step = step,
    .describe_state = describe_state,
};

const cmc_core *cmc_core_entry(void) {
#if defined(EXIT_IN_ENTRY)
    exit(0);
#elif defined(LOOP_IN_ENTRY)
    for (volatile int spin = 1; spin;) {}
#endif
    return &core;
}
