//! `metalsim run BODY.metal` in MLX mode: `--spec S.toml` in MLX form (`[mlx]`), MLX
//! mode's flags (`--mlx-name` ...), or both (the flags override the spec). The kernel
//! file is an MLX body, compiled inside the kernel `metalsim_launch` generates for it.

use std::path::Path;

use metalsim_frontend::SourceMap;
use metalsim_isa::Module;
use metalsim_launch::{LaunchSpec, MlxFields, MlxOrigins, MlxSpec, is_mlx_spec};

use super::RunArgs;
use crate::cli::{Failure, specialization};

mod args;

pub use args::MlxArgs;

/// The MLX launch, when `--spec` is in MLX form or MLX flags are given; `None` for an
/// ordinary spec (and for a spec file that cannot be read, which the ordinary path then
/// reports).
pub(super) fn read_if_mlx(args: &RunArgs) -> Result<Option<MlxSpec>, Failure> {
    let flags = args.mlx.fields()?;
    let spec = match &args.spec {
        None => None,
        Some(path) => match std::fs::read_to_string(path) {
            Ok(text) => Some((path, text)),
            Err(_) if flags.is_none() => return Ok(None),
            Err(e) => {
                return Err(Failure::BadInput(format!(
                    "{}: cannot read the launch spec: {e}",
                    path.display()
                )));
            }
        },
    };
    let none = MlxFields::default();
    let given = flags.as_ref().unwrap_or(&none);
    let flag_name = |key: &str| args::flag_name(given, key);
    match (spec, flags.as_ref()) {
        (None, None) => Err(Failure::BadInput(
            "give --spec FILE (a launch spec), or MLX mode's flags (--mlx-name NAME ...)".into(),
        )),
        (Some((path, text)), flags) if is_mlx_spec(&text) => {
            let origin = path.display().to_string();
            let dir = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            };
            let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
            let mut fields = MlxFields::from_toml(&text, &dir, &origin)?;
            if let Some(flags) = flags {
                fields = fields.overridden_by(flags);
            }
            let origins = MlxOrigins {
                spec: Some((&text, &origin)),
                flags: given,
                flag_name: Some(&flag_name),
            };
            Ok(Some(MlxSpec::check(fields, &origins, &dir)?))
        }
        (Some(_), None) => Ok(None),
        (Some((path, _)), Some(_)) => Err(Failure::BadInput(format!(
            "{}: MLX mode's flags (--mlx-name, --grid, --input ...) need a spec in MLX form \
             (with an `[mlx]` table), or no --spec",
            path.display()
        ))),
        (None, Some(flags)) => {
            let dir = std::env::current_dir()
                .map_err(|e| Failure::BadInput(format!("cannot find the current folder: {e}")))?;
            let origins = MlxOrigins {
                spec: None,
                flags: given,
                flag_name: Some(&flag_name),
            };
            Ok(Some(MlxSpec::check(flags.clone(), &origins, &dir)?))
        }
    }
}

/// The ordinary launch spec's path (`read_if_mlx` found no MLX launch, so there is one).
pub(super) fn spec_path(args: &RunArgs) -> Result<&Path, Failure> {
    args.spec
        .as_deref()
        .ok_or_else(|| Failure::BadInput("give --spec FILE".into()))
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
        eprintln!(
            "Generated source code for `{}`:\n```\n{}\n```",
            m.name, kernel.shown
        );
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
