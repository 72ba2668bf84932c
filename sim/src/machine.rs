//! `Machine`: one simulated system (its GPUs, per the config) and the entry
//! points the preload library and the daemon call.

use crate::config::Config;
use crate::config::Device;
use crate::driver::kfd::usage::DeviceUsage;
use crate::driver::kfd::{KfdError, KfdProcess, UserptrMode};
use crate::gpu::cp::engine::{DispatchExecutor, Engines, ThreadHook};
use crate::gpu::exec::Executor;
use std::sync::Arc;

/// A simulated machine: the GPUs of one config.
#[derive(Debug)]
pub struct Machine {
    config: Config,
    gpus: Arc<[Device]>,
    gtt_budget: u64,
    /// Memory in use on each GPU by all processes.
    usage: Arc<DeviceUsage>,
    engines: Arc<Engines>,
}

impl Machine {
    /// Builds the machine described by `config`. Host memory (what GTT and
    /// USERPTR buffers come from) is taken from the real host.
    pub fn new(config: Config) -> Machine {
        Machine::with_thread_hook(config, None)
    }

    /// Like [`new`](Self::new); `hook` runs at the start of every thread the
    /// simulator starts.
    pub fn with_thread_hook(config: Config, hook: Option<ThreadHook>) -> Machine {
        let gpus: Arc<[Device]> = config.gpus().to_vec().into();
        let engines = Engines::new(gpus.len(), hook.clone());
        engines.set_executor(Arc::new(Executor::new(config.workers().get(), hook)));
        let gtt_budget = host_memory_bytes();
        let usage = Arc::new(DeviceUsage::new(gpus.iter().map(|g| g.local_mem_size), gtt_budget));
        Machine { config, gpus, gtt_budget, usage, engines }
    }

    /// Installs the kernel executor the command processors use.
    pub fn set_executor(&self, exec: Arc<dyn DispatchExecutor>) {
        self.engines.set_executor(exec);
    }

    /// The GPU engines (command processors and DMA engines).
    pub fn engines(&self) -> &Arc<Engines> {
        &self.engines
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    pub fn gpus(&self) -> &Arc<[Device]> {
        &self.gpus
    }

    /// The GPU behind render node `minor`.
    pub fn gpu_by_render_minor(&self, minor: u32) -> Option<&Device> {
        self.gpus.iter().find(|g| g.drm_render_minor == minor)
    }

    /// Memory in use on each GPU by every process.
    pub fn usage(&self) -> &DeviceUsage {
        &self.usage
    }

    /// Host memory the GPUs can reach (the GTT heap).
    pub fn gtt_size(&self) -> u64 {
        self.gtt_budget
    }

    /// A new KFD process (an open of `/dev/kfd` by a new application process).
    pub fn open_process(&self, pid: u32, userptr: UserptrMode) -> Result<Arc<KfdProcess>, KfdError> {
        let p = Arc::new(KfdProcess::new(
            pid,
            self.gpus.clone(),
            self.usage.clone(),
            self.gtt_budget,
            userptr,
            self.engines.clone(),
        )?);
        self.engines.register(&p);
        Ok(p)
    }
}

fn host_memory_bytes() -> u64 {
    let info = rustix::system::sysinfo();
    info.totalram as u64 * info.mem_unit.max(1) as u64
}

impl Drop for Machine {
    fn drop(&mut self) {
        self.engines.shutdown();
    }
}
