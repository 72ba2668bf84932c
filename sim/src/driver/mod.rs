//! The driver model: what the application's ROCm stack talks to. The KFD (`/dev/kfd`:
//! processes, memory, queues, events), the DRM render nodes, the sysfs topology they
//! describe, and the one request service both local and daemon mode call. It drives the
//! GPU layer below it.

pub mod drm;
pub mod kfd;
pub mod service;
pub mod sysfs;
pub mod topology;
