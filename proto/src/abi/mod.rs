//! The binary ABI of the devices we emulate: the KFD ioctls as ROCm 5.2's thunk
//! (KFD_IOCTL 1.8) issues them, and the DRM/amdgpu ioctls libdrm issues on the
//! render node.
//!
//! Every struct is `#[repr(C)]`, made only of fixed-width integers with explicit
//! padding, and derives `bytemuck::Pod` so it can be read from and written to a
//! byte buffer without `unsafe`. Sizes are checked at compile time against the
//! sizes encoded in the ioctl numbers.

pub mod drm;
pub mod kfd;

/// `_IOC` direction bits as Linux encodes them on x86-64.
pub const IOC_NONE: u32 = 0;
pub const IOC_WRITE: u32 = 1;
pub const IOC_READ: u32 = 2;

/// Builds an ioctl request number the way Linux's `_IOC` macro does.
pub const fn ioc(dir: u32, ty: u8, nr: u8, size: usize) -> u32 {
    (dir << 30) | ((size as u32 & 0x3fff) << 16) | ((ty as u32) << 8) | nr as u32
}

/// The type byte of an ioctl number (`'K'` for KFD, `'d'` for DRM).
pub const fn ioc_type(cmd: u32) -> u8 {
    ((cmd >> 8) & 0xff) as u8
}

/// The command number within its type.
pub const fn ioc_nr(cmd: u32) -> u8 {
    (cmd & 0xff) as u8
}

/// The argument size encoded in an ioctl number.
pub const fn ioc_size(cmd: u32) -> usize {
    ((cmd >> 16) & 0x3fff) as usize
}

/// The direction bits encoded in an ioctl number.
pub const fn ioc_dir(cmd: u32) -> u32 {
    cmd >> 30
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ioc_round_trips_fields() {
        let cmd = ioc(IOC_READ | IOC_WRITE, b'K', 0x0c, 24);
        assert_eq!(cmd, 0xc0184b0c);
        assert_eq!(ioc_type(cmd), b'K');
        assert_eq!(ioc_nr(cmd), 0x0c);
        assert_eq!(ioc_size(cmd), 24);
        assert_eq!(ioc_dir(cmd), IOC_READ | IOC_WRITE);
    }
}
