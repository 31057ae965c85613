//! One ISA function as a CUDA `__global__` function.
//!
//! Blocks become labels and `goto`s; every SSA value is a typed local declared at the top
//! (so no `goto` jumps over an initialisation); block parameters are assigned on the edge
//! through temporaries (parallel-copy semantics). Threads are numbered as the simulator
//! numbers them: CUDA blocks are one-dimensional, `threadIdx.x` is
//! `thread_index_in_threadgroup` over the threadgroup's *actual* size, and threads past
//! it (the missing threads of a partial edge threadgroup of a `dispatchThreads` grid)
//! return at once, so SIMD-groups are warps and a lane is `threadIdx.x % 32`.

use std::fmt::Write;

use metalsim_isa::{
    AtomicOp, BarrierScope, Block, Cfg, CmpCond, Function, InstData, IntFn, MathFn, Module, Op,
    SimdOp, Space, SpecialReg, Terminator, Type, Value,
};

use super::EmitError;
use super::types::{c_type, literal, memory_type};

/// The kernel's CUDA name.
pub fn cuda_name(f: &Function) -> String {
    let mut s: String = f
        .name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if s.starts_with(|c: char| c.is_ascii_digit()) || s.is_empty() {
        s.insert_str(0, "k_");
    }
    format!("ms_kernel_{s}")
}

/// The buffer bindings in binding order: the kernel's pointer parameters.
pub fn buffer_indices(f: &Function) -> Vec<u32> {
    let mut v: Vec<u32> = f
        .params
        .iter()
        .filter(|p| p.kind == metalsim_isa::ParamKind::Buffer)
        .map(|p| p.index)
        .collect();
    v.sort_unstable();
    v
}

/// The threadgroup-memory bindings in binding order: one offset parameter each.
pub fn threadgroup_indices(f: &Function) -> Vec<u32> {
    let mut v: Vec<u32> = f
        .params
        .iter()
        .filter(|p| p.kind == metalsim_isa::ParamKind::Threadgroup)
        .map(|p| p.index)
        .collect();
    v.sort_unstable();
    v
}

/// A launch's geometry, where the kernel is built for it: threads per grid and per
/// threadgroup, each dimension a whole number of threadgroups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UniformGeometry {
    /// Threads per grid.
    pub threads: [u32; 3],
    /// Threads per threadgroup.
    pub group: [u32; 3],
}

impl UniformGeometry {
    /// The geometry of a grid of `threads` in threadgroups of `group`, where every
    /// threadgroup is whole; `None` where an edge threadgroup is cut.
    pub fn new(threads: [u32; 3], group: [u32; 3]) -> Option<UniformGeometry> {
        (0..3)
            .all(|d| group[d] > 0 && threads[d].is_multiple_of(group[d]))
            .then_some(UniformGeometry { threads, group })
    }
}

/// Writes the kernel function (the prelude and data objects come before it). With a
/// `geometry`, the kernel's positions and sizes are built from it as constants, so that
/// nvcc folds them (the launch must then have that geometry); without one, they are
/// computed from the `MsGeom` argument, edge threadgroups included.
pub fn emit_function(
    module: &Module,
    f: &Function,
    max_threads: u32,
    geometry: Option<UniformGeometry>,
    out: &mut String,
) -> Result<(), EmitError> {
    let mut e = Emitter {
        module,
        f,
        cfg: Cfg::new(f),
        out: String::new(),
    };
    e.signature(max_threads, geometry.is_some());
    match geometry {
        Some(g) => e.uniform_entry(g),
        None => e.entry(),
    }
    e.declarations();
    let uniform = e.uniform_blocks();
    for b in f.block_ids() {
        e.block(b, uniform[b.index()])?;
    }
    e.out.push_str("}\n");
    out.push_str(&e.out);
    Ok(())
}

struct Emitter<'a> {
    module: &'a Module,
    f: &'a Function,
    cfg: Cfg,
    out: String,
}

fn v(x: Value) -> String {
    format!("v{}", x.0)
}

