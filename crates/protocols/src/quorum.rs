//! How many nodes make a quorum, and the planted bug that miscounts it.

/// A majority of `nodes`.
pub(crate) fn majority(nodes: u32) -> u32 {
    nodes / 2 + 1
}

/// The quorum of `nodes`: a majority, or with `off_by_one` (a planted bug)
/// one node fewer, `nodes / 2`.
pub(crate) fn quorum(nodes: u32, off_by_one: bool) -> u32 {
    if off_by_one {
        nodes / 2
    } else {
        majority(nodes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quorum_is_a_majority_and_the_planted_bug_counts_one_fewer() {
        assert_eq!([3, 4, 5].map(majority), [2, 3, 3]);
        assert_eq!([3, 4, 5].map(|nodes| quorum(nodes, false)), [2, 3, 3]);
        assert_eq!([3, 4, 5].map(|nodes| quorum(nodes, true)), [1, 2, 2]);
    }
}
