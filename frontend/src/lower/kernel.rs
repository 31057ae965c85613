//! Kernels: where they come from (kernel functions, explicit instantiations of kernel
//! templates, and the template the launch spec instantiates), their signature (buffer and
//! threadgroup bindings, explicit or implicit, and thread-position attributes), and the
//! driver that lowers one kernel's body into an ISA function. Also the check of
//! declarations no kernel used.

use std::collections::HashMap;

use metalsim_isa::{
    Function, KernelParam, Op, ParamKind, Space, SpecialReg, Type, verify_function,
};

use crate::SpecValue;
use crate::ast::{self, ExprKind};
use crate::diag::{Label, Severity};
use crate::lower::call::Arg;
use crate::lower::names::{DeclId, DeclKind, Env, Hit, NsId};
use crate::lower::resolve::Resolved;
use crate::lower::templates::{TArg, param_name};
use crate::lower::types::{Scalar, Ty};
use crate::lower::{Binding, FnLowerer, GlobalValue, Globals, KernelSource, Operand, Place, Val};
use crate::source::Span;

/// A kernel to lower: its definition, the scope it is lowered in (template parameters
/// bound), its host name and where it was asked for.
struct KernelJob<'a> {
    decl: DeclId,
    def: &'a ast::FunctionDef,
    env: Env,
    host_name: String,
    span: Span,
    /// Made from an explicit instantiation (its errors then say which instantiation they
    /// come from).
    instantiated: bool,
}

/// The special registers of a thread-position attribute, one per component, or `None` if
/// the attribute is not one.
fn position_attribute(name: &str) -> Option<&'static [SpecialReg]> {
    use SpecialReg::*;
    Some(match name {
        "thread_position_in_grid" => &[
            ThreadPositionInGridX,
            ThreadPositionInGridY,
            ThreadPositionInGridZ,
        ],
        "thread_position_in_threadgroup" => &[
            ThreadPositionInThreadgroupX,
            ThreadPositionInThreadgroupY,
            ThreadPositionInThreadgroupZ,
        ],
        "threadgroup_position_in_grid" => &[
            ThreadgroupPositionInGridX,
            ThreadgroupPositionInGridY,
            ThreadgroupPositionInGridZ,
        ],
        "threads_per_grid" | "grid_size" | "grid_origin" => {
            &[ThreadsPerGridX, ThreadsPerGridY, ThreadsPerGridZ]
        }
        "threads_per_threadgroup" => &[
            ThreadsPerThreadgroupX,
            ThreadsPerThreadgroupY,
            ThreadsPerThreadgroupZ,
        ],
        "dispatch_threads_per_threadgroup" => &[
            DispatchThreadsPerThreadgroupX,
            DispatchThreadsPerThreadgroupY,
            DispatchThreadsPerThreadgroupZ,
        ],
        "threadgroups_per_grid" => &[
            ThreadgroupsPerGridX,
            ThreadgroupsPerGridY,
            ThreadgroupsPerGridZ,
        ],
        "thread_index_in_threadgroup" => &[ThreadIndexInThreadgroup],
        "thread_execution_width" => &[ThreadExecutionWidth],
        "threads_per_simdgroup" => &[ThreadsPerSimdgroup],
        "thread_index_in_simdgroup" => &[ThreadIndexInSimdgroup],
        "simdgroup_index_in_threadgroup" => &[SimdgroupIndexInThreadgroup],
        "simdgroups_per_threadgroup" => &[SimdgroupsPerThreadgroup],
        "dispatch_simdgroups_per_threadgroup" => &[DispatchSimdgroupsPerThreadgroup],
        "thread_index_in_quadgroup" => &[ThreadIndexInQuadgroup],
        "quadgroup_index_in_threadgroup" => &[QuadgroupIndexInThreadgroup],
        "quadgroups_per_threadgroup" => &[QuadgroupsPerThreadgroup],
        "dispatch_quadgroups_per_threadgroup" => &[DispatchQuadgroupsPerThreadgroup],
        _ => return None,
    })
}

/// The `[[host_name("...")]]` among attributes.
fn host_name(attrs: &[ast::Attribute]) -> Option<String> {
    attrs
        .iter()
        .find(|a| a.name.name == "host_name")
        .and_then(|a| match a.args.as_slice() {
            [
                ast::Expr {
                    kind: ExprKind::StringLit(s),
                    ..
                },
            ] => Some(s.clone()),
            _ => None,
        })
}