impl Emitter<'_> {
    /// The kernel's signature and its memory; `fixed`: the geometry is built in, so the
    /// `MsGeom` argument goes unread.
    fn signature(&mut self, max_threads: u32, fixed: bool) {
        let f = self.f;
        let geom = if fixed { "ms_geom_arg" } else { "ms_geom" };
        let mut params = vec![format!("MsGeom {geom}")];
        for n in threadgroup_indices(f) {
            params.push(format!("uint32_t ms_tgp_off{n}"));
        }
        for n in buffer_indices(f) {
            params.push(format!("unsigned char* ms_buf{n}"));
        }
        let _ = writeln!(
            self.out,
            "// kernel `{}`\nextern \"C\" __global__ void __launch_bounds__({max_threads}) {}({}) {{",
            f.name,
            cuda_name(f),
            params.join(", ")
        );
        self.out
            .push_str("    extern __shared__ __align__(16) unsigned char ms_tg[];\n");
        for (n, a) in f.threadgroup_allocs.iter().enumerate() {
            let _ = writeln!(
                self.out,
                "    __shared__ __align__({}) unsigned char ms_tga{n}[{}]; // {}",
                a.align.clamp(1, 16).next_power_of_two(),
                a.size.max(1),
                a.name
            );
        }
        for (n, a) in f.locals.iter().enumerate() {
            let _ = writeln!(
                self.out,
                "    __align__({}) unsigned char ms_loc{n}[{}]; // {}",
                a.align.clamp(1, 16).next_power_of_two(),
                a.size.max(1),
                a.name
            );
        }
    }

    /// [`entry`](Self::entry) for a launch whose every threadgroup is whole, with its
    /// geometry as constants: no thread is missing, and positions divide by constants.
    fn uniform_entry(&mut self, g: UniformGeometry) {
        let ([t0, t1, t2], [g0, g1, g2]) = (g.threads, g.group);
        // In 64 bits: a spec's sizes are checked against a GPU's limits elsewhere.
        let n = g0 as u64 * g1 as u64 * g2 as u64;
        // The block has exactly `n` threads, so `ms_t < n`.
        let local = [
            if g0 as u64 == n {
                "ms_t".to_string()
            } else {
                format!("ms_t % {g0}u")
            },
            match (g1, g2) {
                (1, _) => "0u".to_string(),
                (_, 1) => format!("ms_t / {g0}u"),
                _ => format!("(ms_t / {g0}u) % {g1}u"),
            },
            if g2 == 1 {
                "0u".to_string()
            } else {
                format!("ms_t / {}u", g0 as u64 * g1 as u64)
            },
        ];
        let lanes = if n.is_multiple_of(32) {
            "32u"
        } else {
            "ms_threads - ms_warp * 32u < 32u ? ms_threads - ms_warp * 32u : 32u"
        };
        let _ = write!(
            self.out,
            r#"    // Built for a grid of {t0} x {t1} x {t2} threads in whole threadgroups of {g0} x {g1} x {g2}.
    const MsGeom ms_geom = {{{{{t0}u, {t1}u, {t2}u}}, {{{g0}u, {g1}u, {g2}u}}}};
    (void)ms_geom_arg;
    const uint32_t ms_t = threadIdx.x;
    const uint32_t ms_gp[3] = {{blockIdx.x, blockIdx.y, blockIdx.z}};
    const uint32_t ms_size[3] = {{{g0}u, {g1}u, {g2}u}};
    const uint32_t ms_threads = {n}u;
    const uint32_t ms_local[3] = {{{l0}, {l1}, {l2}}};
    const uint32_t ms_group_threads = {n}u;
    const uint32_t ms_warp = ms_t / 32u;
    const uint32_t ms_warp_lanes = {lanes};
    const unsigned ms_exist = ms_warp_lanes == 32u ? 0xffffffffu : ((1u << ms_warp_lanes) - 1u);
    (void)ms_geom; (void)ms_size; (void)ms_local; (void)ms_group_threads; (void)ms_exist;
"#,
            l0 = local[0],
            l1 = local[1],
            l2 = local[2],
        );
    }

    /// The thread's coordinates with Metal's meaning; missing threads of an edge
    /// threadgroup return here, before any barrier.
    fn entry(&mut self) {
        self.out.push_str(
            r#"    const uint32_t ms_t = threadIdx.x;
    const uint32_t ms_gp[3] = {blockIdx.x, blockIdx.y, blockIdx.z};
    uint32_t ms_size[3];
    for (int d = 0; d < 3; ++d) {
        uint32_t start = ms_gp[d] * ms_geom.group[d];
        uint32_t left = ms_geom.threads[d] - (start < ms_geom.threads[d] ? start : ms_geom.threads[d]);
        ms_size[d] = left < ms_geom.group[d] ? left : ms_geom.group[d];
    }
    const uint32_t ms_threads = ms_size[0] * ms_size[1] * ms_size[2];
    if (ms_t >= ms_threads) return;
    const uint32_t ms_local[3] = {ms_t % ms_size[0], (ms_t / ms_size[0]) % ms_size[1], ms_t / (ms_size[0] * ms_size[1])};
    const uint32_t ms_group_threads = ms_geom.group[0] * ms_geom.group[1] * ms_geom.group[2];
    const uint32_t ms_warp = ms_t / 32u;
    const uint32_t ms_warp_lanes = ms_threads - ms_warp * 32u < 32u ? ms_threads - ms_warp * 32u : 32u;
    const unsigned ms_exist = ms_warp_lanes == 32u ? 0xffffffffu : ((1u << ms_warp_lanes) - 1u);
    (void)ms_local; (void)ms_group_threads; (void)ms_exist;
"#,
        );
    }

    fn declarations(&mut self) {
        let f = self.f;
        let mut defined = vec![false; f.value_types.len()];
        for b in f.block_ids() {
            let bd = f.block(b);
            for &p in &bd.params {
                defined[p.index()] = true;
            }
            for &i in &bd.insts {
                for &r in &f.inst(i).results {
                    defined[r.index()] = true;
                }
            }
        }
        for ty in Type::ALL {
            let names: Vec<String> = defined
                .iter()
                .enumerate()
                .filter(|&(i, &d)| d && f.value_types[i] == ty)
                .map(|(i, _)| format!("v{i}"))
                .collect();
            for chunk in names.chunks(16) {
                let _ = writeln!(self.out, "    {} {};", c_type(ty), chunk.join(", "));
            }
        }
    }

    /// Blocks every thread runs exactly once (on the entry's chain of post-dominators
    /// and in no loop): there the active SIMD-group lanes are all the lanes that exist.
    /// Elsewhere SIMD-group operations take the lanes converged at that point.
    fn uniform_blocks(&self) -> Vec<bool> {
        let n = self.f.blocks.len();
        let mut uniform = vec![false; n];
        let mut b = Some(self.f.entry());
        while let Some(x) = b {
            if uniform[x.index()] {
                break;
            }
            uniform[x.index()] = true;
            b = self.cfg.immediate_post_dominator(x);
        }
        for (i, u) in uniform.iter_mut().enumerate() {
            if *u && self.in_cycle(Block(i as u32)) {
                *u = false;
            }
        }
        uniform
    }

    fn in_cycle(&self, b: Block) -> bool {
        let mut seen = vec![false; self.f.blocks.len()];
        let mut stack: Vec<Block> = self.cfg.successors(b).to_vec();
        while let Some(x) = stack.pop() {
            if x == b {
                return true;
            }
            if !std::mem::replace(&mut seen[x.index()], true) {
                stack.extend_from_slice(self.cfg.successors(x));
            }
        }
        false
    }

    fn block(&mut self, b: Block, uniform: bool) -> Result<(), EmitError> {
        let f = self.f;
        let bd = f.block(b);
        let _ = writeln!(self.out, "{b}:;");
        let mask = if uniform {
            "ms_exist"
        } else {
            "__activemask()"
        };
        let mut needs_mask = false;
        for &i in &bd.insts {
            let d = f.inst(i);
            if d.op.is_cross_lane() || matches!(d.op, Op::Barrier(BarrierScope::Simdgroup, _)) {
                needs_mask = true;
            }
        }
        if needs_mask {
            let _ = writeln!(
                self.out,
                "    {{ const unsigned ms_mask = {mask}; (void)ms_mask;"
            );
        }
        let mut last_line = 0;
        for &i in &bd.insts {
            let loc = f.inst_locs.get(i.index()).copied().unwrap_or_default();
            if loc.is_known() && loc.line != last_line {
                last_line = loc.line;
                let _ = writeln!(self.out, "    // {}", self.module.describe_loc(loc));
            }
            let d = f.inst(i);
            let line = self.inst(d).map_err(|what| EmitError::Unsupported {
                kernel: f.name.clone(),
                location: self.module.describe_loc(loc),
                what,
            })?;
            let _ = writeln!(self.out, "    {line}");
        }
        if needs_mask {
            self.out.push_str("    }\n");
        }
        match &bd.term {
            Terminator::Br(t, args) => {
                let copy = self.edge(*t, args);
                let _ = writeln!(self.out, "    {copy}goto {t};");
            }
            Terminator::BrIf { cond, then_, else_ } => {
                let c1 = self.edge(then_.0, &then_.1);
                let c2 = self.edge(else_.0, &else_.1);
                let _ = writeln!(
                    self.out,
                    "    if ({}) {{ {c1}goto {}; }} else {{ {c2}goto {}; }}",
                    v(*cond),
                    then_.0,
                    else_.0
                );
            }
            Terminator::Ret => self.out.push_str("    return;\n"),
        }
        Ok(())
    }

    /// Block-parameter assignments for an edge, through temporaries so that every
    /// argument is read before any parameter is written.
    fn edge(&self, target: Block, args: &[Value]) -> String {
        let params = &self.f.block(target).params;
        if args.is_empty() {
            return String::new();
        }
        let mut s = String::from("{ ");
        for (k, a) in args.iter().enumerate() {
            let ty = c_type(self.f.value_type(*a));
            let _ = write!(s, "{ty} ms_e{k} = {}; ", v(*a));
        }
        for (k, p) in params.iter().enumerate() {
            let _ = write!(s, "{} = ms_e{k}; ", v(*p));
        }
        s.push_str("} ");
        s
    }

    /// A pointer expression of type `T*` for an address in a space. Threadgroup
    /// addresses are rebased on the shared-memory symbol so that the compiler emits
    /// shared-memory instructions rather than generic ones.
    fn ptr(space: Space, elem: &str, addr: &str) -> String {
        match space {
            Space::Threadgroup => {
                format!("(({elem}*)(ms_tg + ((uint64_t)({addr}) - (uint64_t)ms_tg)))")
            }
            _ => format!("(({elem}*)({addr}))"),
        }
    }

    fn inst(&self, d: &InstData) -> Result<String, String> {
        let f = self.f;
        let ty = d.ty;
        let t = c_type(ty);
        let a: Vec<String> = d.args.iter().map(|x| v(*x)).collect();
        let arg_ty = |k: usize| f.value_type(d.args[k]);
        let res = |k: usize| v(d.results[k]);
        let float = ty.is_float();
        let unsupported = |what: &str| Err(format!("{what} on {ty}"));
        let assign = |e: String| Ok(format!("{} = {e};", res(0)));
        match d.op {
            Op::Const(bits) => assign(literal(ty, bits)),
            Op::Add | Op::Sub | Op::Mul | Op::Div => {
                let (sym, helper) = match d.op {
                    Op::Add => ("+", "ms_iadd"),
                    Op::Sub => ("-", "ms_isub"),
                    Op::Mul => ("*", "ms_imul"),
                    _ => ("/", "ms_idiv"),
                };
                if float {
                    assign(format!("{} {sym} {}", a[0], a[1]))
                } else if ty == Type::Pred {
                    unsupported("arithmetic")
                } else {
                    assign(format!("{helper}({}, {})", a[0], a[1]))
                }
            }
            Op::Rem => {
                if ty.is_int() {
                    assign(format!("ms_irem({}, {})", a[0], a[1]))
                } else {
                    unsupported("rem")
                }
            }
            Op::Neg => assign(if float {
                format!("-{}", a[0])
            } else {
                format!("ms_ineg({})", a[0])
            }),
            Op::Abs => assign(if float {
                format!("ms_fabs({})", a[0])
            } else {
                format!("ms_iabs({})", a[0])
            }),
            Op::Min | Op::Max => {
                let (fname, cmp) = if d.op == Op::Min {
                    ("ms_fmin", "<")
                } else {
                    ("ms_fmax", ">")
                };
                assign(if float {
                    format!("{fname}({}, {})", a[0], a[1])
                } else {
                    format!("({0} {cmp} {1} ? {0} : {1})", a[0], a[1])
                })
            }
            Op::Fma => assign(if float {
                format!("ms_fma({}, {}, {})", a[0], a[1], a[2])
            } else {
                format!("ms_ifma({}, {}, {})", a[0], a[1], a[2])
            }),
            Op::And | Op::Or | Op::Xor => {
                if ty == Type::Pred {
                    let sym = match d.op {
                        Op::And => "&&",
                        Op::Or => "||",
                        _ => "!=",
                    };
                    assign(format!("({} {sym} {})", a[0], a[1]))
                } else if ty.is_int() {
                    let sym = match d.op {
                        Op::And => "&",
                        Op::Or => "|",
                        _ => "^",
                    };
                    assign(format!("({t})({} {sym} {})", a[0], a[1]))
                } else {
                    unsupported("bitwise operation")
                }
            }
            Op::Not => match ty {
                Type::Pred => assign(format!("!{}", a[0])),
                _ if ty.is_int() => assign(format!("({t})~{}", a[0])),
                _ => unsupported("not"),
            },
            Op::Shl | Op::Shr | Op::Clz | Op::Ctz | Op::Popcount | Op::MulHi => {
                if !ty.is_int() {
                    return unsupported("integer operation");
                }
                let name = match d.op {
                    Op::Shl => "ms_shl",
                    Op::Shr => "ms_shr",
                    Op::Clz => "ms_clz",
                    Op::Ctz => "ms_ctz",
                    Op::Popcount => "ms_popcount",
                    _ => "ms_mulhi",
                };
                if d.op.arity() == 2 {
                    assign(format!("{name}<{t}>({}, ({t}){})", a[0], a[1]))
                } else {
                    assign(format!("{name}<{t}>({})", a[0]))
                }
            }
            Op::Math(m) => self
                .math(m, ty, &a, true)
                .map(|e| format!("{} = {e};", res(0))),
            Op::PreciseMath(m) => self
                .math(m, ty, &a, false)
                .map(|e| format!("{} = {e};", res(0))),
            Op::Int(fun) => {
                let name = match fun {
                    IntFn::AddSat => "ms_addsat",
                    IntFn::SubSat => "ms_subsat",
                    IntFn::MadSat => "ms_madsat",
                    IntFn::HAdd => "ms_hadd",
                    IntFn::RHAdd => "ms_rhadd",
                    IntFn::Rotate => "ms_rotate",
                    IntFn::ReverseBits => "ms_reverse_bits",
                    IntFn::ExtractBits => "ms_extract_bits",
                    IntFn::InsertBits => "ms_insert_bits",
                };
                assign(format!("{name}<{t}>({})", a.join(", ")))
            }
            Op::Cmp(c) => {
                let oty = arg_ty(0);
                let sym = match c {
                    CmpCond::Eq => "==",
                    CmpCond::Ne => "!=",
                    CmpCond::Lt => "<",
                    CmpCond::Le => "<=",
                    CmpCond::Gt => ">",
                    CmpCond::Ge => ">=",
                };
                if oty.is_float() && c == CmpCond::Ne {
                    // Unordered: true when either side is NaN.
                    assign(format!("!({} == {})", a[0], a[1]))
                } else {
                    assign(format!("({} {sym} {})", a[0], a[1]))
                }
            }
            Op::Select => assign(format!("({} ? {} : {})", a[0], a[1], a[2])),
            Op::Cvt { from, sat } => assign(convert(from, ty, sat, &a[0])),
            Op::Bitcast { from } => {
                if from == ty {
                    assign(a[0].clone())
                } else {
                    assign(format!("ms_bitcast<{t}>({})", a[0]))
                }
            }
            Op::PtrAdd { scale } => {
                // Pointer arithmetic on an element of the scale's size, rather than on
                // integers: nvcc then forms the address with one wide multiply-add
                // (`IMAD.WIDE`), as the ISA's one `ptradd`, where a 64-bit integer add
                // takes two instructions and a carry (docs/validation.md, "SIMD
                // efficiency").
                let ity = arg_ty(1);
                let index = if ity.is_signed() {
                    format!("(int64_t){}", a[1])
                } else {
                    format!("(uint64_t){}", a[1])
                };
                let element = match scale {
                    1 => Some("uint8_t"),
                    2 => Some("uint16_t"),
                    4 => Some("uint32_t"),
                    8 => Some("uint64_t"),
                    16 => Some("uint4"),
                    _ => None,
                };
                assign(match element {
                    Some(e) => format!("(uint64_t)(({e}*){} + {index})", a[0]),
                    None => format!("(uint64_t)((uint8_t*){} + {index} * {scale})", a[0]),
                })
            }
            Op::Load(space) => assign(load(space, ty, &a[0], 0)),
            Op::Store(space) => Ok(store(space, ty, &a[0], 0, &a[1])),
            Op::LoadVec(space, n) => Ok(match vector_word(ty, n) {
                Some(w) => {
                    let p = Self::ptr(space, w, &a[0]);
                    let parts: String = (0..n as usize)
                        .map(|k| {
                            format!(
                                " memcpy(&{}, (const char*)&ms_w + {}, {});",
                                res(k),
                                k as u32 * ty.bytes(),
                                ty.bytes()
                            )
                        })
                        .collect();
                    format!("{{ const {w} ms_w = *{p};{parts} }}")
                }
                None => (0..n as usize)
                    .map(|k| format!("{} = {};", res(k), load(space, ty, &a[0], k)))
                    .collect::<Vec<_>>()
                    .join(" "),
            }),
            Op::StoreVec(space, n) => Ok(match vector_word(ty, n) {
                Some(w) => {
                    let p = Self::ptr(space, w, &a[0]);
                    let parts: String = (0..n as usize)
                        .map(|k| {
                            format!(
                                " memcpy((char*)&ms_w + {}, &{}, {});",
                                k as u32 * ty.bytes(),
                                a[k + 1],
                                ty.bytes()
                            )
                        })
                        .collect();
                    format!("{{ {w} ms_w;{parts} *{p} = ms_w; }}")
                }
                None => (0..n as usize)
                    .map(|k| store(space, ty, &a[0], k, &a[k + 1]))
                    .collect::<Vec<_>>()
                    .join(" "),
            }),
            Op::Atomic(op, space) => {
                let p = Self::ptr(space, memory_type(ty), &a[0]);
                let call = match op {
                    AtomicOp::Load => format!("ms_atomic_load({p})"),
                    AtomicOp::Store => return Ok(format!("ms_atomic_store({p}, {});", a[1])),
                    AtomicOp::Exchange => format!("ms_atomic_xchg({p}, {})", a[1]),
                    AtomicOp::CmpXchg => format!("ms_atomic_cmpxchg({p}, {}, {})", a[1], a[2]),
                    AtomicOp::Add => format!("ms_atomic_add({p}, {})", a[1]),
                    AtomicOp::Sub => format!("ms_atomic_sub({p}, {})", a[1]),
                    AtomicOp::Min => format!("ms_atomic_min({p}, {})", a[1]),
                    AtomicOp::Max => format!("ms_atomic_max({p}, {})", a[1]),
                    AtomicOp::And => format!("ms_atomic_and({p}, {})", a[1]),
                    AtomicOp::Or => format!("ms_atomic_or({p}, {})", a[1]),
                    AtomicOp::Xor => format!("ms_atomic_xor({p}, {})", a[1]),
                };
                if ty == Type::Pred {
                    return unsupported("atomic");
                }
                assign(call)
            }
            Op::Barrier(BarrierScope::Threadgroup, _) => Ok("__syncthreads();".into()),
            Op::Barrier(BarrierScope::Simdgroup, _) => Ok("__syncwarp(ms_mask);".into()),
            Op::Simd(s) => simd(s, ty, &a, 32).map(|e| format!("{} = {e};", res(0))),
            Op::Quad(s) => simd(s, ty, &a, 4).map(|e| format!("{} = {e};", res(0))),
            Op::Sreg(r) => assign(sreg(r)),
            Op::BufferAddr(n) => assign(format!("(uint64_t)ms_buf{n}")),
            Op::ThreadgroupParamAddr(n) => assign(format!("(uint64_t)(ms_tg + ms_tgp_off{n})")),
            Op::ThreadgroupAddr(n) => assign(format!("(uint64_t)ms_tga{n}")),
            Op::LocalAddr(n) => assign(format!("(uint64_t)ms_loc{n}")),
            Op::DataAddr(n) => assign(format!("(uint64_t)ms_data{n}")),
            Op::MatrixLoad(space, transposed) => {
                if !float {
                    return unsupported("matrix load");
                }
                let p = Self::ptr(space, t, &a[0]);
                Ok(format!(
                    "{{ uint32_t r, c; for (uint32_t k = 0; k < 2; ++k) {{ ms_matrix_element(ms_lane(), k, r, c); {t} x = {p}[{} ? (uint64_t)c * {} + r : (uint64_t)r * {} + c]; if (k == 0) {} = x; else {} = x; }} }}",
                    transposed,
                    a[1],
                    a[1],
                    res(0),
                    res(1)
                ))
            }
            Op::MatrixStore(space, transposed) => {
                if !float {
                    return unsupported("matrix store");
                }
                let p = Self::ptr(space, t, &a[0]);
                Ok(format!(
                    "{{ uint32_t r, c; for (uint32_t k = 0; k < 2; ++k) {{ ms_matrix_element(ms_lane(), k, r, c); {p}[{} ? (uint64_t)c * {} + r : (uint64_t)r * {} + c] = k == 0 ? {} : {}; }} }}",
                    transposed, a[1], a[1], a[2], a[3]
                ))
            }
            Op::MatrixMac => {
                if !float {
                    return unsupported("matrix multiply-accumulate");
                }
                Ok(format!(
                    "ms_matrix_mac<{t}>(ms_mask, {}, {}, {}, {}, {}, {}, {}, {});",
                    a[0],
                    a[1],
                    a[2],
                    a[3],
                    a[4],
                    a[5],
                    res(0),
                    res(1)
                ))
            }
        }
    }

    fn math(&self, m: MathFn, ty: Type, a: &[String], fast: bool) -> Result<String, String> {
        if !ty.is_float() {
            return Err(format!("{} on {ty}", m.name()));
        }
        // CUDA's f32 function, fast-math variants where CUDA has an intrinsic (Metal's
        // default math is its fast variant).
        let f = match m {
            MathFn::Floor => "floorf",
            MathFn::Ceil => "ceilf",
            MathFn::Trunc => "truncf",
            MathFn::Round => "roundf",
            MathFn::Rint => "rintf",
            MathFn::Sqrt => "sqrtf",
            MathFn::Rsqrt => "rsqrtf",
            MathFn::Rcp => "ms_rcp",
            MathFn::Exp if fast => "__expf",
            MathFn::Exp => "expf",
            MathFn::Exp2 => "exp2f",
            MathFn::Log if fast => "__logf",
            MathFn::Log => "logf",
            MathFn::Log2 if fast => "__log2f",
            MathFn::Log2 => "log2f",
            MathFn::Sin => "sinf",
            MathFn::Cos => "cosf",
            MathFn::Tan => "tanf",
            MathFn::Pow => "powf",
            MathFn::Asin => "asinf",
            MathFn::Acos => "acosf",
            MathFn::Atan => "atanf",
            MathFn::Atan2 => "atan2f",
            MathFn::Sinh => "sinhf",
            MathFn::Cosh => "coshf",
            MathFn::Tanh => "tanhf",
            MathFn::Asinh => "asinhf",
            MathFn::Acosh => "acoshf",
            MathFn::Atanh => "atanhf",
            MathFn::Sinpi => "sinpif",
            MathFn::Cospi => "cospif",
            MathFn::Tanpi => "ms_tanpi",
            MathFn::Exp10 if fast => "__exp10f",
            MathFn::Exp10 => "exp10f",
            MathFn::Log10 if fast => "__log10f",
            MathFn::Log10 => "log10f",
            MathFn::Fmod => "fmodf",
            MathFn::Ldexp => "ms_ldexp",
        };
        let t = c_type(ty);
        let args: Vec<String> = a
            .iter()
            .enumerate()
            .map(|(k, x)| {
                if m == MathFn::Ldexp && k == 1 {
                    format!("(int32_t){x}")
                } else if ty == Type::F32 {
                    x.clone()
                } else {
                    format!("ms_to_f32({x})")
                }
            })
            .collect();
        let call = format!("{f}({})", args.join(", "));
        Ok(if ty == Type::F32 {
            call
        } else {
            format!("ms_from_f32<{t}>({call})")
        })
    }
}

