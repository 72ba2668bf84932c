//! The name of a kernel, from its kernel object (the address of its kernel descriptor in GPU
//! memory): what the statistics, the trace and `rocjitsu status` show.
//!
//! ROCR's loader copies each `PT_LOAD` segment of a code object to GPU memory, and the first
//! one of an LLVM AMDGPU code object starts at file offset 0 and holds the ELF header, the
//! program headers, `.dynsym`, `.hash`, `.dynstr` and `.rodata`, where the kernel descriptors
//! (`<kernel>.kd` symbols) live. So the name is found in GPU memory alone, in local and daemon
//! mode, without hooking the loader: step back page by page from the descriptor to the ELF
//! header, follow `PT_DYNAMIC` to the dynamic symbols, and take the symbol whose value is the
//! descriptor's offset.
//!
//! Written here rather than with the `object` crate: its symbol tables come from section
//! headers, which are not part of any loaded segment; only the dynamic table is.

use crate::gpu::memory::{GpuMem, GpuVm};

/// How far below a kernel descriptor its code object's ELF header may be (the `.note`
/// metadata of a large Tensile library comes first and is megabytes long).
const MAX_DISTANCE: u64 = 256 << 20;
/// Segments are page-aligned: the ELF header of a loaded code object is at a page start.
const PAGE: u64 = 4096;
/// The most dynamic symbols read from one code object.
const MAX_SYMBOLS: u64 = 1 << 20;
/// The longest symbol name read.
const MAX_NAME: usize = 4096;

const EM_AMDGPU: u16 = 224;
const PT_DYNAMIC: u32 = 2;
const DT_NULL: u64 = 0;
const DT_HASH: u64 = 4;
const DT_STRTAB: u64 = 5;
const DT_SYMTAB: u64 = 6;
const DT_STRSZ: u64 = 10;
const SYMBOL_SIZE: u64 = 24;

/// Reads GPU memory: `false` when `[va, va + out.len())` is not mapped.
pub trait ReadGpu {
    fn read_at(&self, va: u64, out: &mut [u8]) -> bool;
}

impl ReadGpu for GpuVm {
    fn read_at(&self, va: u64, out: &mut [u8]) -> bool {
        GpuMem::new(self).read_bytes(va, out).is_ok()
    }
}

/// The kernel's symbol name without `.kd` (mangled, as in the code object), or `None` when
/// the descriptor is not inside a loaded code object with a dynamic symbol for it.
pub fn kernel_symbol(mem: &impl ReadGpu, kernel_object: u64) -> Option<String> {
    let base = find_elf_header(mem, kernel_object)?;
    let tables = DynamicTables::read(mem, base)?;
    let wanted = kernel_object - base;
    for i in 1..tables.symbols {
        let mut sym = [0u8; SYMBOL_SIZE as usize];
        if !mem.read_at(base + tables.symtab + i * SYMBOL_SIZE, &mut sym) {
            return None;
        }
        let value = u64::from_le_bytes(sym[8..16].try_into().unwrap());
        if value != wanted {
            continue;
        }
        let name_offset = u32::from_le_bytes(sym[0..4].try_into().unwrap()) as u64;
        if let Some(name) = tables.name(mem, base, name_offset) {
            if let Some(kernel) = name.strip_suffix(".kd") {
                return Some(kernel.to_string());
            }
        }
    }
    None
}

/// A readable name for the kernel at `kernel_object`: demangled when it is a C++ name, the
/// symbol as it is otherwise, and `kernel@0x…` when no code object names it.
pub fn kernel_name(mem: &impl ReadGpu, kernel_object: u64) -> String {
    match kernel_symbol(mem, kernel_object) {
        Some(symbol) => demangle(&symbol),
        None => format!("kernel@{kernel_object:#x}"),
    }
}

/// `symbol` demangled (Itanium C++ ABI), or as it is.
pub fn demangle(symbol: &str) -> String {
    cpp_demangle::Symbol::new(symbol)
        .ok()
        .and_then(|s| s.demangle(&cpp_demangle::DemangleOptions::new().no_params().no_return_type()).ok())
        .unwrap_or_else(|| symbol.to_string())
}

