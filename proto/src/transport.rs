//! The seam between the RPC layer and the operating system: move one frame,
//! with or without OS handles, over a connection.
//!
//! The RPC layer ([`crate::client::RpcClient`]) is written against this trait
//! only, so another platform's transport (a Windows named pipe passing
//! handles with `DuplicateHandle`) can be added without touching it. The Unix
//! implementation is `framing::std_io::UnixTransport` (feature
//! `std-io`).

use crate::error::TransportError;

/// A connection that moves whole frames (16-byte header + payload).
pub trait Transport {
    /// An owned OS handle received with a frame (`OwnedFd` on Unix). Dropping
    /// it closes it.
    type Handle;
    /// A borrowed OS handle to send (`BorrowedFd` on Unix).
    type HandleRef<'a>: Copy;

    /// Sends one frame with `handles` attached. An implementation sends at
    /// most [`crate::payload::MAX_FDS`] handles per frame.
    fn send_with_handles(&mut self, frame: &[u8], handles: &[Self::HandleRef<'_>]) -> Result<(), TransportError>;

    /// Receives one frame into `frame` (replacing its contents) and appends
    /// the handles that came with it to `handles`. The frame's length is
    /// checked against the frame limit from its header before the payload is
    /// read. On error no handle is left open.
    fn recv_with_handles(&mut self, frame: &mut Vec<u8>, handles: &mut Vec<Self::Handle>)
        -> Result<(), TransportError>;

    /// Sends one frame without handles.
    fn send(&mut self, frame: &[u8]) -> Result<(), TransportError> {
        self.send_with_handles(frame, &[])
    }

    /// Receives one frame that must carry no handles (any that arrive are
    /// closed and reported).
    fn recv(&mut self, frame: &mut Vec<u8>) -> Result<(), TransportError> {
        let mut handles = Vec::new();
        self.recv_with_handles(frame, &mut handles)?;
        if handles.is_empty() {
            Ok(())
        } else {
            Err(TransportError::UnexpectedHandles { count: handles.len() })
        }
    }
}