/// Lowers every kernel of the program.
pub fn lower_kernels(g: &mut Globals<'_>) -> Vec<Function> {
    let jobs = kernel_jobs(g);
    let mut functions: Vec<Function> = Vec::new();
    for job in jobs {
        let span = job.span;
        let (host, instantiated) = (job.host_name.clone(), job.instantiated);
        let mark = g.diags.len();
        g.limit_hit = false;
        let lowered = lower_kernel(g, job);
        if instantiated {
            for d in &mut g.diags[mark..] {
                if d.severity == Severity::Error && d.span() != Some(span) {
                    d.labels.push(Label {
                        span,
                        message: format!("in kernel `{host}`, instantiated here"),
                    });
                }
            }
        }
        if let Some(f) = lowered {
            if functions.iter().any(|o| o.name == f.name) {
                g.error(format!("two kernels are named `{}`", f.name), span);
            } else {
                functions.push(f);
            }
        }
    }
    functions
}

/// The kernels to lower, in source order, then the one the specialization asks for.
fn kernel_jobs<'a>(g: &mut Globals<'a>) -> Vec<KernelJob<'a>> {
    let mut jobs = Vec::new();
    for src in g.kernel_sources.clone() {
        match src {
            KernelSource::Plain(decl) => {
                let d = g.decl(decl).clone();
                let DeclKind::Function(def) = d.kind else {
                    continue;
                };
                jobs.push(KernelJob {
                    decl,
                    def,
                    env: d.home.clone().unwrap_or_else(|| g.ns_env(NsId(0))),
                    host_name: host_name(&def.attrs).unwrap_or_else(|| def.name.name.clone()),
                    span: def.name.span,
                    instantiated: false,
                });
            }
            KernelSource::Instantiation(inst, env) => {
                if let Some(job) = instantiation_job(g, inst, env) {
                    jobs.push(job);
                }
            }
        }
    }
    if let Some((name, args)) = g.options.kernel_template.clone()
        && (!args.is_empty() || !jobs.iter().any(|j: &KernelJob<'_>| j.host_name == name))
        && let Some(job) = spec_template_job(g, &name, &args)
    {
        jobs.push(job);
    }
    jobs
}

/// `template [[host_name("k_f32")]] [[kernel]] decltype(k<float>) k<float>;`
fn instantiation_job<'a>(
    g: &mut Globals<'a>,
    inst: &'a ast::Instantiation,
    env: Env,
) -> Option<KernelJob<'a>> {
    let mut l = g.scratch(env.clone());
    let span = inst.name.span;
    let Resolved::Overloads(cands) = l.resolve_path(&inst.name, true)? else {
        l.error(
            format!("`{}` is not a function template", inst.name.to_text()),
            span,
        );
        return None;
    };
    let templates: Vec<_> = cands
        .into_iter()
        .filter(|c| l.g.decl(c.decl).tparams.is_some_and(|p| !p.is_empty()))
        .collect();
    let explicit = templates.first()?.targs.clone().unwrap_or_default();
    // With the parameter list written out, it picks the overload; otherwise the
    // template arguments do.
    let mut chosen = None;
    for c in &templates {
        let d = l.g.decl(c.decl).clone();
        let DeclKind::Function(def) = d.kind else {
            continue;
        };
        let home = d.home.clone().unwrap_or_else(|| env.clone());
        let mark = l.g.diags.len();
        let binds = l.bind_template(
            d.tparams.unwrap_or(&[]),
            &explicit,
            &Default::default(),
            &home,
            &d.name,
            span,
        );
        l.g.diags.truncate(mark);
        let Some(binds) = binds else { continue };
        let fenv = home.params(binds);
        if let Some(params) = &inst.params {
            if params.len() != def.params.len() {
                continue;
            }
            let mark = l.g.diags.len();
            let same = params.iter().zip(&def.params).all(|(a, b)| {
                let ta = l.resolve_type(&a.ty).map(|d| d.ty);
                let tb = l
                    .in_env(fenv.clone(), |me| me.resolve_type(&b.ty))
                    .map(|d| d.ty);
                ta.is_some() && ta == tb
            });
            l.g.diags.truncate(mark);
            if !same {
                continue;
            }
        }
        chosen = Some((c.decl, def, fenv));
        break;
    }
    let Some((decl, def, fenv)) = chosen else {
        l.error(
            format!(
                "no kernel template `{}` matches this explicit instantiation",
                inst.name.to_text()
            ),
            span,
        );
        return None;
    };
    let is_kernel = def.specifiers.kernel
        || inst.specifiers.kernel
        || def.attrs.iter().any(|a| a.name.name == "kernel");
    if !is_kernel {
        // An explicit instantiation of a helper template compiles it; nothing to run.
        return None;
    }
    let name = host_name(&inst.attrs).unwrap_or_else(|| {
        let args = match &*fenv.0 {
            crate::lower::names::EnvNode::Params { binds, .. } => {
                binds.iter().map(|(_, a)| a.clone()).collect::<Vec<_>>()
            }
            _ => Vec::new(),
        };
        l.show_specialization(&def.name.name, &args)
    });
    Some(KernelJob {
        decl,
        def,
        env: fenv,
        host_name: name,
        span,
        instantiated: true,
    })
}

