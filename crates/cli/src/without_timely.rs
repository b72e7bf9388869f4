//! The timely engine as `cmc-cli` sees it when built without its `timely`
//! feature (a front end that leaves out timely dataflow and its crates):
//! the names of `cmc-distributed` that `crate::distributed` uses, and
//! every cluster, checkpoint or run of the engine is an error that says how
//! to get it.

use std::path::Path;
use std::time::Duration;

/// Why a timely run is refused in this build.
pub const UNAVAILABLE: &str = "this program was built without the timely engine (cmc-cli's `timely` feature); use --engine native";

/// Seconds a process waits for a silent peer (as `cmc-distributed`'s).
pub const DEFAULT_PEER_TIMEOUT: Duration = Duration::from_secs(60);

/// A cluster of processes: none can be made in this build.
pub enum Cluster {}

impl Cluster {
    /// Always refused: there is no timely engine to run on a cluster.
    pub fn from_hostfile(
        _: &Path,
        _: usize,
        _: usize,
        _: Duration,
    ) -> Result<Cluster, &'static str> {
        Err(UNAVAILABLE)
    }

    /// Unreachable: no [`Cluster`] exists.
    pub fn with_peer_timeout(self, _: Duration) -> Cluster {
        match self {}
    }
}

/// A checkpoint's model name and parameters.
type ModelAndParams = (String, Vec<(String, String)>);

/// Always refused: a timely checkpoint cannot be read in this build.
pub fn checkpoint_model(_: &Path, _: usize) -> Result<ModelAndParams, &'static str> {
    Err(UNAVAILABLE)
}
