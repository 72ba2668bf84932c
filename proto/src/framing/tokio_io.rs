//! The daemon's framing: a tokio-util codec for frames, and a connection
//! that also moves descriptors (tokio's own `UnixStream` cannot).
//!
//! [`FrameCodec`] cuts a byte stream into whole frames (the length comes
//! from the header and is refused over the limit before anything is
//! buffered). [`Connection`] drives the same codec over a
//! `tokio::net::UnixStream` with `recvmsg`/`sendmsg` through the stream's
//! readiness (`async_io`), reading never past the current frame so that each
//! frame's descriptors arrive with it.

use super::unix::{check_received_fds, check_send_fds, recv_some, send_some};
use crate::error::TransportError;
use crate::header::{bytes_missing, complete_frame_len, MAX_FRAME_BYTES};
use bytes::BytesMut;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use tokio::io::Interest;
use tokio::net::UnixStream;
use tokio_util::codec::{Decoder, Encoder};

/// Cuts a byte stream into frames (header + payload). Only the length is
/// judged here; the session validates the rest.
#[derive(Clone, Copy, Debug, Default)]
pub struct FrameCodec;

impl Decoder for FrameCodec {
    type Item = BytesMut;
    type Error = TransportError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<BytesMut>, TransportError> {
        match complete_frame_len(src)? {
            Some(len) => Ok(Some(src.split_to(len))),
            None => {
                src.reserve(bytes_missing(src)?);
                Ok(None)
            }
        }
    }

    fn decode_eof(&mut self, src: &mut BytesMut) -> Result<Option<BytesMut>, TransportError> {
        match self.decode(src)? {
            Some(frame) => Ok(Some(frame)),
            None if src.is_empty() => Ok(None),
            None => Err(TransportError::Truncated { got: src.len(), expected: src.len() + bytes_missing(src)? }),
        }
    }
}

impl Encoder<&[u8]> for FrameCodec {
    type Error = TransportError;

    /// Appends a frame built by a session (which already bounded its size).
    fn encode(&mut self, frame: &[u8], dst: &mut BytesMut) -> Result<(), TransportError> {
        if complete_frame_len(frame)? != Some(frame.len()) || frame.len() > MAX_FRAME_BYTES {
            return Err(TransportError::Io(io::Error::new(io::ErrorKind::InvalidInput, "not exactly one frame")));
        }
        dst.extend_from_slice(frame);
        Ok(())
    }
}

/// A frame and the descriptors that came with it.
#[derive(Debug)]
pub struct Received {
    /// Header and payload.
    pub frame: BytesMut,
    pub fds: Vec<OwnedFd>,
}

/// A daemon-side connection that moves frames with descriptors.
#[derive(Debug)]
pub struct Connection {
    stream: UnixStream,
    codec: FrameCodec,
    buf: BytesMut,
    fds: Vec<OwnedFd>,
}

impl Connection {
    pub fn new(stream: UnixStream) -> Self {
        Self { stream, codec: FrameCodec, buf: BytesMut::new(), fds: Vec::new() }
    }

    pub fn get_ref(&self) -> &UnixStream {
        &self.stream
    }

    pub fn into_inner(self) -> UnixStream {
        self.stream
    }

    /// Receives the next frame; `Ok(None)` when the peer closed between
    /// frames. Cancel-safe: a partly read frame and its descriptors stay
    /// buffered for the next call (so it can sit in a `select!` with a
    /// shutdown signal).
    pub async fn recv(&mut self) -> Result<Option<Received>, TransportError> {
        let out = self.recv_inner().await;
        if out.is_err() {
            // The stream is out of step: drop what was buffered, closing
            // every descriptor.
            self.buf.clear();
            self.fds.clear();
        }
        out
    }

    async fn recv_inner(&mut self) -> Result<Option<Received>, TransportError> {
        loop {
            if let Some(frame) = self.codec.decode(&mut self.buf)? {
                return Ok(Some(Received { frame, fds: std::mem::take(&mut self.fds) }));
            }
            let want = bytes_missing(&self.buf)?;
            let start = self.buf.len();
            self.buf.resize(start + want, 0);
            let (stream, buf, fds) = (&self.stream, &mut self.buf, &mut self.fds);
            let read = stream.async_io(Interest::READABLE, || recv_some(stream.as_fd(), &mut buf[start..], fds)).await;
            let received = match read {
                Ok(r) => r,
                Err(e) => {
                    buf.truncate(start);
                    if e.kind() == io::ErrorKind::Interrupted {
                        continue;
                    }
                    return Err(e.into());
                }
            };
            buf.truncate(start + received.bytes);
            check_received_fds(fds, received.truncated)?;
            if received.bytes == 0 {
                return match self.codec.decode_eof(&mut self.buf)? {
                    Some(frame) => Ok(Some(Received { frame, fds: std::mem::take(&mut self.fds) })),
                    None => Ok(None),
                };
            }
        }
    }

    /// Sends one frame with up to [`crate::MAX_FDS`] descriptors attached to
    /// its first bytes. Not cancel-safe: dropping it mid-frame leaves the
    /// stream out of step (close the connection then).
    pub async fn send(&mut self, frame: &[u8], fds: &[BorrowedFd<'_>]) -> Result<(), TransportError> {
        check_send_fds(fds.len())?;
        let mut sent = 0;
        while sent < frame.len() {
            let attach = if sent == 0 { fds } else { &[] };
            let stream = &self.stream;
            match stream.async_io(Interest::WRITABLE, || send_some(stream.as_fd(), &frame[sent..], attach)).await {
                Ok(n) => sent += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }
}
