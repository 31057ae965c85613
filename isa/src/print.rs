//! The text format, printing side. `parse.rs` reads back exactly what this writes.
//!
//! ```text
//! file 0 "vector_add.metal"
//!
//! kernel vector_add {
//!   param buffer(0) a device readonly type "float" size 4 align 4
//! bb0:
//!   v0 = buffer_addr.0
//!   v1 = sreg.thread_position_in_grid.x
//!   v2 = ptradd.4 v0, v1                 @7:5
//!   v3 = ld.device.f32 v2                @7:12
//!   ret
//! }
//! ```
//! Every instruction is `[vN =] mnemonic[.attributes][.type] operands [@loc]`; the type is
//! left out where the operation implies it.

use std::fmt::{self, Write};

use crate::function::{Function, KernelParam, Module, SrcLoc, Terminator};
use crate::op::Op;
use crate::types::Type;
use crate::{Block, Inst, Value};

/// The mnemonic of an operation without its type suffix (`add`, `cmp.lt`, `ld.device`).
pub(crate) fn mnemonic(op: Op) -> String {
    match op {
        Op::Const(_) => "const".into(),
        Op::Add => "add".into(),
        Op::Sub => "sub".into(),
        Op::Mul => "mul".into(),
        Op::Div => "div".into(),
        Op::Rem => "rem".into(),
        Op::Neg => "neg".into(),
        Op::Abs => "abs".into(),
        Op::Min => "min".into(),
        Op::Max => "max".into(),
        Op::Fma => "fma".into(),
        Op::And => "and".into(),
        Op::Or => "or".into(),
        Op::Xor => "xor".into(),
        Op::Not => "not".into(),
        Op::Shl => "shl".into(),
        Op::Shr => "shr".into(),
        Op::Clz => "clz".into(),
        Op::Ctz => "ctz".into(),
        Op::Popcount => "popcount".into(),
        Op::MulHi => "mulhi".into(),
        Op::Math(f) => f.name().into(),
        Op::PreciseMath(f) => format!("{}.precise", f.name()),
        Op::Int(f) => f.name().into(),
        Op::Cmp(c) => format!("cmp.{}", c.name()),
        Op::Select => "select".into(),
        Op::Cvt { from, sat } => {
            if sat {
                format!("cvt.sat.{from}")
            } else {
                format!("cvt.{from}")
            }
        }
        Op::Bitcast { from } => format!("bitcast.{from}"),
        Op::PtrAdd { scale } => format!("ptradd.{scale}"),
        Op::Load(s) => format!("ld.{}", s.name()),
        Op::Store(s) => format!("st.{}", s.name()),
        Op::Atomic(a, s) => format!("atomic.{}.{}", a.name(), s.name()),
        Op::Barrier(scope, flags) => format!("barrier.{}.{}", scope.name(), flags.to_text()),
        Op::Simd(s) => format!("simd.{}", s.name()),
        Op::Quad(s) => format!("quad.{}", s.name()),
        Op::Sreg(r) => format!("sreg.{}", r.name()),
        Op::BufferAddr(n) => format!("buffer_addr.{n}"),
        Op::ThreadgroupParamAddr(n) => format!("tg_param_addr.{n}"),
        Op::ThreadgroupAddr(n) => format!("tg_addr.{n}"),
        Op::LocalAddr(n) => format!("local_addr.{n}"),
        Op::DataAddr(n) => format!("data_addr.{n}"),
        Op::LoadVec(s, n) => format!("ld.{}.x{n}", s.name()),
        Op::StoreVec(s, n) => format!("st.{}.x{n}", s.name()),
        Op::MatrixLoad(s, t) => format!("matrix_load{}.{}", if t { "_t" } else { "" }, s.name()),
        Op::MatrixStore(s, t) => format!("matrix_store{}.{}", if t { "_t" } else { "" }, s.name()),
        Op::MatrixMac => "matrix_mac".into(),
    }
}

/// The text of a constant's bits in a type: decimal integers, `true`/`false`, floats in
/// shortest round-trip decimal when finite, else (and for 16-bit floats) `0x` bits.
pub(crate) fn constant_text(ty: Type, bits: u64) -> String {
    match ty {
        Type::Pred => (if bits & 1 == 1 { "true" } else { "false" }).into(),
        Type::F32 => {
            let f = f32::from_bits(bits as u32);
            if f.is_finite() {
                format!("{f:?}")
            } else {
                format!("{:#x}", bits as u32)
            }
        }
        Type::F16 | Type::BF16 => format!("{:#06x}", bits as u16),
        t if t.is_signed() => {
            let shift = 64 - t.bits();
            (((bits << shift) as i64) >> shift).to_string()
        }
        _ => (bits & ty.mask()).to_string(),
    }
}

fn write_loc(out: &mut String, loc: SrcLoc) {
    if !loc.is_known() {
        return;
    }
    if loc.file == 0 {
        let _ = write!(out, "  @{}:{}", loc.line, loc.col);
    } else {
        let _ = write!(out, "  @{}:{}:{}", loc.file, loc.line, loc.col);
    }
}

fn write_values(out: &mut String, vals: &[Value]) {
    for (i, v) in vals.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "{v}");
    }
}

fn write_target(out: &mut String, block: Block, args: &[Value]) {
    let _ = write!(out, "{block}");
    if !args.is_empty() {
        out.push('(');
        write_values(out, args);
        out.push(')');
    }
}

