//! The I/O edges: moving frames and descriptors over Unix sockets.
//!
//! Both worlds read a frame the same way: first the 16-byte header, then
//! exactly the payload it announces, never a byte of the next frame. A sender
//! writes a frame with one `sendmsg` carrying its descriptors (SCM_RIGHTS on
//! the frame's first bytes), and the kernel hands them out with the first
//! bytes of that frame, so exact reads tie every descriptor to its frame
//! without any bookkeeping. Received descriptors are close-on-exec
//! (`MSG_CMSG_CLOEXEC`) and owned (`OwnedFd`); when the kernel truncated the
//! control message (`MSG_CTRUNC`) or a frame brings more than
//! [`crate::MAX_FDS`], all of that frame's descriptors are closed and the
//! frame is refused.

#[cfg(any(feature = "std-io", feature = "tokio-io"))]
mod unix;

#[cfg(feature = "std-io")]
pub mod std_io;

#[cfg(feature = "tokio-io")]
pub mod tokio_io;