/// The kernel template the specialization names, instantiated with its arguments.
fn spec_template_job<'a>(
    g: &mut Globals<'a>,
    name: &str,
    args: &[(String, SpecValue)],
) -> Option<KernelJob<'a>> {
    let global = g.ns_env(NsId(0));
    let Some(Hit::Decls(ds)) = g.lookup(&global, name) else {
        return None;
    };
    let found = ds.into_iter().find_map(|(id, env)| {
        let d = g.decl(id);
        match d.kind {
            DeclKind::Function(f)
                if (f.specifiers.kernel || f.attrs.iter().any(|a| a.name.name == "kernel")) =>
            {
                Some((id, f, d.tparams, d.home.clone().unwrap_or(env)))
            }
            _ => None,
        }
    });
    let (decl, def, tparams, home) = found?;
    let mut l = g.scratch(home.clone());
    let span = def.name.span;
    let Some(tparams) = tparams.filter(|p| !p.is_empty()) else {
        if !args.is_empty() {
            l.error(
                format!("the launch spec gives template arguments, but kernel `{name}` is not a template"),
                span,
            );
        }
        return None;
    };
    let mut deduced = HashMap::new();
    for (i, p) in tparams.iter().enumerate() {
        let pname = param_name(p, i);
        let Some((_, v)) = args.iter().find(|(k, _)| *k == pname) else {
            continue;
        };
        let arg = match v {
            SpecValue::Type(t) => {
                let path = ast::Path::simple(t, span);
                let mark = l.g.diags.len();
                match l.resolve_path(&path, false) {
                    Some(Resolved::Type(ty)) => TArg::Type(ty),
                    Some(Resolved::Enum(e)) => TArg::Type(l.enum_type(e)),
                    _ => {
                        l.g.diags.truncate(mark);
                        l.error(
                            format!("the launch spec's template argument `{pname} = \"{t}\"` is not a type name"),
                            span,
                        );
                        return None;
                    }
                }
            }
            other => match l.spec_value(other, Scalar::Long) {
                Some(c) => TArg::Value(c),
                None => return None,
            },
        };
        deduced.insert(pname, arg);
    }
    for (k, _) in args {
        if !tparams
            .iter()
            .enumerate()
            .any(|(i, p)| param_name(p, i) == *k)
        {
            l.error(
                format!("kernel `{name}` has no template parameter `{k}` (the launch spec's `template` table names it)"),
                span,
            );
            return None;
        }
    }
    let binds = l.bind_template(tparams, &[], &deduced, &home, name, span)?;
    Some(KernelJob {
        decl,
        def,
        env: home.params(binds),
        host_name: name.to_string(),
        span,
        instantiated: false,
    })
}

