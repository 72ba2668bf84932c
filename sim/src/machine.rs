//! `Machine`: one simulated system (its GPUs, per the config) and the entry
//! points the preload library and the daemon call.

use crate::config::Config;
use crate::driver::service::Service;
use crate::gpu::cp::dispatch::DispatchExecutor;
use crate::gpu::exec::Executor;
use crate::gpu::scheduler::Scheduler;
use crate::threads::ThreadHook;
use std::sync::Arc;

/// A simulated machine: the GPUs of one config, their queue scheduler and their driver.
#[derive(Debug)]
pub struct Machine {
    config: Config,
    service: Arc<Service>,
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
        let gpus: Arc<[crate::config::Device]> = config.gpus().to_vec().into();
        let scheduler = Scheduler::new(gpus.len(), hook.clone());
        scheduler.set_executor(Arc::new(Executor::new(config.workers().get(), hook)));
        let service = Arc::new(Service::new(gpus, host_memory_bytes(), scheduler));
        Machine { config, service }
    }

    /// Installs the kernel executor the command processors use.
    pub fn set_executor(&self, exec: Arc<dyn DispatchExecutor>) {
        self.scheduler().set_executor(exec);
    }

    /// The threads that run every queue of every process.
    pub fn scheduler(&self) -> &Arc<Scheduler> {
        self.service.scheduler()
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The simulated driver: every ioctl and mmap of the device files goes through it
    /// (shared: the daemon's waiter threads call it too).
    pub fn service(&self) -> &Arc<Service> {
        &self.service
    }
}

fn host_memory_bytes() -> u64 {
    let info = rustix::system::sysinfo();
    info.totalram as u64 * info.mem_unit.max(1) as u64
}

impl Drop for Machine {
    fn drop(&mut self) {
        self.scheduler().shutdown();
    }
}
