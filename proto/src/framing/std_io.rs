//! Blocking framing over `std::os::unix::net::UnixStream`: the transport of
//! the preload library (no async runtime, no threads of its own).

use super::unix::{check_received_fds, check_send_fds, recv_some, send_some};
use crate::error::TransportError;
use crate::header::{RawHeader, HEADER_LEN};
use crate::transport::Transport;
use rustix::io::Errno;
use rustix::net::{AddressFamily, SocketAddrUnix, SocketFlags, SocketType};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::Path;

/// A connected Unix stream socket that moves frames and descriptors.
#[derive(Debug)]
pub struct UnixTransport {
    stream: UnixStream,
}

impl UnixTransport {
    /// Connects to the daemon's socket. The socket is close-on-exec, and a
    /// path too long for `sockaddr_un` is an error (ENAMETOOLONG), never
    /// silently truncated.
    pub fn connect(path: impl AsRef<Path>) -> io::Result<Self> {
        let addr = SocketAddrUnix::new(path.as_ref())?;
        let fd = rustix::net::socket_with(AddressFamily::UNIX, SocketType::STREAM, SocketFlags::CLOEXEC, None)?;
        loop {
            match rustix::net::connect(&fd, &addr) {
                Ok(()) => break,
                Err(Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Ok(Self { stream: UnixStream::from(fd) })
    }

    /// Wraps an already connected stream.
    pub fn from_stream(stream: UnixStream) -> Self {
        Self { stream }
    }

    /// A connected pair (for tests and for in-process use).
    pub fn pair() -> io::Result<(Self, Self)> {
        let (a, b) = UnixStream::pair()?;
        Ok((Self::from_stream(a), Self::from_stream(b)))
    }

    pub fn stream(&self) -> &UnixStream {
        &self.stream
    }

    pub fn into_inner(self) -> UnixStream {
        self.stream
    }
}

/// Sends all of `frame`; the descriptors ride on the first `sendmsg`.
pub(crate) fn send_frame_blocking(
    sock: BorrowedFd<'_>,
    frame: &[u8],
    fds: &[BorrowedFd<'_>],
) -> Result<(), TransportError> {
    check_send_fds(fds.len())?;
    let mut sent = 0;
    while sent < frame.len() {
        let attach = if sent == 0 { fds } else { &[] };
        match send_some(sock, &frame[sent..], attach) {
            Ok(n) => sent += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// Fills `buf` completely, collecting descriptors. `done` is how many bytes
/// of the frame were read before (for the truncation report).
fn read_exact(
    sock: BorrowedFd<'_>,
    buf: &mut [u8],
    fds: &mut Vec<OwnedFd>,
    done: usize,
    frame_len: usize,
) -> Result<(), TransportError> {
    let mut got = 0;
    while got < buf.len() {
        let received = match recv_some(sock, &mut buf[got..], fds) {
            Ok(r) => r,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        };
        check_received_fds(fds, received.truncated)?;
        if received.bytes == 0 {
            return Err(if done + got == 0 {
                TransportError::Closed
            } else {
                TransportError::Truncated { got: done + got, expected: frame_len }
            });
        }
        got += received.bytes;
    }
    Ok(())
}

/// Receives exactly one frame: the header, then the payload it announces
/// (refused before reading if over the limit).
pub(crate) fn recv_frame_blocking(
    sock: BorrowedFd<'_>,
    frame: &mut Vec<u8>,
    fds: &mut Vec<OwnedFd>,
) -> Result<(), TransportError> {
    let mut received = Vec::new();
    let out = (|| {
        frame.clear();
        frame.resize(HEADER_LEN, 0);
        read_exact(sock, frame, &mut received, 0, HEADER_LEN)?;
        let len = RawHeader::decode(frame)?.checked_payload_len()?;
        frame.resize(HEADER_LEN + len, 0);
        read_exact(sock, &mut frame[HEADER_LEN..], &mut received, HEADER_LEN, HEADER_LEN + len)
    })();
    // On error `received` is dropped here, closing every descriptor.
    out?;
    fds.append(&mut received);
    Ok(())
}

impl Transport for UnixTransport {
    type Handle = OwnedFd;
    type HandleRef<'a> = BorrowedFd<'a>;

    fn send_with_handles(&mut self, frame: &[u8], handles: &[BorrowedFd<'_>]) -> Result<(), TransportError> {
        send_frame_blocking(self.stream.as_fd(), frame, handles)
    }

    fn recv_with_handles(&mut self, frame: &mut Vec<u8>, handles: &mut Vec<OwnedFd>) -> Result<(), TransportError> {
        recv_frame_blocking(self.stream.as_fd(), frame, handles)
    }
}