/// Lowers one kernel to an ISA function; `None` after reporting errors.
fn lower_kernel<'a>(g: &mut Globals<'a>, job: KernelJob<'a>) -> Option<Function> {
    let def = job.def;
    let errors_before = g.diags.iter().filter(|d| d.is_error()).count();
    let body = def.body.as_ref()?;
    g.lowered.insert(job.decl);
    let mut l = FnLowerer::new(g, &job.host_name, job.env.clone());
    match l.resolve_type(&def.ret) {
        Some(d) if d.ty == Ty::Void && !d.is_ref => {}
        Some(_) => l.error("a kernel must return `void`", def.ret.span),
        None => {}
    }
    l.at(def.name.span);
    let params = l.kernel_params(&def.params);
    // bb0 holds the parameter setup (and the values of never-written variables); the body
    // starts in its own block.
    let start = l.s.create_block();
    l.s.br(start);
    l.s.seal(start);
    l.s.switch_to(start);
    l.block(&body.stmts);
    l.at(body.span);
    l.s.set_loc(metalsim_isa::SrcLoc {
        line: l
            .g
            .loc(Span {
                start: body.span.end.saturating_sub(1),
                ..body.span
            })
            .line,
        ..l.g.loc(body.span)
    });
    l.s.ret();
    let FnLowerer {
        g,
        s,
        locals,
        tg_allocs,
        ..
    } = l;
    let mut f = s.finish();
    metalsim_isa::eliminate_dead_code(&mut f);
    f.params = params;
    f.locals = locals;
    f.threadgroup_allocs = tg_allocs;
    let errors_after = g.diags.iter().filter(|d| d.is_error()).count();
    if errors_after > errors_before {
        return None;
    }
    if let Err(e) = verify_function(&f, g.data.len()) {
        g.error(
            format!(
                "internal compiler error (a bug in metalsim): the lowered kernel is invalid: {e}"
            ),
            def.name.span,
        );
        return None;
    }
    Some(f)
}

impl<'a> Globals<'a> {
    /// Checks the declarations no kernel used: non-template structs are laid out,
    /// program-scope constants evaluated and helper functions lowered (into nothing), so
    /// their errors are reported as a compiler would.
    pub fn check_unused(&mut self) {
        for id in self.plain_structs.clone() {
            let d = self.decl(id).clone();
            let home = d.home.clone().unwrap_or_else(|| self.ns_env(NsId(0)));
            let mut l = self.scratch(home.clone());
            l.class_type(id, &home, &[], d.span);
        }
        for id in self.plain_globals.clone() {
            let d = self.decl(id).clone();
            let home = d.home.clone().unwrap_or_else(|| self.ns_env(NsId(0)));
            let mut l = self.scratch(home.clone());
            l.global_value(id, &home, &[], d.span);
        }
        for id in self.helpers.clone() {
            if self.lowered.contains(&id) {
                continue;
            }
            let d = self.decl(id).clone();
            let DeclKind::Function(def) = d.kind else {
                continue;
            };
            let home = d.home.clone().unwrap_or_else(|| self.ns_env(NsId(0)));
            let mut l = self.scratch(home);
            l.check_helper(id, def);
        }
    }
}

