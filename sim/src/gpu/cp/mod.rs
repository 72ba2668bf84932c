//! The command processor: AQL queues, barrier and vendor packets, PM4 indirect buffers,
//! kernel dispatch hand-off and completion signals.

pub mod aql;
pub mod aql_queue;
pub mod dispatch;
pub mod pm4;
pub mod signal;
