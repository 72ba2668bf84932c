//! Simulation config (to be written).
