//! Histories of client operations.

/// The index of an operation in its [`History`].
pub type OpId = usize;

/// What a completed operation returned, and when.
#[derive(Clone, Debug, PartialEq)]
pub struct Response<Ret> {
    /// The step at which the response arrived (after the invocation's).
    pub at: u64,
    /// The returned value.
    pub value: Ret,
}

/// One client operation.
#[derive(Clone, Debug, PartialEq)]
pub struct Operation<Op, Ret> {
    /// The client that invoked it; a client's operations never overlap.
    pub client: u32,
    /// The operation and its arguments.
    pub op: Op,
    /// The step at which it was invoked.
    pub invoked_at: u64,
    /// Its response, or `None` while it is pending.
    pub response: Option<Response<Ret>>,
}

impl<Op, Ret> Operation<Op, Ret> {
    /// The step of the response, or `u64::MAX` for a pending operation.
    pub(crate) fn returned_at(&self) -> u64 {
        self.response.as_ref().map_or(u64::MAX, |r| r.at)
    }
}

/// A history: operations with invocation and response steps.
///
/// Invariant (checked by [`History::push`]): steps are distinct across all
/// invocations and responses, and each response comes after its invocation.
#[derive(Clone, Debug, PartialEq)]
pub struct History<Op, Ret> {
    ops: Vec<Operation<Op, Ret>>,
    next_step: u64,
}

impl<Op, Ret> Default for History<Op, Ret> {
    fn default() -> Self {
        History {
            ops: Vec::new(),
            next_step: 0,
        }
    }
}

impl<Op, Ret> History<Op, Ret> {
    /// An empty history.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records that `client` invoked `op` now; returns its id.
    pub fn invoke(&mut self, client: u32, op: Op) -> OpId {
        let at = self.tick();
        self.ops.push(Operation {
            client,
            op,
            invoked_at: at,
            response: None,
        });
        self.ops.len() - 1
    }

    /// Records that operation `id` returned `value` now.
    ///
    /// Panics if `id` does not exist or already returned.
    pub fn respond(&mut self, id: OpId, value: Ret) {
        let at = self.tick();
        let op = &mut self.ops[id];
        assert!(op.response.is_none(), "operation {id} already returned");
        op.response = Some(Response { at, value });
    }

    /// Adds an operation with explicit steps (e.g. decoded from a trace).
    ///
    /// Panics if a step is reused or a response does not follow its invocation.
    pub fn push(&mut self, operation: Operation<Op, Ret>) -> OpId {
        let steps =
            |o: &Operation<Op, Ret>| [Some(o.invoked_at), o.response.as_ref().map(|r| r.at)];
        let new = steps(&operation);
        assert!(
            operation.invoked_at < operation.returned_at(),
            "a response must come after its invocation"
        );
        for old in &self.ops {
            for step in steps(old).into_iter().flatten() {
                assert!(!new.contains(&Some(step)), "step {step} is used twice");
            }
        }
        self.next_step = self.next_step.max(operation.invoked_at + 1);
        if let Some(response) = &operation.response {
            self.next_step = self.next_step.max(response.at + 1);
        }
        self.ops.push(operation);
        self.ops.len() - 1
    }

    /// The operations, by id.
    pub fn operations(&self) -> &[Operation<Op, Ret>] {
        &self.ops
    }

    /// Number of operations.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// Whether there are no operations.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    fn tick(&mut self) -> u64 {
        self.next_step += 1;
        self.next_step - 1
    }
}
