//! Bakes the build's identity into the module: `_core.BUILD_ID`,
//! `_core.BUILD_GIT` and `_core.RUSTC_VERSION` (the compiler's `rustc --version`,
//! with ", profile-guided" when built with `-Cprofile-use`, scripts/pgo.sh).
//!
//! `BUILD_ID` is a hash of the engine crates' sources (src/, Cargo.toml and
//! build.rs of crates/{engine,aimd,rng,py,linuxemu}, plus Cargo.lock; not their
//! tests or examples): it changes whenever
//! code that shapes a result changes, and needs no git, so a build from an
//! sdist or a copy of the tree gets it too. Caches and the results store key
//! on it (python/tcplab/provenance.py). `BUILD_GIT` is the commit (12 hex digits,
//! "-dirty" if the engine crates differ from it), or "" where there is no git:
//! provenance for the metadata, not part of any key (a commit that touches only
//! the docs must not invalidate a cache).

use std::collections::BTreeMap;
use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const CRATES: [&str; 5] = ["engine", "aimd", "rng", "py", "linuxemu"];

fn main() {
    let here = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let crates = here.parent().unwrap().to_path_buf();
    let root = crates.parent().unwrap().to_path_buf();

    // relative path -> contents; sorted, so the hash is independent of directory order
    let mut files: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    for name in CRATES {
        for part in ["src", "Cargo.toml", "build.rs"] {
            let path = crates.join(name).join(part);
            if path.exists() {
                // a directory: cargo watches every file under it
                println!("cargo:rerun-if-changed={}", path.display());
                collect(&path, &root, &mut files);
            }
        }
    }
    let lock = root.join("Cargo.lock");
    if let Ok(bytes) = fs::read(&lock) {
        println!("cargo:rerun-if-changed={}", lock.display());
        files.insert("Cargo.lock".into(), bytes);
    }
    let mut h = Fnv::new();
    for (path, bytes) in &files {
        h.write(path.as_bytes());
        h.write(&[0]);
        h.write(&(bytes.len() as u64).to_le_bytes());
        h.write(bytes);
    }
    println!("cargo:rustc-env=TCPLAB_BUILD_ID=src-{:016x}", h.finish());
    println!("cargo:rustc-env=TCPLAB_BUILD_GIT={}", git(&root));
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    // a profile-guided build (scripts/pgo.sh) says so where the compiler is named
    let flags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let pgo = if flags.contains("profile-use=") {
        ", profile-guided"
    } else {
        ""
    };
    println!("cargo:rustc-env=TCPLAB_RUSTC={version}{pgo}");
    if env::var_os("CARGO_FEATURE_BUNDLE_EMU").is_some() {
        bundle_emulator(&root);
    }
}

/// With the `bundle-emu` feature — on in pyproject.toml, so every wheel maturin
/// builds (`pip install .`, an sdist, `maturin build`) has it — put the linux
/// engine's `tcplab-emu` at python/tcplab/bin/, where pyproject.toml's `include`
/// packs it into the wheel and `tcplab.resources.emulator` finds it. The binary is
/// `$TCPLAB_EMU_PREBUILT` if set (scripts/setup.sh and build-wheel.sh build it
/// themselves), else built here by a nested cargo in a target directory of its
/// own (the outer build holds the lock on its own). Without it the wheel still
/// works, minus the linux engine: a failure is a warning, not an error.
fn bundle_emulator(root: &Path) {
    println!("cargo:rerun-if-env-changed=TCPLAB_EMU_PREBUILT");
    let dest_dir = root.join("python").join("tcplab").join("bin");
    let dest = dest_dir.join("tcplab-emu");
    let built = match env::var_os("TCPLAB_EMU_PREBUILT") {
        Some(p) => PathBuf::from(p),
        None => {
            let out = PathBuf::from(env::var("OUT_DIR").unwrap()).join("emu-target");
            let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            let status = Command::new(cargo)
                .current_dir(root)
                .env_remove("CARGO_TARGET_DIR")
                .env_remove("CARGO_BUILD_TARGET")
                .args([
                    "build",
                    "--release",
                    "-q",
                    "-p",
                    "tcplab-linuxemu",
                    "--target-dir",
                ])
                .arg(&out)
                .status();
            match status {
                Ok(s) if s.success() => out.join("release").join("tcplab-emu"),
                other => {
                    println!("cargo:warning=tcplab-emu was not built ({other:?}): the wheel has no linux engine");
                    return;
                }
            }
        }
    };
    if built
        .canonicalize()
        .ok()
        .is_some_and(|b| Some(b) == dest.canonicalize().ok())
    {
        return; // already in place (scripts/build-wheel.sh strips it there)
    }
    let copied = fs::create_dir_all(&dest_dir)
        .and_then(|_| fs::copy(&built, &dest))
        .and_then(|_| {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&dest, fs::Permissions::from_mode(0o755))
        });
    if let Err(e) = copied {
        println!(
            "cargo:warning=tcplab-emu not copied into the wheel ({}: {e})",
            built.display()
        );
    }
}

fn collect(path: &Path, root: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
    if path.is_file() {
        if let Ok(bytes) = fs::read(path) {
            let rel = path
                .strip_prefix(root)
                .unwrap_or(path)
                .to_string_lossy()
                .replace('\\', "/");
            out.insert(rel, bytes);
        }
        return;
    }
    let Ok(entries) = fs::read_dir(path) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') || name == "target" {
            continue;
        }
        collect(&path, root, out);
    }
}

/// "<commit>" or "<commit>-dirty" (engine crates changed since it), "" without git.
fn git(root: &Path) -> String {
    let run = |args: &[&str]| -> Option<String> {
        let out = Command::new("git")
            .arg("-C")
            .arg(root)
            .args(args)
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    let Some(commit) = run(&["rev-parse", "--short=12", "HEAD"]) else {
        return String::new();
    };
    // only a tree that is itself a repository's top (not a copy inside another one)
    match run(&["rev-parse", "--show-toplevel"]) {
        Some(top) if Path::new(&top).canonicalize().ok() == root.canonicalize().ok() => {}
        _ => return String::new(),
    }
    // a commit moves the branch's ref, not HEAD (which names the branch)
    let branch = run(&["symbolic-ref", "-q", "HEAD"]);
    for name in ["HEAD"].into_iter().chain(branch.as_deref()) {
        if let Some(p) = run(&["rev-parse", "--git-path", name]) {
            let p = root.join(p);
            if p.is_file() {
                println!("cargo:rerun-if-changed={}", p.display());
            }
        }
    }
    let paths: Vec<String> = CRATES.iter().map(|c| format!("crates/{c}")).collect();
    let mut args = vec!["status", "--porcelain", "--", "Cargo.lock"];
    args.extend(paths.iter().map(String::as_str));
    match run(&args) {
        Some(s) if s.is_empty() => commit,
        Some(_) => format!("{commit}-dirty"),
        None => commit,
    }
}

/// FNV-1a, 64 bits: no dependency, stable across Rust versions (std's hasher is not).
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    fn finish(&self) -> u64 {
        self.0
    }
}
