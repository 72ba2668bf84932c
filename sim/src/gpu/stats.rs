//! Run statistics of one process (`ROCJITSU_STATS=1`, `rocjitsu --stats`): per kernel its
//! dispatches, workgroups, wave-instructions by class, the memory its instructions moved and
//! the host time; per SDMA queue its copies and bytes.
//!
//! Counting is chosen per dispatch: a process without statistics runs the interpreter loop
//! that has no counting code in it at all (see `workgroup::run_turn`), so statistics cost
//! nothing unless asked for. With them, an interpreted wave-instruction costs one table
//! look-up and one add, and a translated run one add per class (its counts by class for any
//! number of its instructions are a table made at translation; its compiled accesses add the
//! bytes they move as they run); workgroups hand their counts over once per turn, dispatches
//! once when they end.

use crate::isa::info::OP_COUNT;
use crate::isa::{Op, OpClass};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// What kind of work an instruction is, as the statistics count it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum InstClass {
    /// Scalar ALU (SOP1/SOP2/SOPK/SOPC), branches excepted.
    Salu,
    /// Vector ALU (VOP1/VOP2/VOPC/VOP3/VOP3P, `v_accvgpr_*` moves).
    Valu,
    /// Matrix fused multiply-add (`v_mfma_*`, `v_smfmac_*`).
    Mfma,
    /// Scalar memory (`s_load_*`, `s_buffer_*`, `s_store_*`, `s_memtime` ...).
    Smem,
    /// Vector memory: flat, global, scratch, buffer, typed buffer and image.
    Vmem,
    /// The local data share (`ds_*`, GWS included).
    Lds,
    /// Branches, calls and returns (`s_branch`, `s_cbranch_*`, `s_setpc_b64`, `s_swappc_b64`,
    /// `s_call_b64`).
    Branch,
    /// Program control that is not a branch: `s_waitcnt`, `s_barrier`, `s_nop`, `s_endpgm`,
    /// `s_sleep`, `s_sendmsg` ...
    Other,
}

/// Number of [`InstClass`]es.
pub const CLASSES: usize = 8;

impl InstClass {
    pub const ALL: [InstClass; CLASSES] = [
        InstClass::Salu,
        InstClass::Valu,
        InstClass::Mfma,
        InstClass::Smem,
        InstClass::Vmem,
        InstClass::Lds,
        InstClass::Branch,
        InstClass::Other,
    ];

    pub fn name(self) -> &'static str {
        match self {
            InstClass::Salu => "SALU",
            InstClass::Valu => "VALU",
            InstClass::Mfma => "MFMA",
            InstClass::Smem => "SMEM",
            InstClass::Vmem => "VMEM",
            InstClass::Lds => "LDS",
            InstClass::Branch => "branch",
            InstClass::Other => "other",
        }
    }

    /// The class of `op`, from its encoding family and, for scalar program control, its name.
    pub fn of(op: Op) -> InstClass {
        let name = op.name();
        let branch = ["s_branch", "s_cbranch_", "s_setpc_", "s_swappc_", "s_call_"].iter().any(|p| name.starts_with(p));
        match op.info().class {
            _ if branch => InstClass::Branch,
            OpClass::Salu => InstClass::Salu,
            OpClass::Sopp => InstClass::Other,
            OpClass::Smem => InstClass::Smem,
            OpClass::Valu => InstClass::Valu,
            OpClass::Mfma => InstClass::Mfma,
            OpClass::Ds => InstClass::Lds,
            OpClass::Flat | OpClass::Global | OpClass::Scratch | OpClass::Mubuf | OpClass::Mtbuf | OpClass::Mimg => {
                InstClass::Vmem
            }
        }
    }
}

/// The memory an instruction reads and writes, in bytes per active lane (vector memory) or
/// per wave (scalar memory), as its name gives the size: `byte` 1, `short` 2, `dword` 4,
/// `dwordxN` 4N, `format_x…` 4 per component (2 with `d16`), atomics read and write their
/// size. Image instructions count 4 bytes per data register. LDS traffic is not memory
/// traffic and counts as none.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Traffic {
    pub read: u16,
    pub write: u16,
    /// Whether the bytes are per active lane (vector memory) or per wave (scalar memory).
    pub per_lane: bool,
}

