//! A model that sets no `max_permutations` and outgrows cmc's budget fails: loom would have
//! gone on exploring, so a cut is not a pass. (A file of its own: the budget is read from
//! the process environment.)

mod programs;

#[test]
#[should_panic(expected = "exploration cut by its budget after 1 executions (not complete)")]
fn a_cut_by_cmcs_budget_is_not_a_pass() {
    std::env::set_var("CMC_LOOM_BUDGET", "1");
    loom::model(programs::two_increments);
}
