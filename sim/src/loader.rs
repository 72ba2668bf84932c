//! Loading AMDGPU code objects (HSA ELF, `e_machine` EM_AMDGPU) for the
//! embedding API: lay the loadable segments out at a base address, apply
//! the dynamic relocations, and find the kernel descriptors (`<name>.kd`).
//!
//! ROCR has its own loader for applications; this one serves tests and
//! benchmarks that drive the simulator without ROCR.

use object::elf::{FileHeader64, PT_LOAD};
use object::read::elf::{FileHeader, ProgramHeader, Rela, SectionHeader};
use object::{LittleEndian as LE, Object, ObjectSymbol};
use std::collections::BTreeMap;

/// ELF machine number of AMDGPU.
pub const EM_AMDGPU: u16 = 224;
/// AMDGPU relocation types the loader applies.
const R_AMDGPU_ABS32_LO: u32 = 1;
const R_AMDGPU_ABS32_HI: u32 = 2;
const R_AMDGPU_ABS64: u32 = 3;
const R_AMDGPU_ABS32: u32 = 6;
const R_AMDGPU_RELATIVE64: u32 = 13;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    #[error("not an AMDGPU code object: {0}")]
    NotAmdgpu(String),
    #[error("malformed code object: {0}")]
    Malformed(String),
    #[error("relocation type {0} is not supported")]
    Relocation(u32),
}

/// A code object laid out in memory.
#[derive(Debug, Clone)]
pub struct Image {
    /// The bytes to place at the load base (segments at their `p_vaddr`).
    pub bytes: Vec<u8>,
    /// Kernel descriptor offsets from the base, by kernel name.
    pub kernels: BTreeMap<String, u64>,
    /// `e_flags` (the target ID: mach and xnack/sramecc bits).
    pub e_flags: u32,
}

fn malformed(e: impl std::fmt::Display) -> LoadError {
    LoadError::Malformed(e.to_string())
}

/// Lays out `elf` for loading at `base`.
pub fn layout(elf: &[u8], base: u64) -> Result<Image, LoadError> {
    let header = FileHeader64::<LE>::parse(elf).map_err(|e| LoadError::NotAmdgpu(e.to_string()))?;
    let e = header.endian().map_err(malformed)?;
    if header.e_machine(e) != EM_AMDGPU {
        return Err(LoadError::NotAmdgpu(format!("e_machine {}", header.e_machine(e))));
    }
    let mut bytes = Vec::new();
    for ph in header.program_headers(e, elf).map_err(malformed)? {
        if ph.p_type(e) != PT_LOAD {
            continue;
        }
        let vaddr = ph.p_vaddr(e) as usize;
        let memsz = ph.p_memsz(e) as usize;
        let end =
            vaddr.checked_add(memsz).filter(|&end| end <= 1 << 30).ok_or_else(|| malformed("segment too large"))?;
        if bytes.len() < end {
            bytes.resize(end, 0);
        }
        let data = ph.data(e, elf).map_err(|_| malformed("segment outside the file"))?;
        bytes[vaddr..vaddr + data.len().min(memsz)].copy_from_slice(&data[..data.len().min(memsz)]);
    }
    let file = object::File::parse(elf).map_err(malformed)?;
    let symbol_value =
        |index: usize| -> u64 { file.symbol_by_index(object::SymbolIndex(index)).map(|s| s.address()).unwrap_or(0) };
    let sections = header.sections(e, elf).map_err(malformed)?;
    for section in sections.iter() {
        let Some((relas, _)) = section.rela(e, elf).map_err(malformed)? else { continue };
        for r in relas {
            let offset = r.r_offset(e) as usize;
            let addend = r.r_addend(e) as u64;
            let sym = r.r_sym(e, false) as usize;
            let value = |s| base.wrapping_add(symbol_value(s)).wrapping_add(addend);
            let (bytes8, width): (u64, usize) = match r.r_type(e, false) {
                R_AMDGPU_RELATIVE64 => (base.wrapping_add(addend), 8),
                R_AMDGPU_ABS64 => (value(sym), 8),
                R_AMDGPU_ABS32 | R_AMDGPU_ABS32_LO => (value(sym) & 0xffff_ffff, 4),
                R_AMDGPU_ABS32_HI => (value(sym) >> 32, 4),
                other => return Err(LoadError::Relocation(other)),
            };
            let slot =
                bytes.get_mut(offset..offset + width).ok_or_else(|| malformed("relocation outside the image"))?;
            slot.copy_from_slice(&bytes8.to_le_bytes()[..width]);
        }
    }
    let mut kernels = BTreeMap::new();
    for s in file.symbols() {
        if let Ok(name) = s.name() {
            if let Some(kernel) = name.strip_suffix(".kd") {
                kernels.insert(kernel.to_string(), s.address());
            }
        }
    }
    Ok(Image { bytes, kernels, e_flags: header.e_flags(e) })
}
