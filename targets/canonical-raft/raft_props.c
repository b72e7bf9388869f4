/*
 * raft_props.c: Raft's safety properties over the canonical/raft adapter's
 * views (raft_view.h), as C properties of cmc.h.
 *
 * A node's view is its volatile part: zero while it is crashed, `role`
 * CR_DOWN until its first event after a start. Its durable part is the
 * library's storage as flushed. "Committed" means: some running node's
 * commit index covers the entry (what a client may have been told).
 */
#include "raft_view.h"

#include <raft.h>

static const cr_view *view_of(const cmc_world_view *w, uint32_t i) {
    const cr_view *v = cmc_view_volatile(w, i);
    return cmc_view_crashed(w, i) || v->role == CR_DOWN ? NULL : v;
}

static int same(cr_entry a, cr_entry b) { return a.term == b.term && a.type == b.type && a.value == b.value; }

/* At most one leader per term. */
static int election_safety(const cmc_world_view *w) {
    for (uint32_t a = 0; a < w->nodes; a++)
        for (uint32_t b = a + 1; b < w->nodes; b++) {
            const cr_view *x = view_of(w, a), *y = view_of(w, b);
            if (x && y && x->role == CR_LEADER && y->role == CR_LEADER && x->term == y->term) return 0;
        }
    return 1;
}

/* Two logs with an entry of the same index and term are identical up to it. */
static int log_matching(const cmc_world_view *w) {
    for (uint32_t a = 0; a < w->nodes; a++)
        for (uint32_t b = a + 1; b < w->nodes; b++) {
            const cr_view *x = view_of(w, a), *y = view_of(w, b);
            if (!x || !y) continue;
            unsigned last = x->last_index < y->last_index ? x->last_index : y->last_index;
            for (unsigned i = last; i >= 1; i--) {
                if (x->log[i].term != y->log[i].term) continue;
                for (unsigned j = 1; j <= i; j++)
                    if (!same(x->log[j], y->log[j])) return 0;
                break;
            }
        }
    return 1;
}

/* A leader holds every entry that a node of a term no later than the
 * leader's knows to be committed. */
static int leader_completeness(const cmc_world_view *w) {
    for (uint32_t l = 0; l < w->nodes; l++) {
        const cr_view *leader = view_of(w, l);
        if (!leader || leader->role != CR_LEADER) continue;
        for (uint32_t k = 0; k < w->nodes; k++) {
            const cr_view *knows = view_of(w, k);
            if (k == l || !knows || knows->term > leader->term) continue;
            for (unsigned i = 1; i <= knows->commit; i++)
                if (i > leader->last_index || !same(leader->log[i], knows->log[i])) return 0;
        }
    }
    return 1;
}

/* No two nodes apply different entries at one index. */
static int state_machine_safety(const cmc_world_view *w) {
    for (uint32_t a = 0; a < w->nodes; a++)
        for (uint32_t b = a + 1; b < w->nodes; b++) {
            const cr_view *x = view_of(w, a), *y = view_of(w, b);
            if (!x || !y) continue;
            unsigned last = x->applied < y->applied ? x->applied : y->applied;
            for (unsigned i = 1; i <= last && i <= CR_INDEX_MAX; i++)
                if (!same(x->applied_log[i], y->applied_log[i])) return 0;
        }
    return 1;
}

/* The entry at `index` of a node's flushed storage. */
static cr_entry durable_entry(const cmc_world_view *w, uint32_t node, unsigned index) {
    const cr_durable *d = cmc_view_durable(w, node);
    if (index == 1) return (cr_entry){1, RAFT_CHANGE, 0, 0};
    return d->log[index - 2];
}

/* Every committed entry is in the flushed storage of a majority. */
static int committed_entries_survive(const cmc_world_view *w) {
    for (uint32_t k = 0; k < w->nodes; k++) {
        const cr_view *knows = view_of(w, k);
        if (!knows) continue;
        for (unsigned i = 2; i <= knows->commit; i++) {
            unsigned holders = 0;
            for (uint32_t n = 0; n < w->nodes; n++) holders += same(durable_entry(w, n, i), knows->log[i]);
            if (2 * holders <= w->nodes) return 0;
        }
    }
    return 1;
}

/* A leader moves its commit index only onto an entry of its own term: an
 * entry of an earlier term is committed only together with a later one of
 * the leader's term, never by counting the servers that store it (Raft,
 * section 5.4.2 and its Figure 8). */
static int leader_commits_own_term(const cmc_world_view *pre, const cmc_world_view *post) {
    for (uint32_t i = 0; i < post->nodes; i++) {
        const cr_view *before = view_of(pre, i), *after = view_of(post, i);
        if (!before || !after || after->role != CR_LEADER || after->commit <= before->commit) continue;
        if (after->commit > CR_INDEX_MAX || after->log[after->commit].term != after->term) return 0;
    }
    return 1;
}

/* Witness: a client's command is committed. */
static int command_committed(const cmc_world_view *w) {
    for (uint32_t k = 0; k < w->nodes; k++) {
        const cr_view *v = view_of(w, k);
        if (!v) continue;
        for (unsigned i = 2; i <= v->commit; i++)
            if (v->log[i].type == RAFT_COMMAND) return 1;
    }
    return 0;
}

CMC_PROPERTIES(CMC_INVARIANT("ElectionSafety", election_safety), CMC_INVARIANT("LogMatching", log_matching),
               CMC_INVARIANT("LeaderCompleteness", leader_completeness),
               CMC_INVARIANT("StateMachineSafety", state_machine_safety),
               CMC_INVARIANT("CommittedEntriesSurvive", committed_entries_survive),
               CMC_ACTION_PROP("LeaderCommitsOwnTerm", leader_commits_own_term),
               CMC_WITNESS("CommandCommitted", command_committed))