/// The page start at or below `addr` holding an AMDGPU ELF header.
fn find_elf_header(mem: &impl ReadGpu, addr: u64) -> Option<u64> {
    let mut page = addr & !(PAGE - 1);
    let lowest = addr.saturating_sub(MAX_DISTANCE);
    loop {
        let mut head = [0u8; 20];
        if !mem.read_at(page, &mut head) {
            return None;
        }
        let machine = u16::from_le_bytes([head[18], head[19]]);
        if head[..4] == *b"\x7fELF" && head[4] == 2 && head[5] == 1 && machine == EM_AMDGPU {
            return Some(page);
        }
        if page < PAGE || page - PAGE < lowest {
            return None;
        }
        page -= PAGE;
    }
}

/// Where the dynamic symbol and string tables are, as offsets from the load base.
struct DynamicTables {
    symtab: u64,
    symbols: u64,
    strtab: u64,
    strsz: u64,
}

impl DynamicTables {
    fn read(mem: &impl ReadGpu, base: u64) -> Option<DynamicTables> {
        let mut header = [0u8; 64];
        if !mem.read_at(base, &mut header) {
            return None;
        }
        let phoff = u64::from_le_bytes(header[32..40].try_into().unwrap());
        let phentsize = u16::from_le_bytes([header[54], header[55]]) as u64;
        let phnum = u16::from_le_bytes([header[56], header[57]]) as u64;
        if phentsize < 56 {
            return None;
        }
        let dynamic = (0..phnum).find_map(|i| {
            let mut ph = [0u8; 56];
            mem.read_at(base + phoff + i * phentsize, &mut ph).then_some(())?;
            let kind = u32::from_le_bytes(ph[0..4].try_into().unwrap());
            let vaddr = u64::from_le_bytes(ph[16..24].try_into().unwrap());
            let size = u64::from_le_bytes(ph[40..48].try_into().unwrap());
            (kind == PT_DYNAMIC).then_some((vaddr, size))
        })?;
        let (mut symtab, mut strtab, mut strsz, mut hash) = (None, None, None, None);
        for i in 0..dynamic.1 / 16 {
            let mut entry = [0u8; 16];
            if !mem.read_at(base + dynamic.0 + i * 16, &mut entry) {
                return None;
            }
            let tag = u64::from_le_bytes(entry[0..8].try_into().unwrap());
            let value = u64::from_le_bytes(entry[8..16].try_into().unwrap());
            match tag {
                DT_NULL => break,
                DT_SYMTAB => symtab = Some(value),
                DT_STRTAB => strtab = Some(value),
                DT_STRSZ => strsz = Some(value),
                DT_HASH => hash = Some(value),
                _ => {}
            }
        }
        let (symtab, strtab, strsz) = (symtab?, strtab?, strsz?);
        // The SysV hash table's second word is the number of symbols; without one, the
        // symbol table ends where the string table begins (lld's order).
        let symbols = match hash {
            Some(hash) => {
                let mut words = [0u8; 8];
                mem.read_at(base + hash, &mut words).then_some(())?;
                u32::from_le_bytes(words[4..8].try_into().unwrap()) as u64
            }
            None if strtab > symtab => (strtab - symtab) / SYMBOL_SIZE,
            None => return None,
        };
        Some(DynamicTables { symtab, symbols: symbols.min(MAX_SYMBOLS), strtab, strsz })
    }

