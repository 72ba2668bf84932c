//! `sendmsg`/`recvmsg` with SCM_RIGHTS, shared by the blocking and the tokio
//! framing. Raw syscalls through rustix: no libc call that the preload
//! library's own hooks could intercept, and no `unsafe` here.

use crate::error::TransportError;
use crate::payload::MAX_FDS;
use rustix::net::{
    recvmsg, sendmsg, RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, ReturnFlags, SendAncillaryBuffer,
    SendAncillaryMessage, SendFlags,
};
use std::io::{self, IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::os::fd::{BorrowedFd, OwnedFd};

/// Control buffer big enough for one more descriptor than we accept, so that
/// a peer sending too many is detected as "too many" (and its descriptors
/// closed) rather than only as a truncation.
const CMSG_SPACE: usize = rustix::cmsg_space!(ScmRights(MAX_FDS + 1));

/// Refuses more than [`MAX_FDS`] descriptors before anything is sent.
pub(crate) fn check_send_fds(n: usize) -> Result<(), TransportError> {
    if n > MAX_FDS {
        return Err(TransportError::TooManyHandles { got: n, max: MAX_FDS });
    }
    Ok(())
}

/// One `sendmsg` of `data` with `fds` attached (at most [`MAX_FDS`]), without
/// SIGPIPE. Returns the bytes sent.
pub(crate) fn send_some(sock: BorrowedFd<'_>, data: &[u8], fds: &[BorrowedFd<'_>]) -> io::Result<usize> {
    let mut space = [MaybeUninit::uninit(); CMSG_SPACE];
    let mut control = SendAncillaryBuffer::new(&mut space);
    if !fds.is_empty() && !control.push(SendAncillaryMessage::ScmRights(fds)) {
        return Err(io::Error::from_raw_os_error(rustix::io::Errno::INVAL.raw_os_error()));
    }
    Ok(sendmsg(sock, &[IoSlice::new(data)], &mut control, SendFlags::NOSIGNAL)?)
}

/// What one `recvmsg` brought.
pub(crate) struct Received {
    pub bytes: usize,
    /// The kernel dropped descriptors (MSG_CTRUNC).
    pub truncated: bool,
}

/// One `recvmsg` into `buf`; received descriptors (close-on-exec) are
/// appended to `fds`.
pub(crate) fn recv_some(sock: BorrowedFd<'_>, buf: &mut [u8], fds: &mut Vec<OwnedFd>) -> io::Result<Received> {
    let mut space = [MaybeUninit::uninit(); CMSG_SPACE];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let msg = recvmsg(sock, &mut [IoSliceMut::new(buf)], &mut control, RecvFlags::CMSG_CLOEXEC)?;
    for message in control.drain() {
        if let RecvAncillaryMessage::ScmRights(rights) = message {
            fds.extend(rights);
        }
    }
    Ok(Received { bytes: msg.bytes, truncated: msg.flags.contains(ReturnFlags::CTRUNC) })
}

/// After a `recvmsg`: on a truncated control message or too many
/// descriptors, closes every descriptor of the frame and fails.
pub(crate) fn check_received_fds(fds: &mut Vec<OwnedFd>, truncated: bool) -> Result<(), TransportError> {
    if truncated {
        let closed = fds.len();
        fds.clear();
        return Err(TransportError::ControlTruncated { closed });
    }
    if fds.len() > MAX_FDS {
        let got = fds.len();
        fds.clear();
        return Err(TransportError::TooManyHandles { got, max: MAX_FDS });
    }
    Ok(())
}
