//! The KFD topology sysfs tree (`/sys/devices/virtual/kfd/kfd/topology`) for a config.
//!
//! libhsakmt learns the whole machine from this tree (contract §4): node 0 is the host CPU,
//! node `i + 1` is GPU `i`. The preload library writes the tree once per process into a
//! private directory with [`TopologyTree::write_to`] and redirects both
//! `/sys/devices/virtual/kfd/kfd/topology` and `/sys/class/kfd/kfd/topology` there, so every
//! path here is relative to the `topology` directory.
//!
//! Multi-GPU configs: GPUs in a hive (`hive_id` ≠ 0, like the reference's 2-GPU MI350X config)
//! are joined by XGMI io_links (type 11), as amdkfd builds them from the CRAT; GPUs not in a
//! hive get PCIe `p2p_links` through the CPU. Either way every node then carries
//! `p2p_links_count`, which also tells libhsakmt not to invent indirect links of its own. A
//! single-GPU tree has no `p2p_links_count`, exactly the tree ROCm 5.2 was verified against.

mod nodes;
mod props;

use std::io;
use std::path::Path;

use crate::config::Config;
use crate::host::HostInfo;

pub use nodes::{IOLINK_TYPE_PCIE, IOLINK_TYPE_XGMI, PCIE_WEIGHT, XGMI_WEIGHT};
pub use props::MAX_PROPERTIES_BYTES;

use nodes::{Link, Peers};

/// One file of the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SysfsFile {
    /// Path relative to the topology directory, `/`-separated (`nodes/1/properties`).
    pub path: String,
    /// Contents, exactly as the kernel would print them.
    pub contents: String,
}

/// The complete tree: directories (including empty ones, which libhsakmt counts or opens) and
/// files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopologyTree {
    dirs: Vec<String>,
    files: Vec<SysfsFile>,
}

impl TopologyTree {
    /// Every file, parents before children.
    pub fn files(&self) -> &[SysfsFile] {
        &self.files
    }

    /// Every directory, parents before children.
    pub fn dirs(&self) -> &[String] {
        &self.dirs
    }

    /// The contents of the file at `path`, if the tree has it.
    pub fn get(&self, path: &str) -> Option<&str> {
        self.files.iter().find(|f| f.path == path).map(|f| f.contents.as_str())
    }

    /// Creates the tree under `dir` (which may already exist), overwriting files of the same
    /// name.
    pub fn write_to(&self, dir: &Path) -> io::Result<()> {
        std::fs::create_dir_all(dir)?;
        for d in &self.dirs {
            std::fs::create_dir_all(dir.join(d))?;
        }
        for f in &self.files {
            std::fs::write(dir.join(&f.path), &f.contents)?;
        }
        Ok(())
    }
}

/// Builds the tree for `config` on `host`.
pub fn build(config: &Config, host: &HostInfo) -> TopologyTree {
    let mut t = Tree::default();
    t.file("generation_id", "1\n".into());
    t.file("system_properties", "platform_oem 0\nplatform_id 0\nplatform_rev 0\n".into());
    t.dir("nodes");
    let peers = Peers::of(config);

    // Node 0: the host CPU.
    let cpu_links = nodes::cpu_links(config);
    t.node_dirs(0, peers);
    t.file("nodes/0/gpu_id", "0\n".into());
    t.file("nodes/0/name", "\n".into());
    t.file("nodes/0/properties", nodes::cpu_node_properties(host, peers, cpu_links.len() as u32));
    t.file("nodes/0/mem_banks/0/properties", nodes::cpu_mem_bank(host));
    if nodes::cpu_lists_caches(host) {
        t.file("nodes/0/caches/0/properties", nodes::cpu_cache(host));
    }
    t.links(0, "io_links", &cpu_links);

    // Nodes 1..=N: the GPUs.
    for d in config.gpus() {
        let n = d.sysfs_node();
        let (io, p2p) = nodes::gpu_links(config, n, peers);
        let p2p_count = (peers != Peers::None).then_some(p2p.len() as u32);
        t.node_dirs(n, peers);
        t.file(&format!("nodes/{n}/gpu_id"), format!("{}\n", d.gpu_id));
        t.file(&format!("nodes/{n}/name"), format!("{}\n", d.target.kernel_node_name()));
        t.file(&format!("nodes/{n}/properties"), nodes::gpu_node_properties(d, host, io.len() as u32, p2p_count));
        t.file(&format!("nodes/{n}/mem_banks/0/properties"), nodes::gpu_mem_bank(d));
        for (c, text) in nodes::gpu_caches(d).into_iter().enumerate() {
            t.file(&format!("nodes/{n}/caches/{c}/properties"), text);
        }
        t.links(n, "io_links", &io);
        t.links(n, "p2p_links", &p2p);
    }
    TopologyTree { dirs: t.dirs, files: t.files }
}

/// Accumulates directories and files, creating each parent directory once.
#[derive(Default)]
struct Tree {
    dirs: Vec<String>,
    files: Vec<SysfsFile>,
}

impl Tree {
    fn dir(&mut self, path: &str) {
        if let Some((parent, _)) = path.rsplit_once('/') {
            self.dir(parent);
        }
        if !self.dirs.iter().any(|d| d == path) {
            self.dirs.push(path.to_owned());
        }
    }

    fn file(&mut self, path: &str, contents: String) {
        if let Some((parent, _)) = path.rsplit_once('/') {
            self.dir(parent);
        }
        self.files.push(SysfsFile { path: path.to_owned(), contents });
    }

    /// The subdirectories amdkfd creates for every node, even when empty.
    fn node_dirs(&mut self, node: u32, peers: Peers) {
        for sub in ["mem_banks", "caches", "io_links"] {
            self.dir(&format!("nodes/{node}/{sub}"));
        }
        if peers != Peers::None {
            self.dir(&format!("nodes/{node}/p2p_links"));
        }
    }

    fn links(&mut self, node: u32, kind: &str, links: &[Link]) {
        for (i, link) in links.iter().enumerate() {
            self.file(&format!("nodes/{node}/{kind}/{i}/properties"), link.properties());
        }
    }
}
