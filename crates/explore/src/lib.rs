//! `cmc explore`: a local web UI to step through a model's states by hand.
//!
//! [`Server::bind`] listens on `127.0.0.1` only; [`Server::run`] serves:
//! the initial states, the enabled actions of the current state with what
//! each changes, following one, going back, jumping to a state by its
//! fingerprint, and stepping through a loaded replay file. For a World it
//! also shows the nodes (their cores' descriptions), the network, timers,
//! pending persists, crashed nodes, cut links, the ghost history and the
//! message sequence chart of the path so far. The current path is in the
//! URL (`/?path=3.0.1`), so a state can be shared. Pages are rendered on
//! the server, with inline CSS and nothing fetched from the network.

pub mod explorer;
pub mod http;
mod models;
mod page;
pub mod path;
mod routes;
mod world_view;

use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::sync::Arc;

use cmc_model::Model;
use cmc_search::AnyModel;

pub use models::explorable;

/// A socket listening on `127.0.0.1:port` (`0`: a free port), as
/// [`Server::bind`] makes it.
pub fn listen(port: u16) -> Result<TcpListener, String> {
    TcpListener::bind((Ipv4Addr::LOCALHOST, port))
        .map_err(|problem| format!("cannot listen on 127.0.0.1:{port}: {problem}"))
}

/// An explorer bound to a loopback port, ready to serve.
pub struct Server {
    listener: TcpListener,
    routes: routes::Routes,
    address: SocketAddr,
    limits: http::Limits,
}

impl Server {
    /// Binds `127.0.0.1:port` (`0`: a free port) for `model`; `Err` if the
    /// port is taken or the model cannot be explored.
    pub fn bind(model: Box<dyn AnyModel>, port: u16) -> Result<Server, String> {
        Server::bind_explorable(explorable(model)?, port)
    }

    /// Binds `127.0.0.1:port` for any [`Model`] (e.g. one of a program's
    /// own, from its tests or its own binary): its states' fields, enabled
    /// actions, replay files and fingerprints, without a World's extras.
    pub fn bind_model<M: Model + Send + 'static>(model: M, port: u16) -> Result<Server, String> {
        Server::bind_explorable(
            Box::new(explorer::ModelExplorer::new(model, explorer::Plain)),
            port,
        )
    }

    /// Serves `model` on `listener`, a loopback socket bound already (by a
    /// supervisor that starts the explorer again after a core fault, on the
    /// same port: [`listen`]); `Err` if the model cannot be explored.
    pub fn on_listener(model: Box<dyn AnyModel>, listener: TcpListener) -> Result<Server, String> {
        Server::serve_explorable(explorable(model)?, listener)
    }

    fn bind_explorable(model: Box<dyn explorer::Explorable>, port: u16) -> Result<Server, String> {
        Server::serve_explorable(model, listen(port)?)
    }

    fn serve_explorable(
        model: Box<dyn explorer::Explorable>,
        listener: TcpListener,
    ) -> Result<Server, String> {
        let address = listener
            .local_addr()
            .map_err(|problem| format!("cannot read the listening address: {problem}"))?;
        Ok(Server {
            listener,
            routes: routes::Routes::new(model, address.port()),
            address,
            limits: http::Limits::default(),
        })
    }

    /// The same server with other bounds on requests (see [`http::Limits`]).
    pub fn with_limits(self, limits: http::Limits) -> Server {
        Server { limits, ..self }
    }

    /// The URL of the explorer's first page.
    pub fn url(&self) -> String {
        format!("http://{}/", self.address)
    }

    /// Serves requests until the process ends.
    pub fn run(self) -> ! {
        let routes = Arc::new(self.routes);
        http::serve(
            self.listener,
            self.limits,
            Arc::new(move |request: &http::Request| routes.handle(request)),
        )
    }
}