fn write_param(out: &mut String, p: &KernelParam) {
    let _ = write!(
        out,
        "  param {}({}) {} {}",
        p.kind.name(),
        p.index,
        p.name,
        p.space.name()
    );
    for (flag, name) in [
        (p.readonly, "readonly"),
        (p.is_ref, "ref"),
        (p.atomic, "atomic"),
        (p.is_struct, "struct"),
    ] {
        if flag {
            let _ = write!(out, " {name}");
        }
    }
    let _ = writeln!(
        out,
        " type {:?} size {} align {}",
        p.type_name, p.elem_size, p.elem_align
    );
}

fn write_inst(out: &mut String, f: &Function, i: Inst) {
    let inst = f.inst(i);
    if !inst.results.is_empty() {
        write_values(out, &inst.results);
        out.push_str(" = ");
    }
    out.push_str(&mnemonic(inst.op));
    if inst.op.implied_type().is_none() {
        let _ = write!(out, ".{}", inst.ty);
    }
    if let Op::Const(bits) = inst.op {
        let _ = write!(out, " {}", constant_text(inst.ty, bits));
    }
    if !inst.args.is_empty() {
        out.push(' ');
        write_values(out, &inst.args);
    }
}

fn write_terminator(out: &mut String, term: &Terminator) {
    match term {
        Terminator::Ret => out.push_str("ret"),
        Terminator::Br(t, args) => {
            out.push_str("br ");
            write_target(out, *t, args);
        }
        Terminator::BrIf { cond, then_, else_ } => {
            let _ = write!(out, "br_if {cond}, ");
            write_target(out, then_.0, &then_.1);
            out.push_str(", ");
            write_target(out, else_.0, &else_.1);
        }
    }
}

impl Function {
    /// One instruction in the text format, without indentation or source location
    /// (`v3 = ld.device.f32 v2`).
    pub fn inst_text(&self, i: Inst) -> String {
        let mut out = String::new();
        write_inst(&mut out, self, i);
        out
    }

    /// A block's terminator in the text format, without indentation or source location
    /// (`br_if v6, bb1(v4), bb2`).
    pub fn terminator_text(&self, b: Block) -> String {
        let mut out = String::new();
        write_terminator(&mut out, &self.block(b).term);
        out
    }
}

/// Prints one function in the text format.
pub fn function_text(f: &Function) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "kernel {} {{", f.name);
    for p in &f.params {
        write_param(&mut out, p);
    }
    for (i, a) in f.threadgroup_allocs.iter().enumerate() {
        let _ = writeln!(
            out,
            "  tgalloc {i} size {} align {} {:?}",
            a.size, a.align, a.name
        );
    }
    for (i, a) in f.locals.iter().enumerate() {
        let _ = writeln!(
            out,
            "  local {i} size {} align {} {:?}",
            a.size, a.align, a.name
        );
    }
    for b in f.block_ids() {
        let data = f.block(b);
        let _ = write!(out, "{b}");
        if !data.params.is_empty() {
            out.push('(');
            for (i, v) in data.params.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                let _ = write!(out, "{v}:{}", f.value_type(*v));
            }
            out.push(')');
        }
        out.push_str(":\n");
        for &i in &data.insts {
            let mut line = String::from("  ");
            write_inst(&mut line, f, i);
            write_loc(&mut line, f.inst_locs[i.index()]);
            out.push_str(&line);
            out.push('\n');
        }
        let mut line = String::from("  ");
        write_terminator(&mut line, &data.term);
        write_loc(&mut line, data.term_loc);
        out.push_str(&line);
        out.push('\n');
    }
    out.push_str("}\n");
    out
}

/// Prints a whole module in the text format.
pub fn module_text(m: &Module) -> String {
    let mut out = String::new();
    for (i, f) in m.files.iter().enumerate() {
        let _ = writeln!(out, "file {i} {f:?}");
    }
    for (i, d) in m.data.iter().enumerate() {
        let hex: String = d.bytes.iter().map(|b| format!("{b:02x}")).collect();
        let _ = writeln!(out, "data {i} align {} {:?} x\"{hex}\"", d.align, d.name);
    }
    for f in &m.functions {
        out.push('\n');
        out.push_str(&function_text(f));
    }
    out
}

impl fmt::Display for Function {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&function_text(self))
    }
}

impl fmt::Display for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&module_text(self))
    }
}

#[cfg(test)]
mod tests {
    use crate::parse_module;

    /// Each instruction and terminator of `text`'s first function printed alone must be
    /// its line in the text, without indentation and location.
    fn check(text: &str) {
        let m = parse_module(text).unwrap();
        let f = &m.functions[0];
        let mut lines = text
            .lines()
            .filter(|l| l.starts_with("  ") && !l.trim_start().starts_with("param"))
            .map(|l| l.trim().split("  @").next().unwrap().to_string());
        for b in f.block_ids() {
            for &i in &f.block(b).insts {
                assert_eq!(f.inst_text(i), lines.next().unwrap());
            }
            assert_eq!(f.terminator_text(b), lines.next().unwrap());
        }
    }

    #[test]
    fn one_instruction_prints_as_its_line() {
        check(
            "kernel k {\n  param buffer(0) a device type \"float\" size 4 align 4\nbb0:\n  v0 = buffer_addr.0\n  v1 = sreg.thread_position_in_grid.x  @3:7\n  v2 = ptradd.4 v0, v1\n  v3 = ld.device.f32 v2  @4:12\n  v4 = const.f32 1.5\n  v5 = cmp.lt.f32 v3, v4\n  br_if v5, bb1(v3), bb2  @5:3\nbb1(v6:f32):\n  st.device.f32 v2, v6\n  br bb2\nbb2:\n  ret\n}\n",
        );
    }
}
