//! The entry point: checks a launch against its kernel and the GPU, builds the memory and
//! the program, runs the dispatch under a scheduler and gathers the outcome.

use metalsim_isa::{Module, OpClass, ParamKind};
use metalsim_launch::{Grid, Launch};
use metalsim_models::Gpu;

use crate::dispatch::Geometry;
use crate::error::SimError;
use crate::fault::Finding;
use crate::machine::Machine;
use crate::math::Precision;
use crate::memory::Memory;
use crate::outcome::{DEFAULT_INSTRUCTION_BUDGET, RunOptions, RunOutcome, Stats};
use crate::program;
use crate::progress::Progress;
use crate::timing::{Model, Sampled, Timing, Untimed};

/// Runs kernel `kernel` of `module` once, as `launch` describes, on `gpu`.
///
/// Bad input (unknown kernel, a kernel the verifier rejects, missing bindings, sizes the
/// GPU cannot run) is an `Err`. A mistake the kernel makes while running is a
/// [`KernelFault`](crate::KernelFault) in the outcome: the run stops there and returns the
/// buffers as they stood.
pub fn run(
    module: &Module,
    kernel: &str,
    launch: &Launch,
    gpu: &Gpu,
    options: &RunOptions,
) -> Result<RunOutcome, SimError> {
    run_with_progress(module, kernel, launch, gpu, options, None)
}

/// [`run()`], counting finished threadgroups in `progress` (when given) as it goes, so
/// another thread can show how far it has come. The outcome is the same as `run`'s.
pub fn run_with_progress(
    module: &Module,
    kernel: &str,
    launch: &Launch,
    gpu: &Gpu,
    options: &RunOptions,
    progress: Option<&Progress>,
) -> Result<RunOutcome, SimError> {
    let f = module
        .function(kernel)
        .ok_or_else(|| SimError::UnknownKernel {
            name: kernel.to_string(),
        })?;
    metalsim_isa::verify_function(f, module.data.len())?;
    check_sizes(launch, gpu)?;
    let memory = Memory::new(module, f, launch)?;
    if memory.threadgroup_request > gpu.max_threadgroup_memory as u64 {
        return Err(SimError::BadLaunch(format!(
            "the kernel needs {} bytes of threadgroup memory; {} allows {} per threadgroup",
            memory.threadgroup_request, gpu.name, gpu.max_threadgroup_memory
        )));
    }
    for p in f
        .params
        .iter()
        .filter(|p| p.kind == ParamKind::Buffer && p.is_ref)
    {
        let len = launch.buffer(p.index).map_or(0, |b| b.bytes.len() as u64);
        if len < p.elem_size as u64 {
            return Err(SimError::BadLaunch(format!(
                "buffer({}) for `{}` has {len} bytes, less than one {} ({} bytes)",
                p.index, p.name, p.type_name, p.elem_size
            )));
        }
    }
    let math = if options.precise_math {
        Precision::Precise
    } else {
        Precision::Fast
    };
    let uniform_halves = gpu.occupancy.uniform_registers * 2;
    let join_instructions = gpu.reconvergence_instruction.unwrap_or(false);
    let program = program::decode(f, &memory.map, math, uniform_halves, join_instructions);
    let geometry = Geometry::new(launch);
    let budget = options
        .max_instructions
        .unwrap_or(DEFAULT_INSTRUCTION_BUDGET);
    let mut machine = Machine::new(&program, module, memory, geometry, budget);
    if let Some(p) = progress {
        machine.watch(p);
    }
    if let Some((tg, sg)) = options.record_simdgroup {
        machine.record(f, tg, sg);
    }
    let profile = options.profile.then_some(f);
    let (report, sampling) = match (&options.sampling, options.timing) {
        (_, false) => (
            Untimed {
                workers: workers(options),
            }
            .run(&mut machine),
            None,
        ),
        (None, true) => (Model::new(gpu, profile).run(&mut machine), None),
        (Some(plan), true) => {
            let (report, sampling) =
                Sampled::new(gpu, profile, plan.clone(), workers(options)).run(&mut machine);
            (report, Some(sampling))
        }
    };
    let recording = machine.take_recording();
    let (buffers, c, mut findings) = machine.finish();
    // The fault that stopped the run is the last finding.
    if let Some(f) = &report.fault {
        findings.push(Finding {
            first: f.clone(),
            count: 1,
        });
    }
    Ok(RunOutcome {
        buffers,
        stats: Stats {
            cycles: report.cycles.0,
            simd_instructions: c.simd_instructions,
            thread_instructions: c.thread_instructions,
            threadgroups: c.threadgroups,
            simdgroups: c.simdgroups,
            instructions_by_class: OpClass::ALL
                .iter()
                .map(|&k| (k, c.by_class[k as usize]))
                .collect(),
            device_bytes_read: c.device_bytes_read,
            device_bytes_written: c.device_bytes_written,
            dram_bytes: report.dram_bytes,
        },
        timing: report.summary,
        fault: report.fault,
        findings,
        profile: report.profile,
        recording,
        sampling,
    })
}

/// The worker threads a run uses: `options.workers`, or one per core when it is 0; one
/// when a SIMD-group is recorded (its recorder lives on the first worker's machine).
fn workers(options: &RunOptions) -> usize {
    if options.record_simdgroup.is_some() {
        return 1;
    }
    match options.workers {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
}

/// Checks the grid and threadgroup sizes.
fn check_sizes(launch: &Launch, gpu: &Gpu) -> Result<(), SimError> {
    let tg = launch.threadgroup;
    if tg.contains(&0) {
        return Err(SimError::BadLaunch(format!(
            "threadgroup size {tg:?} has a zero dimension"
        )));
    }
    let threads: u64 = tg.iter().map(|&d| d as u64).product();
    if threads > gpu.max_threads_per_threadgroup as u64 {
        return Err(SimError::BadLaunch(format!(
            "threadgroup size {tg:?} has {threads} threads; {} allows {}",
            gpu.name, gpu.max_threads_per_threadgroup
        )));
    }
    let grid = match launch.grid {
        Grid::Threads(g) | Grid::Threadgroups(g) => g,
    };
    if grid.contains(&0) {
        return Err(SimError::BadLaunch(format!("grid {grid:?} is empty")));
    }
    if let Grid::Threadgroups(g) = launch.grid
        && (0..3).any(|d| g[d] as u64 * tg[d] as u64 > u32::MAX as u64)
    {
        return Err(SimError::BadLaunch(format!(
            "grid of {g:?} threadgroups of {tg:?} has more than 2^32 threads in a dimension"
        )));
    }
    Ok(())
}