impl Traffic {
    pub fn of(op: Op) -> Traffic {
        let info = op.info();
        let name = op.name();
        let per_lane = match info.class {
            OpClass::Smem => false,
            OpClass::Flat | OpClass::Global | OpClass::Scratch | OpClass::Mubuf | OpClass::Mtbuf | OpClass::Mimg => {
                true
            }
            _ => return Traffic::default(),
        };
        let size = if info.class == OpClass::Mimg {
            let regs = if name.contains("store") { info.src[0].regs } else { info.dst[0].regs };
            4 * regs.max(1) as u16
        } else {
            size_from_name(name)
        };
        let (read, write) = if name.contains("atomic") {
            (size, size)
        } else if name.contains("_load") || name.contains("sample") || name.contains("gather") {
            (size, 0)
        } else if name.contains("_store") {
            (0, size)
        } else {
            (0, 0)
        };
        // `global_load_lds_*` moves memory into LDS: a read only, as counted above.
        Traffic { read, write, per_lane }
    }

    pub fn is_none(self) -> bool {
        self.read == 0 && self.write == 0
    }

    /// Bytes (read, written) by one instruction with `active_lanes` lanes on.
    #[inline]
    pub fn bytes(self, active_lanes: u32) -> (u64, u64) {
        let n = if self.per_lane { active_lanes as u64 } else { 1 };
        (self.read as u64 * n, self.write as u64 * n)
    }
}

fn size_from_name(name: &str) -> u16 {
    let d16 = name.contains("d16");
    if let Some(at) = name.find("format_") {
        let rest = &name[at + 7..];
        let rest = rest.strip_prefix("d16_hi_").or_else(|| rest.strip_prefix("d16_")).unwrap_or(rest);
        let components = rest.chars().take_while(|c| "xyzw".contains(*c)).count() as u16;
        return components * if d16 { 2 } else { 4 };
    }
    for (token, bytes) in [("x16", 64), ("x8", 32), ("x4", 16), ("x3", 12), ("x2", 8)] {
        if name.contains(&format!("dword{token}")) || (name.contains("atomic") && name.ends_with(&format!("_{token}")))
        {
            return bytes;
        }
    }
    if name.contains("byte") {
        1
    } else if name.contains("short") {
        2
    } else if name.contains("f64") || name.contains("_x2") {
        8
    } else {
        4
    }
}

/// Class and traffic of every op, computed once, for the counting loop's look-up.
pub fn op_table() -> &'static [(InstClass, Traffic)] {
    static TABLE: OnceLock<Vec<(InstClass, Traffic)>> = OnceLock::new();
    TABLE.get_or_init(|| {
        (0..OP_COUNT)
            .map(|i| {
                let op = Op::from_index(i).expect("every index below OP_COUNT is an op");
                (InstClass::of(op), Traffic::of(op))
            })
            .collect()
    })
}

/// What a workgroup's waves (or a whole dispatch) executed.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct InstCounts {
    pub by_class: [u64; CLASSES],
    pub bytes_read: u64,
    pub bytes_written: u64,
}

impl InstCounts {
    /// Counts one instruction of `op`, executed with `active_lanes` lanes on.
    #[inline]
    pub fn count(&mut self, table: &[(InstClass, Traffic)], op: Op, active_lanes: u32) {
        let (class, traffic) = table[op as usize];
        self.by_class[class as usize] += 1;
        if !traffic.is_none() {
            let (read, written) = traffic.bytes(active_lanes);
            self.bytes_read += read;
            self.bytes_written += written;
        }
    }

    pub fn add(&mut self, other: &InstCounts) {
        for (a, b) in self.by_class.iter_mut().zip(other.by_class) {
            *a += b;
        }
        self.bytes_read += other.bytes_read;
        self.bytes_written += other.bytes_written;
    }

    pub fn total(&self) -> u64 {
        self.by_class.iter().sum()
    }
}

/// One ended dispatch, as the statistics record it.
#[derive(Clone, Debug, Default)]
pub struct DispatchRecord {
    pub workgroups: u64,
    pub counts: InstCounts,
    pub host_time: Duration,
    /// The part of `host_time` the translator spent compiling the kernel's code (the
    /// timeline shows it).
    pub translation: Duration,
}

/// One process's statistics while it runs.
#[derive(Debug, Default)]
pub struct ProcessStats {
    tables: Mutex<Tables>,
}

#[derive(Debug, Default)]
struct Tables {
    /// By kernel object, in order of first dispatch.
    kernels: HashMap<u64, (usize, KernelStats)>,
    copies: BTreeMap<(usize, u32), CopyStats>,
}