/// The CUDA type that moves a whole vector access of `n` elements of `ty` in one memory
/// instruction (`uint4` for a `float4`), or `None` where the access stays per element: a
/// predicate vector, or three elements (PTX has no 3-element vector access, and a wider
/// one would touch the fourth element, which a store must leave alone). The address is
/// aligned to the whole vector, as MSL's non-packed vector types are, which CUDA's vector
/// types need.
fn vector_word(ty: Type, n: u8) -> Option<&'static str> {
    if ty == Type::Pred || n == 3 {
        return None;
    }
    match ty.bytes() * n as u32 {
        2 => Some("uint16_t"),
        4 => Some("uint32_t"),
        8 => Some("uint2"),
        16 => Some("uint4"),
        _ => None,
    }
}

fn load(space: Space, ty: Type, addr: &str, k: usize) -> String {
    let m = memory_type(ty);
    let p = Emitter::ptr(space, m, addr);
    if ty == Type::Pred {
        format!("({p}[{k}] != 0)")
    } else {
        format!("{p}[{k}]")
    }
}

fn store(space: Space, ty: Type, addr: &str, k: usize, val: &str) -> String {
    let m = memory_type(ty);
    let p = Emitter::ptr(space, m, addr);
    if ty == Type::Pred {
        format!("{p}[{k}] = (uint8_t)({val} ? 1 : 0);")
    } else {
        format!("{p}[{k}] = {val};")
    }
}