    /// The NUL-terminated name at `offset` in the string table.
    fn name(&self, mem: &impl ReadGpu, base: u64, offset: u64) -> Option<String> {
        if offset >= self.strsz {
            return None;
        }
        let len = ((self.strsz - offset) as usize).min(MAX_NAME);
        let mut bytes = vec![0u8; len];
        // The table may end at a mapping's end: read what is there.
        let mut got = len;
        while got > 0 && !mem.read_at(base + self.strtab + offset, &mut bytes[..got]) {
            got /= 2;
        }
        let end = bytes[..got].iter().position(|&b| b == 0)?;
        String::from_utf8(bytes[..end].to_vec()).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// GPU memory for tests: one mapping of `bytes` at `start`.
    struct Flat {
        start: u64,
        bytes: Vec<u8>,
    }

    impl ReadGpu for Flat {
        fn read_at(&self, va: u64, out: &mut [u8]) -> bool {
            let Some(at) = va.checked_sub(self.start) else { return false };
            let Some(src) = self.bytes.get(at as usize..at as usize + out.len()) else { return false };
            out.copy_from_slice(src);
            true
        }
    }

    /// A loaded code object as ROCR leaves its first segment: ELF header, one `PT_DYNAMIC`
    /// program header, the dynamic table, a hash table, symbols, strings, and kernel
    /// descriptors far above (after a large note, as in Tensile's libraries).
    fn code_object(symbols: &[(&str, u64)], with_hash: bool) -> Vec<u8> {
        let mut image = vec![0u8; 0x3000 + 0x1000];
        let put = |image: &mut Vec<u8>, at: usize, bytes: &[u8]| image[at..at + bytes.len()].copy_from_slice(bytes);
        put(&mut image, 0, b"\x7fELF\x02\x01\x01\x40");
        put(&mut image, 18, &EM_AMDGPU.to_le_bytes());
        put(&mut image, 32, &64u64.to_le_bytes()); // e_phoff
        put(&mut image, 54, &56u16.to_le_bytes()); // e_phentsize
        put(&mut image, 56, &1u16.to_le_bytes()); // e_phnum
        let (dynamic, hash, symtab, strtab) = (0x100u64, 0x200u64, 0x300u64, 0x800u64);
        put(&mut image, 64, &PT_DYNAMIC.to_le_bytes());
        put(&mut image, 64 + 16, &dynamic.to_le_bytes());
        put(&mut image, 64 + 40, &(6 * 16u64).to_le_bytes());
        let mut strings = vec![0u8];
        let mut entries = vec![[0u8; 24]];
        for (name, value) in symbols {
            let mut sym = [0u8; 24];
            sym[0..4].copy_from_slice(&(strings.len() as u32).to_le_bytes());
            sym[8..16].copy_from_slice(&value.to_le_bytes());
            entries.push(sym);
            strings.extend_from_slice(name.as_bytes());
            strings.push(0);
        }
        for (i, sym) in entries.iter().enumerate() {
            put(&mut image, symtab as usize + i * 24, sym);
        }
        put(&mut image, strtab as usize, &strings);
        put(&mut image, hash as usize + 4, &(entries.len() as u32).to_le_bytes());
        let mut tags = vec![(DT_SYMTAB, symtab), (DT_STRTAB, strtab), (DT_STRSZ, strings.len() as u64)];
        if with_hash {
            tags.push((DT_HASH, hash));
        }
        for (i, (tag, value)) in tags.iter().enumerate() {
            put(&mut image, dynamic as usize + i * 16, &tag.to_le_bytes());
            put(&mut image, dynamic as usize + i * 16 + 8, &value.to_le_bytes());
        }
        image
    }

    #[test]
    fn a_descriptor_is_named_by_its_kd_symbol() {
        let base = 0x7f00_0000_0000;
        let symbols = [("_Z9vectorAddPKfS0_Pfi", 0x3040), ("_Z9vectorAddPKfS0_Pfi.kd", 0x3000), ("other.kd", 0x3100)];
        for with_hash in [true, false] {
            let mem = Flat { start: base, bytes: code_object(&symbols, with_hash) };
            assert_eq!(kernel_symbol(&mem, base + 0x3000).as_deref(), Some("_Z9vectorAddPKfS0_Pfi"));
            assert_eq!(kernel_name(&mem, base + 0x3000), "vectorAdd");
            assert_eq!(kernel_name(&mem, base + 0x3100), "other");
            // Not a descriptor: the function symbol's address, or nothing at all.
            assert_eq!(kernel_symbol(&mem, base + 0x3040), None);
            assert_eq!(kernel_name(&mem, base + 0x3200), format!("kernel@{:#x}", base + 0x3200));
        }
    }

    #[test]
    fn memory_without_a_code_object_has_no_names() {
        let mem = Flat { start: 0x10000, bytes: vec![0u8; 0x4000] };
        assert_eq!(kernel_symbol(&mem, 0x12000), None);
        // Unmapped memory below the descriptor ends the search.
        assert_eq!(kernel_symbol(&mem, 0x10000), None);
        assert_eq!(kernel_symbol(&mem, 0x90000), None);
    }

    #[test]
    fn templates_and_namespaces_demangle_without_parameters() {
        assert_eq!(demangle("_ZN4ggml3addIfEEvPKT_S3_PS1_i"), "ggml::add<float>");
        assert_eq!(demangle("Cijk_Ailk_Bljk_SB_MT64x64x16"), "Cijk_Ailk_Bljk_SB_MT64x64x16");
        assert_eq!(demangle("__amd_rocclr_fillBufferAligned"), "__amd_rocclr_fillBufferAligned");
    }
}
