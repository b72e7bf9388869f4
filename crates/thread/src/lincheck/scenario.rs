//! Scenarios: an optional sequential init part, operations per concurrent thread, and an
//! optional sequential post part; deterministic generation from a seed and the one-step
//! reductions used to minimise a failing scenario.

use crate::rng::Rng;
use std::fmt;

/// A concurrent test scenario over operations `Op`. The init part runs on the main thread
/// before the concurrent threads are spawned, the post part after all are joined.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scenario<Op> {
    /// Operations run sequentially before the concurrent part.
    pub init: Vec<Op>,
    /// The operations of each concurrent thread, in program order.
    pub threads: Vec<Vec<Op>>,
    /// Operations run sequentially after the concurrent part.
    pub post: Vec<Op>,
}

/// The shape of generated scenarios.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Concurrent threads.
    pub threads: usize,
    /// Operations per concurrent thread.
    pub ops_per_thread: usize,
    /// Operations in the init part.
    pub init_ops: usize,
    /// Operations in the post part.
    pub post_ops: usize,
}

impl<Op> Scenario<Op> {
    /// Total number of operations.
    pub fn len(&self) -> usize {
        self.init.len() + self.threads.iter().map(Vec::len).sum::<usize>() + self.post.len()
    }

    /// Whether the scenario has no operations.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<Op: Clone> Scenario<Op> {
    /// Generates a scenario of `shape` by calling `gen` for each operation, init part first,
    /// then thread by thread, then the post part; the same `rng` state gives the same scenario.
    pub fn generate(shape: Shape, rng: &mut Rng, gen: &dyn Fn(&mut Rng) -> Op) -> Self {
        let mut ops = |n: usize| (0..n).map(|_| gen(rng)).collect::<Vec<Op>>();
        let init = ops(shape.init_ops);
        let threads = (0..shape.threads)
            .map(|_| ops(shape.ops_per_thread))
            .collect();
        let post = ops(shape.post_ops);
        Scenario {
            init,
            threads,
            post,
        }
    }

    /// Every scenario obtained by removing one operation (threads left empty are dropped),
    /// concurrent operations first: the candidates tried, in order, when minimising.
    pub fn reductions(&self) -> Vec<Scenario<Op>> {
        let mut out = Vec::new();
        for t in 0..self.threads.len() {
            for i in 0..self.threads[t].len() {
                let mut s = self.clone();
                s.threads[t].remove(i);
                s.threads.retain(|ops| !ops.is_empty());
                out.push(s);
            }
        }
        for i in 0..self.init.len() {
            let mut s = self.clone();
            s.init.remove(i);
            out.push(s);
        }
        for i in 0..self.post.len() {
            let mut s = self.clone();
            s.post.remove(i);
            out.push(s);
        }
        out
    }
}

impl<Op: fmt::Debug> fmt::Display for Scenario<Op> {
    /// One line per part, e.g. `init: [Push(1)]; thread 1: [Pop, Size]; post: []`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "init: {:?}", self.init)?;
        for (i, ops) in self.threads.iter().enumerate() {
            write!(f, "; thread {}: {ops:?}", i + 1)?;
        }
        write!(f, "; post: {:?}", self.post)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape() -> Shape {
        Shape {
            threads: 2,
            ops_per_thread: 2,
            init_ops: 1,
            post_ops: 1,
        }
    }

    #[test]
    fn generation_is_deterministic_per_seed() {
        let gen = |r: &mut Rng| r.below(100);
        let a = Scenario::generate(shape(), &mut Rng::new(5), &gen);
        let b = Scenario::generate(shape(), &mut Rng::new(5), &gen);
        let c = Scenario::generate(shape(), &mut Rng::new(6), &gen);
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!((a.len(), a.threads.len()), (6, 2));
    }

    #[test]
    fn reductions_remove_exactly_one_operation() {
        let s = Scenario {
            init: vec![0],
            threads: vec![vec![1], vec![2, 3]],
            post: vec![],
        };
        let r = s.reductions();
        assert_eq!(r.len(), 4);
        assert!(r.iter().all(|x| x.len() == 3));
        // Removing thread 1's only operation drops the thread.
        assert_eq!(r[0].threads, vec![vec![2, 3]]);
    }
}
