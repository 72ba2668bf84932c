//! `cargo xtask install [--prefix DIR]`: the launcher, the interposer and the
//! systemd user units, into a prefix (default `~/.local`).

use crate::tasks::{bin_dir, build, root};
use anyhow::{bail, Context, Result};
use std::path::PathBuf;

pub fn run(args: &[String]) -> Result<()> {
    let prefix = match args {
        [] => PathBuf::from(std::env::var_os("HOME").context("HOME is not set")?).join(".local"),
        [flag, dir] if flag == "--prefix" => PathBuf::from(dir),
        _ => bail!("usage: cargo xtask install [--prefix DIR]"),
    };
    build()?;
    let bin = prefix.join("bin");
    let lib = prefix.join("lib");
    let units = prefix.join("share/systemd/user");
    for d in [&bin, &lib, &units] {
        std::fs::create_dir_all(d).with_context(|| format!("cannot create {}", d.display()))?;
    }
    let copy = |from: PathBuf, to: PathBuf| -> Result<()> {
        // Replace rather than overwrite: a running process may map the old file.
        let tmp = to.with_extension("new");
        std::fs::copy(&from, &tmp).with_context(|| format!("cannot copy {} to {}", from.display(), tmp.display()))?;
        std::fs::rename(&tmp, &to).with_context(|| format!("cannot install {}", to.display()))?;
        eprintln!("installed {}", to.display());
        Ok(())
    };
    copy(bin_dir().join("rocjitsu"), bin.join("rocjitsu"))?;
    copy(bin_dir().join("librocjitsu.so"), lib.join("librocjitsu.so"))?;
    for unit in ["rocjitsud.service", "rocjitsud.socket"] {
        let text = std::fs::read_to_string(root().join("rocjitsud/systemd").join(unit))?;
        let path = units.join(unit);
        std::fs::write(&path, text.replace("@BINDIR@", &bin.to_string_lossy()))?;
        eprintln!("installed {}", path.display());
    }
    eprintln!(
        "\nenable the daemon with:  systemctl --user daemon-reload && systemctl --user enable --now rocjitsud.socket\n\
         then run applications with:  {}/rocjitsu --attach -- ./app",
        bin.display()
    );
    Ok(())
}
