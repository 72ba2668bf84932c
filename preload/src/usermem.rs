//! The application's memory, as the ioctl codec reads and writes it.
//!
//! Copies go through `process_vm_readv`/`process_vm_writev` on our own pid:
//! a bad pointer from the application then yields EFAULT, as it would from
//! the kernel, instead of crashing the process inside our hook.

use proto::ioctl::{BadAddress, UserMemory};

/// This process's own memory.
pub struct SelfMemory;

impl UserMemory for SelfMemory {
    fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), BadAddress> {
        if out.is_empty() {
            return Ok(());
        }
        let local = libc::iovec { iov_base: out.as_mut_ptr().cast(), iov_len: out.len() };
        let remote = libc::iovec { iov_base: addr as *mut libc::c_void, iov_len: out.len() };
        // SAFETY: `local` describes our own writable buffer; the kernel
        // validates `remote` and fails with EFAULT instead of faulting.
        let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
        if n == out.len() as isize {
            Ok(())
        } else {
            Err(BadAddress)
        }
    }

    fn write(&self, addr: u64, data: &[u8]) -> Result<(), BadAddress> {
        if data.is_empty() {
            return Ok(());
        }
        let local = libc::iovec { iov_base: data.as_ptr() as *mut libc::c_void, iov_len: data.len() };
        let remote = libc::iovec { iov_base: addr as *mut libc::c_void, iov_len: data.len() };
        // SAFETY: `local` describes our own readable buffer; the kernel
        // validates `remote`.
        let n = unsafe { libc::process_vm_writev(libc::getpid(), &local, 1, &remote, 1, 0) };
        if n == data.len() as isize {
            Ok(())
        } else {
            Err(BadAddress)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_and_reports_bad_addresses() {
        let src = [1u8, 2, 3, 4];
        let mut dst = [0u8; 4];
        SelfMemory.read(src.as_ptr() as u64, &mut dst).unwrap();
        assert_eq!(dst, src);
        let mut target = [0u8; 2];
        SelfMemory.write(target.as_mut_ptr() as u64, &[9, 8]).unwrap();
        assert_eq!(target, [9, 8]);
        assert_eq!(SelfMemory.read(8, &mut dst), Err(BadAddress));
        assert_eq!(SelfMemory.write(16, &[1]), Err(BadAddress));
    }
}
