//! `std::net` sockets with a guard: inside a checked execution, creating a socket and
//! reading or writing a `TcpStream` end the execution with "I/O is not supported inside a
//! checked execution: <call> at <file:line:col>"; outside one they are std's. `shim::net`
//! switches between this and `std::net` with the cfg. Methods reached through `Deref` to
//! the std socket (`accept`, `send_to`, ...) are not guarded.

use crate::rt::refuse_io;
use std::io;
use std::net::ToSocketAddrs;
use std::panic::Location;

macro_rules! guarded_socket {
    ($name:ident, $ctor:ident, $what:literal) => {
        #[doc = concat!("`std::net::", stringify!($name), "` whose creation is refused inside an execution.")]
        #[derive(Debug)]
        pub struct $name(std::net::$name);

        impl $name {
            #[doc = concat!("`std::net::", stringify!($name), "::", stringify!($ctor), "`.")]
            #[track_caller]
            pub fn $ctor<A: ToSocketAddrs>(addr: A) -> io::Result<$name> {
                refuse_io($what, Location::caller());
                std::net::$name::$ctor(addr).map($name)
            }

            /// The std socket.
            pub fn into_std(self) -> std::net::$name {
                self.0
            }
        }

        impl std::ops::Deref for $name {
            type Target = std::net::$name;
            fn deref(&self) -> &std::net::$name {
                &self.0
            }
        }
    };
}

guarded_socket!(TcpStream, connect, "TcpStream::connect");
guarded_socket!(TcpListener, bind, "TcpListener::bind");
guarded_socket!(UdpSocket, bind, "UdpSocket::bind");

crate::rt::refused_read_write!(TcpStream, "TcpStream");
