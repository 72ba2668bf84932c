//! The rocjitsu launcher and daemon.

pub mod launch;