/// One kernel's totals (serialised into the report as they are).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelStats {
    /// Demangled, from the code object's symbols (`kernel@0x…` when it has none).
    pub name: String,
    pub kernel_object: u64,
    pub dispatches: u64,
    pub workgroups: u64,
    /// Wave-instructions, all classes.
    pub wave_instructions: u64,
    /// Wave-instructions by class, keyed by [`InstClass::name`].
    pub by_class: BTreeMap<String, u64>,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Host time from each dispatch's start to its end, summed.
    pub host_seconds: f64,
}

/// One SDMA queue's totals (an SDMA queue is what the simulator runs as one copy engine).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CopyStats {
    pub gpu: usize,
    pub queue: u32,
    /// Linear and rectangular copies.
    pub copies: u64,
    pub bytes_copied: u64,
    /// Constant fills.
    pub fills: u64,
    pub bytes_filled: u64,
}

/// What copy a packet made.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CopyKind {
    Copy,
    Fill,
}

impl ProcessStats {
    /// Adds an ended dispatch of the kernel at `kernel_object`. `name` is asked only for a
    /// kernel object seen for the first time (it reads the code object in GPU memory).
    pub fn record_dispatch(&self, kernel_object: u64, name: impl FnOnce() -> String, record: &DispatchRecord) {
        let known = self.lock().kernels.contains_key(&kernel_object);
        let name = (!known).then(name);
        let mut tables = self.lock();
        let order = tables.kernels.len();
        let (_, k) = tables.kernels.entry(kernel_object).or_insert_with(|| {
            (order, KernelStats { name: name.unwrap_or_default(), kernel_object, ..KernelStats::default() })
        });
        k.dispatches += 1;
        k.workgroups += record.workgroups;
        k.wave_instructions += record.counts.total();
        for class in InstClass::ALL {
            *k.by_class.entry(class.name().to_string()).or_default() += record.counts.by_class[class as usize];
        }
        k.bytes_read += record.counts.bytes_read;
        k.bytes_written += record.counts.bytes_written;
        k.host_seconds += record.host_time.as_secs_f64();
    }

    /// Adds a copy or fill of `bytes` made by SDMA queue `queue` of GPU `gpu`.
    pub fn record_copy(&self, gpu: usize, queue: u32, kind: CopyKind, bytes: u64) {
        let mut tables = self.lock();
        let c = tables.copies.entry((gpu, queue)).or_insert_with(|| CopyStats { gpu, queue, ..CopyStats::default() });
        match kind {
            CopyKind::Copy => {
                c.copies += 1;
                c.bytes_copied += bytes;
            }
            CopyKind::Fill => {
                c.fills += 1;
                c.bytes_filled += bytes;
            }
        }
    }

