//! `proto`: everything librocjitsu.so and rocjitsud must agree on, as pure
//! functions over byte slices, plus thin I/O edges behind features.
//!
//! Pure core (no I/O, never panics on any input, fuzzed):
//! - [`abi`]: the KFD and DRM ioctl structs and numbers the ROCm 5.2 stack uses.
//! - [`ioctl`]: the ioctl codec (argument sizes, inlined arrays, pointer
//!   restoration), shared by local mode and daemon mode.
//! - [`header`]: the 16-byte frame header and the opcodes.
//! - [`payload`]: the typed payload of each opcode, with exact sizes, and the
//!   fd trailer that says which memory each passed descriptor is.
//! - [`message`]: requests and replies as whole messages.
//! - [`sequence`]: the per-connection state machines ([`ServerSequence`],
//!   [`ClientSequence`]): handshake first and once, roles, request-id echo.
//! - [`error`]: one error enum per layer, each mapping to an errno.
//! - [`transport`]: the [`Transport`] trait the RPC layer is written against.
//! - [`client`]: the synchronous [`RpcClient`] the preload library uses.
//!
//! Edges:
//! - `framing::std_io` (feature `std-io`, default): blocking Unix-socket
//!   transport with SCM_RIGHTS, for the preload library. No tokio.
//! - `framing::tokio_io` (feature `tokio-io`): the tokio-util codec and an
//!   fd-passing async connection, for the daemon.

#![deny(unsafe_op_in_unsafe_fn)]
#![forbid(unsafe_code)]

pub mod abi;
pub mod client;
pub mod error;
pub mod framing;
#[doc(hidden)]
pub mod harness;
pub mod header;
pub mod ioctl;
pub mod message;
pub mod payload;
pub mod sequence;
pub mod transport;
mod wire;

pub use client::{Outcome, RpcClient};
pub use error::{FrameError, MessageError, RpcError, SequenceError, TransportError};
pub use header::{Header, Opcode};
pub use message::{Reply, Request};
pub use payload::{FdDesc, FdKind, Role, MAX_FDS, PROTOCOL_VERSION};
pub use sequence::{ClientSequence, Pending, Response, ServerSequence};
pub use transport::Transport;
