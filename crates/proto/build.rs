//! Compiles the `.proto` files under `proto/` with protox (pure Rust, no `protoc`).

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = PathBuf::from("proto");
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&dir)? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "proto") {
            println!("cargo:rerun-if-changed={}", path.display());
            files.push(path);
        }
    }
    files.sort();
    println!("cargo:rerun-if-changed=proto");
    let fds = protox::compile(&files, [&dir])?;
    prost_build::Config::new().bytes(["."]).compile_fds(fds)?;
    Ok(())
}