    /// Everything so far, kernels in order of first dispatch.
    pub fn report(&self, pid: u32) -> StatsReport {
        let tables = self.lock();
        let mut kernels: Vec<_> = tables.kernels.values().cloned().collect();
        kernels.sort_by_key(|(order, _)| *order);
        StatsReport {
            pid,
            kernels: kernels.into_iter().map(|(_, k)| k).collect(),
            copy_engines: tables.copies.values().cloned().collect(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Tables> {
        self.tables.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A process's statistics, as printed at its exit and written as JSON.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StatsReport {
    pub pid: u32,
    pub kernels: Vec<KernelStats>,
    pub copy_engines: Vec<CopyStats>,
}

impl StatsReport {
    /// The report as a JSON document (what `--stats-json` writes and STATS carries).
    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec_pretty(self).expect("a report of numbers and strings serialises")
    }

    /// A report read back from [`Self::to_json`]'s document.
    pub fn from_json(document: &[u8]) -> Result<StatsReport, serde_json::Error> {
        serde_json::from_slice(document)
    }

    /// Adds `other`'s numbers (another KFD process of the same application): the same
    /// kernel (object and name) and the same SDMA queue add up, the rest is appended.
    pub fn merge(&mut self, other: StatsReport) {
        for k in other.kernels {
            match self.kernels.iter_mut().find(|m| m.kernel_object == k.kernel_object && m.name == k.name) {
                Some(m) => {
                    m.dispatches += k.dispatches;
                    m.workgroups += k.workgroups;
                    m.wave_instructions += k.wave_instructions;
                    for (class, n) in k.by_class {
                        *m.by_class.entry(class).or_default() += n;
                    }
                    m.bytes_read += k.bytes_read;
                    m.bytes_written += k.bytes_written;
                    m.host_seconds += k.host_seconds;
                }
                None => self.kernels.push(k),
            }
        }
        for c in other.copy_engines {
            match self.copy_engines.iter_mut().find(|m| (m.gpu, m.queue) == (c.gpu, c.queue)) {
                Some(m) => {
                    m.copies += c.copies;
                    m.bytes_copied += c.bytes_copied;
                    m.fills += c.fills;
                    m.bytes_filled += c.bytes_filled;
                }
                None => self.copy_engines.push(c),
            }
        }
    }

    /// The kernels' totals as one row named `total`.
    pub fn totals(&self) -> KernelStats {
        let mut t = KernelStats { name: "total".into(), ..KernelStats::default() };
        for k in &self.kernels {
            t.dispatches += k.dispatches;
            t.workgroups += k.workgroups;
            t.wave_instructions += k.wave_instructions;
            for (class, n) in &k.by_class {
                *t.by_class.entry(class.clone()).or_default() += n;
            }
            t.bytes_read += k.bytes_read;
            t.bytes_written += k.bytes_written;
            t.host_seconds += k.host_seconds;
        }
        t
    }

    /// A text table: one row per kernel and a total, then one row per copy engine.
    pub fn table(&self) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let classes: Vec<&str> = InstClass::ALL.iter().map(|c| c.name()).collect();
        let _ = write!(
            out,
            "rocjitsu stats, process {}\n{:>10} {:>10} {:>12}",
            self.pid, "dispatches", "workgroups", "wave-insts"
        );
        for c in &classes {
            let _ = write!(out, " {c:>10}");
        }
        let _ = writeln!(out, " {:>12} {:>12} {:>10}  kernel", "bytes read", "written", "host ms");
        let totals = self.totals();
        for k in self.kernels.iter().chain(std::iter::once(&totals)) {
            let _ = write!(out, "{:>10} {:>10} {:>12}", k.dispatches, k.workgroups, k.wave_instructions);
            for c in &classes {
                let _ = write!(out, " {:>10}", k.by_class.get(*c).copied().unwrap_or(0));
            }
            let _ = writeln!(
                out,
                " {:>12} {:>12} {:>10.3}  {}",
                k.bytes_read,
                k.bytes_written,
                k.host_seconds * 1e3,
                k.name
            );
        }
        for c in &self.copy_engines {
            let _ = writeln!(
                out,
                "copy engine: GPU {} SDMA queue {}: {} copies, {} bytes; {} fills, {} bytes",
                c.gpu, c.queue, c.copies, c.bytes_copied, c.fills, c.bytes_filled
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(name: &str) -> Op {
        (0..OP_COUNT).filter_map(Op::from_index).find(|o| o.name() == name).unwrap_or_else(|| panic!("no op {name}"))
    }

    #[test]
    fn classes_follow_the_encoding_and_branches_are_their_own() {
        for (name, class) in [
            ("s_add_u32", InstClass::Salu),
            ("s_getpc_b64", InstClass::Salu),
            ("s_setpc_b64", InstClass::Branch),
            ("s_swappc_b64", InstClass::Branch),
            ("s_call_b64", InstClass::Branch),
            ("s_branch", InstClass::Branch),
            ("s_cbranch_execz", InstClass::Branch),
            ("s_waitcnt", InstClass::Other),
            ("s_endpgm", InstClass::Other),
            ("s_barrier", InstClass::Other),
            ("s_load_dwordx4", InstClass::Smem),
            ("v_add_f32", InstClass::Valu),
            ("v_accvgpr_write_b32", InstClass::Valu),
            ("v_mfma_f32_32x32x8f16", InstClass::Mfma),
            ("ds_read_b64", InstClass::Lds),
            ("global_load_dword", InstClass::Vmem),
            ("buffer_store_dwordx4", InstClass::Vmem),
            ("flat_atomic_add", InstClass::Vmem),
            ("scratch_load_dword", InstClass::Vmem),
        ] {
            assert_eq!(InstClass::of(op(name)), class, "{name}");
        }
    }

    #[test]
    fn traffic_is_the_size_the_name_gives() {
        let lane = |read, write| Traffic { read, write, per_lane: true };
        for (name, traffic) in [
            ("global_load_dword", lane(4, 0)),
            ("global_load_dwordx2", lane(8, 0)),
            ("global_load_dwordx3", lane(12, 0)),
            ("global_load_dwordx4", lane(16, 0)),
            ("global_load_ubyte", lane(1, 0)),
            ("global_load_short_d16_hi", lane(2, 0)),
            ("buffer_load_ubyte_d16", lane(1, 0)),
            ("global_store_byte", lane(0, 1)),
            ("flat_store_dwordx4", lane(0, 16)),
            ("buffer_load_format_xyzw", lane(16, 0)),
            ("buffer_load_format_d16_xy", lane(4, 0)),
            ("tbuffer_store_format_x", lane(0, 4)),
            ("global_atomic_add", lane(4, 4)),
            ("global_atomic_cmpswap_x2", lane(8, 8)),
            ("global_atomic_add_f64", lane(8, 8)),
            ("global_atomic_pk_add_f16", lane(4, 4)),
            ("buffer_wbinvl1", lane(0, 0)),
            ("s_load_dword", Traffic { read: 4, write: 0, per_lane: false }),
            ("s_load_dwordx16", Traffic { read: 64, write: 0, per_lane: false }),
            ("s_buffer_load_dwordx8", Traffic { read: 32, write: 0, per_lane: false }),
            ("s_store_dwordx2", Traffic { read: 0, write: 8, per_lane: false }),
            ("ds_read_b128", Traffic::default()),
            ("v_add_f32", Traffic::default()),
        ] {
            assert_eq!(Traffic::of(op(name)), traffic, "{name}");
        }
    }

    #[test]
    fn counts_scale_vector_bytes_by_active_lanes_and_scalar_bytes_by_wave() {
        let table = op_table();
        let mut c = InstCounts::default();
        c.count(table, op("global_load_dwordx4"), 64);
        c.count(table, op("global_store_dword"), 3);
        c.count(table, op("s_load_dwordx2"), 64);
        c.count(table, op("v_add_f32"), 0);
        assert_eq!(c.by_class[InstClass::Vmem as usize], 2);
        assert_eq!(c.by_class[InstClass::Smem as usize], 1);
        assert_eq!(c.by_class[InstClass::Valu as usize], 1);
        assert_eq!((c.bytes_read, c.bytes_written), (64 * 16 + 8, 12));
        assert_eq!(c.total(), 4);
    }

    #[test]
    fn a_report_sums_dispatches_per_kernel_in_first_seen_order() {
        let stats = ProcessStats::default();
        let mut counts = InstCounts::default();
        counts.by_class[InstClass::Valu as usize] = 10;
        counts.bytes_read = 256;
        let record =
            DispatchRecord { workgroups: 4, counts, host_time: Duration::from_millis(2), ..DispatchRecord::default() };
        let mut asked = 0;
        for ko in [0x2000, 0x1000, 0x2000] {
            stats.record_dispatch(
                ko,
                || {
                    asked += 1;
                    format!("k{ko:x}")
                },
                &record,
            );
        }
        assert_eq!(asked, 2, "a name is read once per kernel object");
        stats.record_copy(0, 3, CopyKind::Copy, 1 << 20);
        stats.record_copy(0, 3, CopyKind::Fill, 64);
        let report = stats.report(42);
        assert_eq!(report.kernels.iter().map(|k| k.name.as_str()).collect::<Vec<_>>(), ["k2000", "k1000"]);
        assert_eq!((report.kernels[0].dispatches, report.kernels[0].workgroups), (2, 8));
        assert_eq!(report.kernels[0].by_class["VALU"], 20);
        let totals = report.totals();
        assert_eq!((totals.dispatches, totals.wave_instructions, totals.bytes_read), (3, 30, 768));
        assert_eq!(
            report.copy_engines,
            [CopyStats { gpu: 0, queue: 3, copies: 1, bytes_copied: 1 << 20, fills: 1, bytes_filled: 64 }]
        );
        let json = serde_json::to_string(&report).unwrap();
        assert_eq!(serde_json::from_str::<StatsReport>(&json).unwrap(), report);
        let mut twice = report.clone();
        twice.merge(report.clone());
        assert_eq!(twice.kernels.len(), 2);
        assert_eq!((twice.kernels[0].dispatches, twice.copy_engines[0].bytes_copied), (4, 2 << 20));
        let table = report.table();
        assert!(table.contains("k2000") && table.contains("total") && table.contains("SDMA queue 3"), "{table}");
    }
}
