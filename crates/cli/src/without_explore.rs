//! The web explorer as `cmc-cli` sees it when built without its `explore`
//! feature (a front end that leaves out the HTTP server and its crates):
//! the names of `cmc-explore` that the command line uses, and binding a
//! server is an error that says how to get it.

use std::convert::Infallible;

/// A web explorer: none can be bound in this build.
pub struct Server(Infallible);

/// Why `explore` is refused in this build.
const UNAVAILABLE: &str =
    "this program was built without the web explorer (cmc-cli's `explore` feature)";

/// Always refused: there is no explorer to listen for in this build.
pub fn listen(_: u16) -> Result<std::net::TcpListener, String> {
    Err(UNAVAILABLE.into())
}

impl Server {
    /// Always refused: there is no explorer in this build.
    pub fn bind<T>(_: T, _: u16) -> Result<Server, String> {
        Err(UNAVAILABLE.into())
    }

    /// Always refused: there is no explorer in this build.
    pub fn bind_model<T>(_: T, _: u16) -> Result<Server, String> {
        Err(UNAVAILABLE.into())
    }

    /// Always refused: there is no explorer in this build.
    pub fn on_listener<T>(_: T, _: std::net::TcpListener) -> Result<Server, String> {
        Err(UNAVAILABLE.into())
    }

    /// Unreachable: no [`Server`] exists.
    pub fn url(&self) -> String {
        match self.0 {}
    }

    /// Unreachable: no [`Server`] exists.
    pub fn run(self) -> ! {
        match self.0 {}
    }
}