fn convert(from: Type, to: Type, sat: bool, x: &str) -> String {
    let t = c_type(to);
    let f = c_type(from);
    match (from.is_float(), to.is_float()) {
        (true, true) if from == to => x.to_string(),
        (true, true) => format!("ms_from_f32<{t}>(ms_to_f32({x}))"),
        (true, false) if to == Type::Pred => format!("(ms_to_f32({x}) != 0.0f)"),
        (true, false) => format!("ms_f2i<{t}>(ms_to_f32({x}))"),
        (false, true) if from == Type::Pred => format!("ms_from_f32<{t}>({x} ? 1.0f : 0.0f)"),
        (false, true) if to == Type::F32 => format!("(float){x}"),
        (false, true) => format!("ms_i2f<{t}, {f}>({x})"),
        (false, false) if to == Type::Pred => format!("({x} != 0)"),
        (false, false) if sat && from != Type::Pred => format!("ms_i2i_sat<{t}, {f}>({x})"),
        (false, false) => format!("({t}){x}"),
    }
}

fn simd(s: SimdOp, ty: Type, a: &[String], width: u32) -> Result<String, String> {
    let t = c_type(ty);
    let w = width;
    let m = "ms_mask";
    Ok(match s {
        SimdOp::Shuffle | SimdOp::Broadcast => {
            let src = if w == 32 {
                format!("(uint32_t){}", a[1])
            } else {
                format!("((ms_lane() & ~3u) + ((uint32_t){} & 3u))", a[1])
            };
            format!("ms_shfl({m}, {}, {src})", a[0])
        }
        SimdOp::ShuffleUp => format!("ms_shfl_up({m}, {}, (uint32_t){}, {w})", a[0], a[1]),
        SimdOp::ShuffleDown => format!("ms_shfl_down({m}, {}, (uint32_t){}, {w})", a[0], a[1]),
        SimdOp::ShuffleXor => format!("ms_shfl_xor({m}, {}, (uint32_t){}, {w})", a[0], a[1]),
        SimdOp::ShuffleRotateUp => format!(
            "ms_shfl({m}, {}, ms_rotate_src((uint32_t){}, true, {w}))",
            a[0], a[1]
        ),
        SimdOp::ShuffleRotateDown => format!(
            "ms_shfl({m}, {}, ms_rotate_src((uint32_t){}, false, {w}))",
            a[0], a[1]
        ),
        SimdOp::BroadcastFirst => format!("ms_shfl({m}, {}, ms_first_lane({m}, {w}))", a[0]),
        SimdOp::Sum => format!("ms_reduce<ms_op_sum, {t}>({m}, {}, {w})", a[0]),
        SimdOp::Product => format!("ms_reduce<ms_op_product, {t}>({m}, {}, {w})", a[0]),
        SimdOp::Min => format!("ms_reduce<ms_op_min, {t}>({m}, {}, {w})", a[0]),
        SimdOp::Max => format!("ms_reduce<ms_op_max, {t}>({m}, {}, {w})", a[0]),
        SimdOp::And | SimdOp::Or | SimdOp::Xor if !ty.is_int() && ty != Type::Pred => {
            return Err(format!("simd {} on {ty}", s.name()));
        }
        SimdOp::And => format!("ms_reduce<ms_op_and, {t}>({m}, {}, {w})", a[0]),
        SimdOp::Or => format!("ms_reduce<ms_op_or, {t}>({m}, {}, {w})", a[0]),
        SimdOp::Xor => format!("ms_reduce<ms_op_xor, {t}>({m}, {}, {w})", a[0]),
        SimdOp::PrefixInclusiveSum => {
            format!(
                "ms_scan<ms_op_sum, {t}>({m}, {}, true, ms_zero<{t}>(), {w})",
                a[0]
            )
        }
        SimdOp::PrefixExclusiveSum => {
            format!(
                "ms_scan<ms_op_sum, {t}>({m}, {}, false, ms_zero<{t}>(), {w})",
                a[0]
            )
        }
        SimdOp::PrefixInclusiveProduct => format!(
            "ms_scan<ms_op_product, {t}>({m}, {}, true, ms_one<{t}>(), {w})",
            a[0]
        ),
        SimdOp::PrefixExclusiveProduct => format!(
            "ms_scan<ms_op_product, {t}>({m}, {}, false, ms_one<{t}>(), {w})",
            a[0]
        ),
        SimdOp::Ballot => format!("ms_ballot({m}, {}, {w})", a[0]),
        SimdOp::All => format!("ms_all({m}, {}, {w})", a[0]),
        SimdOp::Any => format!("ms_any({m}, {}, {w})", a[0]),
        SimdOp::IsFirst => format!("(ms_lane() == ms_first_lane({m}, {w}))"),
        SimdOp::ActiveMask => format!("(uint64_t)ms_group_mask({m}, {w})"),
    })
}

