//! Queue ioctls: CREATE_QUEUE, DESTROY_QUEUE, UPDATE_QUEUE, SET_CU_MASK, ALLOC_QUEUE_GWS.

use super::process::KfdProcess;
use super::KfdError;
use crate::gpu::queue::{amd_queue, Queue, QueueKind};
use proto::abi::kfd::{self, mmap_offset};
use std::sync::atomic::Ordering;
use std::sync::Arc;

impl KfdProcess {
    pub(crate) fn create_queue(&self, a: &mut kfd::CreateQueueArgs) -> Result<(), KfdError> {
        let gpu = self.gpu_index(a.gpu_id)?;
        let kind = match a.queue_type {
            kfd::KFD_IOC_QUEUE_TYPE_COMPUTE_AQL => QueueKind::Aql,
            kfd::KFD_IOC_QUEUE_TYPE_SDMA | kfd::KFD_IOC_QUEUE_TYPE_SDMA_XGMI => QueueKind::Sdma,
            kfd::KFD_IOC_QUEUE_TYPE_COMPUTE => {
                return Err(KfdError::NotSupported { name: "CREATE_QUEUE of a PM4 compute queue", quiet: false })
            }
            other => return Err(KfdError::BadArgument(format!("queue type {other}"))),
        };
        if a.queue_percentage > kfd::KFD_MAX_QUEUE_PERCENTAGE || a.queue_priority > kfd::KFD_MAX_QUEUE_PRIORITY {
            return Err(KfdError::BadArgument(format!(
                "queue percentage {} / priority {}",
                a.queue_percentage, a.queue_priority
            )));
        }
        if !a.ring_size.is_power_of_two() || a.ring_size < 64 {
            return Err(KfdError::BadArgument(format!("ring size {:#x} is not a power of two ≥ 64", a.ring_size)));
        }
        // Everything the scheduler will read must be GPU-mapped already, as the
        // kernel checks that the ring and pointers belong to the process.
        let vm = self.vm();
        let mapped = |va: u64, len: u64, what: &str| {
            vm.translate(va, len, true)
                .map(|_| ())
                .map_err(|_| KfdError::BadArgument(format!("{what} at {va:#x} (+{len:#x}) is not GPU-mapped")))
        };
        mapped(a.ring_base_address, a.ring_size as u64, "the ring")?;
        mapped(a.write_pointer_address, 8, "the write pointer")?;
        mapped(a.read_pointer_address, 8, "the read pointer")?;
        if kind == QueueKind::Aql {
            let q = a.write_pointer_address.wrapping_sub(amd_queue::WRITE_DISPATCH_ID);
            mapped(q, amd_queue::SIZE, "amd_queue_t")?;
        }
        drop(vm);

        let mut table = self.queues();
        let id = table.free_id();
        let slot = table.alloc_doorbell(gpu).ok_or(KfdError::Busy("all 1024 doorbells of this GPU are in use"))?;
        let queue = Arc::new(Queue::new(
            id,
            gpu,
            kind,
            a.ring_base_address,
            a.ring_size as u64,
            a.write_pointer_address,
            a.read_pointer_address,
            slot,
            a.queue_percentage,
            a.queue_priority,
        ));
        table.insert(queue);
        drop(table);
        a.queue_id = id;
        // On SOC15 the offset names the doorbell page and, in its low bits,
        // the queue's doorbell within it.
        a.doorbell_offset = mmap_offset::encode(mmap_offset::TYPE_DOORBELL, a.gpu_id) | (slot as u64 * 8);
        self.scheduler().kick(gpu);
        Ok(())
    }

    pub(crate) fn destroy_queue(&self, id: u32) -> Result<(), KfdError> {
        let q = self.queues().remove(id).ok_or_else(|| KfdError::BadArgument(format!("no queue {id}")))?;
        q.destroy();
        Ok(())
    }

    pub(crate) fn update_queue(&self, a: &kfd::UpdateQueueArgs) -> Result<(), KfdError> {
        if a.queue_percentage > kfd::KFD_MAX_QUEUE_PERCENTAGE || a.queue_priority > kfd::KFD_MAX_QUEUE_PRIORITY {
            return Err(KfdError::BadArgument(format!(
                "queue percentage {} / priority {}",
                a.queue_percentage, a.queue_priority
            )));
        }
        if a.ring_size != 0 && !a.ring_size.is_power_of_two() {
            return Err(KfdError::BadArgument(format!("ring size {:#x}", a.ring_size)));
        }
        let q = self.queues().get(a.queue_id).cloned().ok_or(KfdError::NoSuchQueueToUpdate(a.queue_id))?;
        q.update(a.ring_base_address, a.ring_size as u64, a.queue_percentage, a.queue_priority);
        self.scheduler().kick(q.gpu);
        Ok(())
    }

    pub(crate) fn set_cu_mask(&self, a: &kfd::SetCuMaskArgs, mask: &[u8]) -> Result<(), KfdError> {
        let q = self.queues().get(a.queue_id).cloned().ok_or(KfdError::NoSuchQueueToUpdate(a.queue_id))?;
        if a.num_cu_mask == 0 {
            return Err(KfdError::BadArgument("an empty CU mask".into()));
        }
        let words: Vec<u32> = mask.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        // The simulator runs workgroups on its own worker threads, so the mask
        // does not change results; it is kept for tools that query it.
        *q.cu_mask.lock().unwrap_or_else(|e| e.into_inner()) = words;
        Ok(())
    }

    /// ALLOC_QUEUE_GWS: gives a queue the process's global wave sync resources on its GPU
    /// (`num_gws` > 0) or takes them back (0). As in the driver, one queue per process and
    /// GPU may hold them, and the first resource is always 0. ROCR asks for them for the
    /// cooperative queue that `hipLaunchCooperativeKernel` uses (grid sync is a GWS barrier).
    /// The resources themselves are the process's `GwsTable`, which every queue's waves
    /// reach.
    pub(crate) fn alloc_queue_gws(&self, a: &mut kfd::AllocQueueGwsArgs) -> Result<(), KfdError> {
        let table = self.queues();
        let q =
            table.get(a.queue_id).cloned().ok_or_else(|| KfdError::BadArgument(format!("no queue {}", a.queue_id)))?;
        if self.gpus().get(q.gpu).is_none_or(|d| d.num_gws == 0) {
            return Err(KfdError::NoHardware("global wave sync resources"));
        }
        let held = table.all().into_iter().any(|o| o.gpu == q.gpu && o.holds_gws.load(Ordering::Acquire));
        match (a.num_gws > 0, held) {
            (true, true) => return Err(KfdError::Busy("another queue of this process holds the GPU's GWS")),
            (false, false) => return Err(KfdError::BadArgument("no GWS to release".into())),
            (true, false) => q.holds_gws.store(true, Ordering::Release),
            (false, true) => {
                for o in table.all().into_iter().filter(|o| o.gpu == q.gpu) {
                    o.holds_gws.store(false, Ordering::Release);
                }
            }
        }
        a.first_gws = 0;
        Ok(())
    }
}
