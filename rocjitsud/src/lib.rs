//! The rocjitsu launcher and daemon (to be written).