impl<'a> FnLowerer<'_, 'a> {
    /// Lowers a helper function nobody calls, with placeholder arguments, to check it.
    fn check_helper(&mut self, decl: DeclId, def: &'a ast::FunctionDef) {
        let mut params = Vec::new();
        for p in &def.params {
            let Some(d) = self.resolve_type(&p.ty) else {
                return;
            };
            params.push(d);
        }
        let ret = if matches!(def.ret.kind, ast::TypeKind::Auto) {
            None
        } else {
            match self.resolve_type(&def.ret) {
                Some(r) => Some(r),
                None => return,
            }
        };
        let mut args: Vec<Arg<'_>> = Vec::new();
        for d in &params {
            if matches!(d.ty, Ty::Void) {
                return;
            }
            let v = self.zero(&d.ty);
            let op = if d.is_ref {
                let p = self.temp(&v, d.is_const);
                Operand::Place {
                    place: p,
                    cached: None,
                }
            } else {
                Operand::Value(v)
            };
            args.push(Arg::Op(op, def.name.span));
        }
        let chosen = crate::lower::call::Chosen {
            decl,
            def,
            env: self.env.clone(),
            params,
            pack: None,
            ret,
            class: None,
        };
        self.inline(chosen, args, None, def.name.span);
    }

    /// Checks a kernel's parameters, binds their names, and returns their host bindings.
    /// A buffer or threadgroup parameter without an attribute gets the lowest index no
    /// other parameter of its kind uses, in order, as Metal assigns them.
    fn kernel_params(&mut self, params: &[ast::Param]) -> Vec<KernelParam> {
        let mut out: Vec<KernelParam> = Vec::new();
        let mut taken: HashMap<ParamKind, Vec<u32>> = HashMap::new();
        for p in params {
            for a in &p.attrs {
                let kind = match a.name.name.as_str() {
                    "buffer" => ParamKind::Buffer,
                    "threadgroup" => ParamKind::Threadgroup,
                    _ => continue,
                };
                if let Some(i) = self.binding_index(a) {
                    taken.entry(kind).or_default().push(i);
                }
            }
        }
        for p in params {
            if let Some(kp) = self.kernel_param(p, &mut taken) {
                if out
                    .iter()
                    .any(|q: &KernelParam| q.kind == kp.kind && q.index == kp.index)
                {
                    let binding = match (kp.texture_index(), kp.sampler_index()) {
                        (_, Some(n)) => format!("sampler({n})"),
                        (Some(n), None) => format!("texture({n})"),
                        (None, None) => format!("{}({})", kp.kind.name(), kp.index),
                    };
                    self.error(
                        format!("another parameter is already bound to {binding}"),
                        p.span,
                    );
                } else {
                    out.push(kp);
                }
            }
        }
        out
    }

    /// The integer argument of a binding attribute (`buffer(3)`).
    pub(super) fn binding_index(&mut self, a: &ast::Attribute) -> Option<u32> {
        let v = match a.args.as_slice() {
            [e] => self.try_const(e),
            _ => None,
        };
        match v {
            Some(c) if !c.ty.is_float() && (0..=30).contains(&c.as_i128()) => {
                Some(c.as_i128() as u32)
            }
            _ => {
                let n = &a.name.name;
                self.error(format!("`[[{n}(n)]]` needs an index from 0 to 30"), a.span);
                None
            }
        }
    }
    /// Checks one kernel parameter, binds its name, and returns its host binding if it has one.
    fn kernel_param(
        &mut self,
        p: &ast::Param,
        taken: &mut HashMap<ParamKind, Vec<u32>>,
    ) -> Option<KernelParam> {
        let d = self.resolve_type(&p.ty)?;
        let name = p.name.as_ref().map(|n| n.name.clone()).unwrap_or_default();
        // `[[function_constant(c)]]`: the parameter exists only when `c` is true.
        if let Some(fc) = p.attrs.iter().find(|a| a.name.name == "function_constant") {
            let present = match fc.args.as_slice() {
                [e] => {
                    self.spec_ok = true;
                    let c = self.try_const(e);
                    self.spec_ok = false;
                    match c {
                        Some(c) => c.as_bool(),
                        None => {
                            self.error(
                                "`[[function_constant(c)]]` on a parameter needs a function constant or a constant expression",
                                fc.span,
                            );
                            return None;
                        }
                    }
                }
                _ => {
                    self.error("`[[function_constant(c)]]` takes one argument", fc.span);
                    return None;
                }
            };
            if !present {
                if !name.is_empty() {
                    let ty = if d.is_ref {
                        Ty::pointer(d.ty.clone(), d.space.unwrap_or(Space::Thread), true)
                    } else {
                        d.ty.clone()
                    };
                    let v = self.zero(&ty);
                    self.bind_value(&name, v, d.is_const && !d.is_ref);
                }
                return None;
            }
        }
        let known: Vec<&ast::Attribute> = p
            .attrs
            .iter()
            .filter(|a| {
                matches!(
                    a.name.name.as_str(),
                    "buffer" | "threadgroup" | "texture" | "sampler"
                ) || position_attribute(&a.name.name).is_some()
            })
            .collect();
        let (kind, index, aname) = match known.first().copied() {
            Some(attr) => {
                let aname = attr.name.name.clone();
                if aname == "texture" {
                    return self.texture_param(p, &d, &name, attr);
                }
                if aname == "sampler" {
                    return self.sampler_param(p, &d, &name, attr);
                }
                if let Some(regs) = position_attribute(&aname) {
                    self.position_param(p, &d, &name, regs, &aname);
                    return None;
                }
                let index = self.binding_index(attr)?;
                let kind = if aname == "buffer" {
                    ParamKind::Buffer
                } else {
                    ParamKind::Threadgroup
                };
                (kind, index, aname)
            }
            None => {
                if let Some(a) = p.attrs.first() {
                    self.error(
                        format!(
                            "`[[{}]]` is not supported on kernel parameters yet",
                            a.name.name
                        ),
                        a.span,
                    );
                    return None;
                }
                // No attribute: a pointer or reference takes the next free index.
                let space = match &d.ty {
                    Ty::Pointer(pt) if !d.is_ref => Some(pt.space),
                    _ if d.is_ref => Some(d.space.unwrap_or(Space::Thread)),
                    _ => None,
                };
                let kind = match space {
                    Some(Space::Device | Space::Constant) => ParamKind::Buffer,
                    Some(Space::Threadgroup) => ParamKind::Threadgroup,
                    _ => {
                        self.error(
                            format!("kernel parameter `{name}` needs an attribute: [[buffer(n)]], [[threadgroup(n)]], [[texture(n)]], [[sampler(n)]] or a thread-position attribute such as [[thread_position_in_grid]]"),
                            p.span,
                        );
                        return None;
                    }
                };
                let used = taken.entry(kind).or_default();
                let index = (0..=30u32).find(|i| !used.contains(i))?;
                used.push(index);
                (kind, index, kind.name().to_string())
            }
        };
        let aname = aname.as_str();
        // The pointee or referent.
        let (elem, space, is_const, is_ref) = match &d.ty {
            Ty::Pointer(pt) if !d.is_ref => (pt.pointee.clone(), pt.space, pt.is_const, false),
            t if d.is_ref => (
                t.clone(),
                d.space.unwrap_or(Space::Thread),
                d.is_const,
                true,
            ),
            _ => {
                self.error(
                    format!(
                        "`[[{aname}({index})]]` parameter `{name}` must be a pointer or a reference"
                    ),
                    p.span,
                );
                return None;
            }
        };
        let allowed = if kind == ParamKind::Buffer {
            matches!(space, Space::Device | Space::Constant)
        } else {
            space == Space::Threadgroup
        };
        if !allowed {
            let want = if kind == ParamKind::Buffer {
                "`device` or `constant`"
            } else {
                "`threadgroup`"
            };
            self.error(
                format!("`[[{aname}({index})]]` parameter `{name}` must point into {want} memory"),
                p.span,
            );
            return None;
        }
        if matches!(elem, Ty::Void | Ty::Pointer(_)) {
            let t = self.show(&elem);
            self.error(format!("a kernel buffer of `{t}` is not supported"), p.span);
            return None;
        }
        let (type_name, atomic, is_struct) = match &elem {
            Ty::Atomic(s) => (format!("atomic_{}", s.name()), true, false),
            Ty::Struct(_) => (self.show(&elem), false, true),
            Ty::Array(..) => (self.show(&elem), false, true),
            other => (self.show(other), false, false),
        };
        let kp = KernelParam {
            kind,
            index,
            name: name.clone(),
            space,
            type_name,
            elem_size: self.g.structs.size(&elem).max(1),
            elem_align: self.g.structs.align(&elem),
            readonly: is_const || space == Space::Constant,
            is_ref,
            atomic,
            is_struct,
        };
        let op = if kind == ParamKind::Buffer {
            Op::BufferAddr(index)
        } else {
            Op::ThreadgroupParamAddr(index)
        };
        let addr = self.s.val(op, Type::U64, &[]);
        if name.is_empty() {
            return Some(kp);
        }

        if is_ref {
            let place = Place::Mem {
                ty: elem.clone(),
                addr,
                offset: 0,
                space,
                is_const: kp.readonly,
            };
            // A small `constant` reference is loaded once, as Apple's compiler keeps such
            // arguments in uniform registers.
            let small = self.g.structs.leaf_count(&elem) <= 16;
            if space == Space::Constant && small && !kp.atomic {
                let span = p.span;
                if let Some(value) = self.load(&place, span) {
                    self.bind(&name, Binding::Cached { place, value });
                    return Some(kp);
                }
            }
            self.bind(&name, Binding::Place(place));
        } else {
            let v = Val {
                ty: d.ty.clone(),
                parts: vec![addr],
            };
            self.bind_value(&name, v, d.is_const);
        }
        Some(kp)
    }

    /// Binds a name to a fresh variable holding `v` (in memory if its address is taken).
    pub(super) fn bind_value(&mut self, name: &str, v: Val, is_const: bool) {
        let place = self.fresh_var(name, &v, is_const);
        self.bind(name, Binding::Place(place));
    }

    /// A thread-position parameter: checks its type and binds it to special registers.
    fn position_param(
        &mut self,
        p: &ast::Param,
        d: &crate::lower::DeclType,
        name: &str,
        regs: &[SpecialReg],
        aname: &str,
    ) {
        let (elem, len) = match &d.ty {
            Ty::Scalar(s) => (*s, 1u8),
            Ty::Vector { elem, len, .. } => (*elem, *len),
            _ => (Scalar::Bool, 0),
        };
        let ok_elem = matches!(elem, Scalar::UInt | Scalar::UShort);
        let ok_len = if regs.len() == 3 {
            (1..=3).contains(&len)
        } else {
            len == 1
        };
        if d.is_ref || !ok_elem || !ok_len {
            let t = self.show(&d.ty);
            let want = if regs.len() == 3 {
                "uint, uint2, uint3, ushort, ushort2 or ushort3"
            } else {
                "uint or ushort"
            };
            self.error(
                format!("`[[{aname}]]` must be declared as {want}, not `{t}`"),
                p.ty.span,
            );
            return;
        }
        if name.is_empty() {
            return;
        }
        let parts = regs[..len as usize]
            .iter()
            .map(|r| {
                // A compute dispatch's grid starts at the origin.
                let v = if aname == "grid_origin" {
                    self.const_u32(0)
                } else {
                    self.s.val(Op::Sreg(*r), Type::U32, &[])
                };
                self.scalar_cvt(v, Scalar::UInt, elem)
            })
            .collect();
        let v = Val {
            ty: Ty::vector(elem, len),
            parts,
        };
        self.bind_value(name, v, d.is_const);
    }

    /// A function constant of vector type: its components from the specialization's array.
    pub fn vector_function_constant(
        &mut self,
        v: &ast::VarDecl,
        name: String,
        ty: Ty,
        elem: Scalar,
        len: u8,
        given: Option<SpecValue>,
    ) -> Option<GlobalValue> {
        let value = match given {
            None => None,
            Some(SpecValue::List(items)) if items.len() == len as usize => {
                let mut cs = Vec::with_capacity(items.len());
                for item in &items {
                    match self.spec_value(item, elem) {
                        Some(c) => cs.push(c),
                        None => {
                            self.error(
                                format!("the components given for function constant `{name}` must be numbers or bools"),
                                v.span,
                            );
                            return None;
                        }
                    }
                }
                Some(cs)
            }
            Some(_) => {
                let t = self.show(&ty);
                self.error(
                    format!("function constant `{name}` is a `{t}`: give its {len} components as an array in the launch spec (`{name} = [...]`)"),
                    v.span,
                );
                return None;
            }
        };
        Some(GlobalValue::SpecVector { name, value, ty })
    }
}

