//! The rocjitsu launcher and the rocjitsud daemon.

pub mod daemon;
pub mod launch;
pub mod modes;
pub mod status;
