//! Helpers for the end-to-end tests (to be written).
