//! librocjitsu.so (to be written).