fn sreg(r: SpecialReg) -> String {
    use SpecialReg as S;
    let tpg = |d: usize| format!("(ms_gp[{d}] * ms_geom.group[{d}] + ms_local[{d}])");
    match r {
        S::ThreadPositionInGridX => tpg(0),
        S::ThreadPositionInGridY => tpg(1),
        S::ThreadPositionInGridZ => tpg(2),
        S::ThreadPositionInThreadgroupX => "ms_local[0]".into(),
        S::ThreadPositionInThreadgroupY => "ms_local[1]".into(),
        S::ThreadPositionInThreadgroupZ => "ms_local[2]".into(),
        S::ThreadIndexInThreadgroup => "ms_t".into(),
        S::ThreadgroupPositionInGridX => "ms_gp[0]".into(),
        S::ThreadgroupPositionInGridY => "ms_gp[1]".into(),
        S::ThreadgroupPositionInGridZ => "ms_gp[2]".into(),
        S::ThreadsPerGridX => "ms_geom.threads[0]".into(),
        S::ThreadsPerGridY => "ms_geom.threads[1]".into(),
        S::ThreadsPerGridZ => "ms_geom.threads[2]".into(),
        S::ThreadsPerThreadgroupX => "ms_size[0]".into(),
        S::ThreadsPerThreadgroupY => "ms_size[1]".into(),
        S::ThreadsPerThreadgroupZ => "ms_size[2]".into(),
        S::DispatchThreadsPerThreadgroupX => "ms_geom.group[0]".into(),
        S::DispatchThreadsPerThreadgroupY => "ms_geom.group[1]".into(),
        S::DispatchThreadsPerThreadgroupZ => "ms_geom.group[2]".into(),
        S::ThreadgroupsPerGridX => "gridDim.x".into(),
        S::ThreadgroupsPerGridY => "gridDim.y".into(),
        S::ThreadgroupsPerGridZ => "gridDim.z".into(),
        S::ThreadExecutionWidth | S::ThreadsPerSimdgroup => "32u".into(),
        S::ThreadIndexInSimdgroup => "ms_lane()".into(),
        S::SimdgroupIndexInThreadgroup => "ms_warp".into(),
        S::SimdgroupsPerThreadgroup => "((ms_threads + 31u) / 32u)".into(),
        S::DispatchSimdgroupsPerThreadgroup => "((ms_group_threads + 31u) / 32u)".into(),
        S::ThreadIndexInQuadgroup => "(ms_t % 4u)".into(),
        S::QuadgroupIndexInThreadgroup => "(ms_t / 4u)".into(),
        S::QuadgroupsPerThreadgroup => "((ms_threads + 3u) / 4u)".into(),
        S::DispatchQuadgroupsPerThreadgroup => "((ms_group_threads + 3u) / 4u)".into(),
    }
}
