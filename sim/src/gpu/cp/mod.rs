//! The command processor: AQL queues, barrier and vendor packets, kernel
//! dispatch hand-off, completion signals — and the engine threads that
//! watch the queues of every process.

pub mod aql;
pub mod aql_queue;
pub mod engine;
pub mod pm4;
pub mod queue;
pub mod signal;