#[cfg(test)]
mod tests {
    use crate::{CompileOptions, SourceMap, SpecValue, Specialization};

    /// Compiles `src` with these function constant values; the rendered diagnostics on
    /// failure.
    fn check(src: &str, constants: &[(&str, SpecValue)]) -> Result<(), String> {
        let mut sources = SourceMap::new();
        let id = sources.add("t.metal", None, src);
        let options = CompileOptions {
            specialization: Specialization {
                function_constants: Some(
                    constants
                        .iter()
                        .map(|(k, v)| (k.to_string(), v.clone()))
                        .collect(),
                ),
                kernel_template: None,
            },
            ..Default::default()
        };
        let (m, diags) = crate::compile(&mut sources, id, &options);
        match m {
            Some(_) if !crate::has_errors(&diags) => Ok(()),
            _ => Err(crate::render_short(&diags, &sources)),
        }
    }

    #[test]
    fn vector_function_constants_take_their_components_from_an_array() {
        let src = "#include <metal_stdlib>\nusing namespace metal;\n\
                   constant float3 w [[function_constant(0)]];\n\
                   kernel void k(device float* out [[buffer(0)]]) { out[0] = dot(w, float3(1)); }\n";
        let nums = |xs: &[f64]| SpecValue::List(xs.iter().map(|x| SpecValue::Float(*x)).collect());
        check(src, &[("w", nums(&[1.0, 2.0, 3.0]))]).unwrap();
        check(src, &[("0", nums(&[1.0, 2.0, 3.0]))]).unwrap();
        for bad in [nums(&[1.0, 2.0]), SpecValue::Float(1.0)] {
            let err = check(src, &[("w", bad)]).unwrap_err();
            assert!(
                err.contains("function constant `w` is a `float3`: give its 3 components"),
                "{err}"
            );
        }
        let err = check(
            src,
            &[(
                "w",
                SpecValue::List(vec![SpecValue::Type("float".into()); 3]),
            )],
        )
        .unwrap_err();
        assert!(err.contains("must be numbers or bools"), "{err}");
        let err = check(src, &[]).unwrap_err();
        assert!(err.contains("function constant `w` has no value"), "{err}");
    }
}
