//! `metalsim run BODY.metal --spec S.toml` where `S.toml` is in MLX form (`[mlx]`): the
//! kernel file is an MLX body, compiled inside the kernel `metalsim_launch` generates
//! for it.

use std::path::Path;

use metalsim_frontend::SourceMap;
use metalsim_isa::Module;
use metalsim_launch::{LaunchSpec, MlxSpec, is_mlx_spec};

use super::RunArgs;
use crate::cli::{Failure, specialization};

/// The spec, when the file is in MLX form; `None` for an ordinary spec (and for a file
/// that cannot be read, which the ordinary path then reports).
pub(super) fn read_if_mlx(path: &Path) -> Result<Option<MlxSpec>, Failure> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Ok(None);
    };
    if !is_mlx_spec(&text) {
        return Ok(None);
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    Ok(Some(MlxSpec::from_str(
        &text,
        dir,
        &path.display().to_string(),
    )?))
}

/// Generates the kernel around the body file `args.kernel`, prints it with `--verbose`,
/// and compiles it; returns the module and the launch spec binding it. Diagnostics in
/// the body name the body file's lines.
pub(super) fn compile(m: &MlxSpec, args: &RunArgs) -> Result<(Module, LaunchSpec), Failure> {
    let body_path = std::path::absolute(&args.kernel).unwrap_or_else(|_| args.kernel.clone());
    if let Some(source) = &m.source {
        let same = match (source.canonicalize(), body_path.canonicalize()) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        };
        if !same {
            return Err(Failure::BadInput(format!(
                "{}: `source` names {}, but the command line gives {}",
                m.origin,
                source.display(),
                args.kernel.display()
            )));
        }
    }
    let body = std::fs::read_to_string(&body_path)
        .map_err(|e| Failure::BadInput(format!("cannot read {}: {e}", args.kernel.display())))?;
    let kernel = m.kernel(&body, &body_path);
    if args.verbose {
        eprintln!("{}", kernel.shown);
    }
    let name = m.kernel_name();
    let generated = body_path.with_file_name(format!("{name}.metal"));
    let mut sources = SourceMap::new();
    let id = sources.add(
        format!("{name} (generated for {})", args.kernel.display()),
        Some(&generated),
        kernel.compiled,
    );
    let mut options = args.compile.options();
    options.specialization = specialization(&kernel.spec);
    match crate::cli::compile_reporting(&mut sources, id, &options) {
        Ok(module) => Ok((module, kernel.spec)),
        Err(n) => Err(Failure::BadInput(format!(
            "{} has {n} error{} (in the kernel generated around it; `--verbose` prints it)",
            args.kernel.display(),
            if n == 1 { "" } else { "s" }
        ))),
    }
}
