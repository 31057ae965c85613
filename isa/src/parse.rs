//! The text format, parsing side: reads what `print.rs` writes (and hand-written fixtures).
//!
//! The format is line based: one declaration, block label, instruction or terminator per
//! line; `;` starts a comment.

use thiserror::Error;

use crate::entity::{Block, Inst, Value};
use crate::function::{
    Alloc, BlockData, DataObject, Function, InstData, KernelParam, Module, ParamKind, SrcLoc,
    Terminator,
};
use crate::op::{
    AtomicOp, BarrierScope, CmpCond, IntFn, MathFn, MemFlags, Op, SimdOp, Space, SpecialReg,
};
use crate::types::Type;

/// A syntax error in ISA text, with its 1-based line.
#[derive(Debug, Error, PartialEq, Eq, Clone)]
#[error("line {line}: {message}")]
pub struct ParseError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Word(String),
    Str(String),
    Punct(char),
}

fn tokenize(line: &str) -> Result<Vec<Tok>, String> {
    let mut toks = Vec::new();
    let mut chars = line.char_indices().peekable();
    while let Some(&(_, c)) = chars.peek() {
        if c == ';' {
            break;
        }
        if c.is_whitespace() {
            chars.next();
        } else if c == '"' {
            chars.next();
            let mut s = String::new();
            loop {
                match chars.next() {
                    None => return Err("unterminated string".into()),
                    Some((_, '"')) => break,
                    Some((_, '\\')) => match chars.next() {
                        Some((_, 'n')) => s.push('\n'),
                        Some((_, 't')) => s.push('\t'),
                        Some((_, 'r')) => s.push('\r'),
                        Some((_, '0')) => s.push('\0'),
                        Some((_, '\\')) => s.push('\\'),
                        Some((_, '"')) => s.push('"'),
                        Some((_, '\'')) => s.push('\''),
                        Some((_, 'u')) => {
                            let mut hex = String::new();
                            if chars.next().map(|c| c.1) != Some('{') {
                                return Err("bad \\u escape".into());
                            }
                            loop {
                                match chars.next() {
                                    Some((_, '}')) => break,
                                    Some((_, h)) => hex.push(h),
                                    None => return Err("bad \\u escape".into()),
                                }
                            }
                            let code = u32::from_str_radix(&hex, 16)
                                .ok()
                                .and_then(char::from_u32)
                                .ok_or("bad \\u escape")?;
                            s.push(code);
                        }
                        _ => return Err("unknown escape in string".into()),
                    },
                    Some((_, ch)) => s.push(ch),
                }
            }
            toks.push(Tok::Str(s));
        } else if "(){},:=@".contains(c) {
            chars.next();
            toks.push(Tok::Punct(c));
        } else if c.is_alphanumeric() || "_.|-+".contains(c) {
            let mut w = String::new();
            while let Some(&(_, ch)) = chars.peek() {
                if ch.is_alphanumeric() || "_.|-+".contains(ch) {
                    w.push(ch);
                    chars.next();
                } else {
                    break;
                }
            }
            toks.push(Tok::Word(w));
        } else {
            return Err(format!("unexpected character {c:?}"));
        }
    }
    Ok(toks)
}

struct Line<'a> {
    toks: &'a [Tok],
    pos: usize,
}

impl<'a> Line<'a> {
    fn peek(&self) -> Option<&'a Tok> {
        self.toks.get(self.pos)
    }
    fn next(&mut self) -> Option<&'a Tok> {
        let t = self.toks.get(self.pos);
        self.pos += 1;
        t
    }
    fn word(&mut self) -> Result<&'a str, String> {
        match self.next() {
            Some(Tok::Word(w)) => Ok(w),
            other => Err(format!("expected a word, found {other:?}")),
        }
    }
    fn keyword(&mut self, kw: &str) -> Result<(), String> {
        let w = self.word()?;
        if w == kw {
            Ok(())
        } else {
            Err(format!("expected `{kw}`, found `{w}`"))
        }
    }
    fn string(&mut self) -> Result<&'a str, String> {
        match self.next() {
            Some(Tok::Str(s)) => Ok(s),
            other => Err(format!("expected a string, found {other:?}")),
        }
    }
    fn punct(&mut self, p: char) -> Result<(), String> {
        match self.next() {
            Some(Tok::Punct(c)) if *c == p => Ok(()),
            other => Err(format!("expected `{p}`, found {other:?}")),
        }
    }
    fn eat_punct(&mut self, p: char) -> bool {
        if matches!(self.peek(), Some(Tok::Punct(c)) if *c == p) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn number<T: std::str::FromStr>(&mut self) -> Result<T, String> {
        let w = self.word()?;
        w.parse()
            .map_err(|_| format!("expected a number, found `{w}`"))
    }
    fn done(&self) -> Result<(), String> {
        match self.peek() {
            None => Ok(()),
            Some(t) => Err(format!("unexpected {t:?} at end of line")),
        }
    }
}

fn parse_entity(w: &str, prefix: &str) -> Result<u32, String> {
    w.strip_prefix(prefix)
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| format!("expected `{prefix}N`, found `{w}`"))
}

fn parse_type(w: &str) -> Result<Type, String> {
    w.parse().map_err(|_| format!("unknown type `{w}`"))
}

fn parse_constant(ty: Type, w: &str) -> Result<u64, String> {
    let bad = || format!("bad {ty} constant `{w}`");
    if let Some(hex) = w.strip_prefix("0x") {
        let bits = u64::from_str_radix(hex, 16).map_err(|_| bad())?;
        if bits & !ty.mask() != 0 {
            return Err(bad());
        }
        return Ok(bits);
    }
    match ty {
        Type::Pred => match w {
            "true" => Ok(1),
            "false" => Ok(0),
            _ => Err(bad()),
        },
        Type::F32 => w
            .parse::<f32>()
            .map(|f| f.to_bits() as u64)
            .map_err(|_| bad()),
        Type::F16 | Type::BF16 => Err(format!("{ty} constants are written as 0x bits")),
        t if t.is_signed() => {
            let v: i64 = w.parse().map_err(|_| bad())?;
            let min = -(1i128 << (t.bits() - 1));
            let max = (1i128 << (t.bits() - 1)) - 1;
            if (v as i128) < min || (v as i128) > max {
                return Err(bad());
            }
            Ok(v as u64 & t.mask())
        }
        t => {
            let v: u64 = w.parse().map_err(|_| bad())?;
            if v & !t.mask() != 0 {
                return Err(bad());
            }
            Ok(v)
        }
    }
}

/// Splits a mnemonic into its operation and instruction type.
fn parse_mnemonic(m: &str) -> Result<(Op, Type), String> {
    let unknown = || format!("unknown instruction `{m}`");
    if let Some(name) = m.strip_prefix("sreg.") {
        let r = SpecialReg::from_name(name).ok_or_else(unknown)?;
        return Ok((Op::Sreg(r), Type::U32));
    }
    let parts: Vec<&str> = m.split('.').collect();
    let ty_at = |i: usize| -> Result<Type, String> {
        parts.get(i).ok_or_else(unknown).and_then(|w| parse_type(w))
    };
    let exact = |n: usize| -> Result<(), String> {
        if parts.len() == n {
            Ok(())
        } else {
            Err(unknown())
        }
    };
    let index_at = |i: usize| -> Result<u32, String> {
        parts
            .get(i)
            .and_then(|w| w.parse().ok())
            .ok_or_else(unknown)
    };
    let simple = |op: Op| -> Result<(Op, Type), String> {
        exact(2)?;
        Ok((op, ty_at(1)?))
    };
    match parts[0] {
        "const" => simple(Op::Const(0)),
        "add" => simple(Op::Add),
        "sub" => simple(Op::Sub),
        "mul" => simple(Op::Mul),
        "div" => simple(Op::Div),
        "rem" => simple(Op::Rem),
        "neg" => simple(Op::Neg),
        "abs" => simple(Op::Abs),
        "min" => simple(Op::Min),
        "max" => simple(Op::Max),
        "fma" => simple(Op::Fma),
        "and" => simple(Op::And),
        "or" => simple(Op::Or),
        "xor" => simple(Op::Xor),
        "not" => simple(Op::Not),
        "shl" => simple(Op::Shl),
        "shr" => simple(Op::Shr),
        "clz" => simple(Op::Clz),
        "ctz" => simple(Op::Ctz),
        "popcount" => simple(Op::Popcount),
        "mulhi" => simple(Op::MulHi),
        "select" => simple(Op::Select),
        "cmp" => {
            exact(3)?;
            let c = CmpCond::from_name(parts[1]).ok_or_else(unknown)?;
            Ok((Op::Cmp(c), ty_at(2)?))
        }
        "cvt" => {
            let sat = parts.get(1) == Some(&"sat");
            let base = if sat { 2 } else { 1 };
            exact(base + 2)?;
            Ok((
                Op::Cvt {
                    from: ty_at(base)?,
                    sat,
                },
                ty_at(base + 1)?,
            ))
        }
        "bitcast" => {
            exact(3)?;
            Ok((Op::Bitcast { from: ty_at(1)? }, ty_at(2)?))
        }
        "ptradd" => {
            exact(2)?;
            Ok((
                Op::PtrAdd {
                    scale: index_at(1)?,
                },
                Type::U64,
            ))
        }
        "ld" | "st" => {
            let s = Space::from_name(parts.get(1).copied().unwrap_or("")).ok_or_else(unknown)?;
            if parts.len() == 4 {
                let n = parts[2]
                    .strip_prefix('x')
                    .and_then(|n| n.parse::<u8>().ok())
                    .filter(|n| (2..=4).contains(n))
                    .ok_or_else(unknown)?;
                let op = if parts[0] == "ld" {
                    Op::LoadVec(s, n)
                } else {
                    Op::StoreVec(s, n)
                };
                return Ok((op, ty_at(3)?));
            }
            exact(3)?;
            let op = if parts[0] == "ld" {
                Op::Load(s)
            } else {
                Op::Store(s)
            };
            Ok((op, ty_at(2)?))
        }
        "matrix_load" | "matrix_load_t" | "matrix_store" | "matrix_store_t" => {
            exact(3)?;
            let s = Space::from_name(parts[1]).ok_or_else(unknown)?;
            let t = parts[0].ends_with("_t");
            let op = if parts[0].starts_with("matrix_load") {
                Op::MatrixLoad(s, t)
            } else {
                Op::MatrixStore(s, t)
            };
            Ok((op, ty_at(2)?))
        }
        "matrix_mac" => simple(Op::MatrixMac),
        "atomic" => {
            exact(4)?;
            let a = AtomicOp::from_name(parts[1]).ok_or_else(unknown)?;
            let s = Space::from_name(parts[2]).ok_or_else(unknown)?;
            Ok((Op::Atomic(a, s), ty_at(3)?))
        }
        "barrier" => {
            exact(3)?;
            let scope = BarrierScope::from_name(parts[1]).ok_or_else(unknown)?;
            let flags = MemFlags::from_text(parts[2]).ok_or_else(unknown)?;
            Ok((Op::Barrier(scope, flags), Type::Pred))
        }
        "simd" | "quad" => {
            let s = parts
                .get(1)
                .and_then(|n| SimdOp::from_name(n))
                .ok_or_else(unknown)?;
            let op = if parts[0] == "simd" {
                Op::Simd(s)
            } else {
                Op::Quad(s)
            };
            match op.implied_type() {
                Some(t) => {
                    exact(2)?;
                    Ok((op, t))
                }
                None => {
                    exact(3)?;
                    Ok((op, ty_at(2)?))
                }
            }
        }
        "buffer_addr" => {
            exact(2)?;
            Ok((Op::BufferAddr(index_at(1)?), Type::U64))
        }
        "tg_param_addr" => {
            exact(2)?;
            Ok((Op::ThreadgroupParamAddr(index_at(1)?), Type::U64))
        }
        "tg_addr" => {
            exact(2)?;
            Ok((Op::ThreadgroupAddr(index_at(1)?), Type::U64))
        }
        "local_addr" => {
            exact(2)?;
            Ok((Op::LocalAddr(index_at(1)?), Type::U64))
        }
        "data_addr" => {
            exact(2)?;
            Ok((Op::DataAddr(index_at(1)?), Type::U64))
        }
        name => {
            if let Some(f) = IntFn::from_name(name) {
                return simple(Op::Int(f));
            }
            let f = MathFn::from_name(name).ok_or_else(unknown)?;
            if parts.get(1) == Some(&"precise") {
                exact(3)?;
                return Ok((Op::PreciseMath(f), ty_at(2)?));
            }
            simple(Op::Math(f))
        }
    }
}

/// Per-function parsing state.
struct FunctionParser {
    func: Function,
    value_types: Vec<Option<Type>>,
    used: Vec<(Value, usize)>,
    blocks: Vec<Option<BlockData>>,
    current: Option<(Block, BlockData)>,
}

impl FunctionParser {
    fn new(name: &str) -> Self {
        FunctionParser {
            func: Function {
                name: name.to_string(),
                ..Function::default()
            },
            value_types: Vec::new(),
            used: Vec::new(),
            blocks: Vec::new(),
            current: None,
        }
    }

    fn define(&mut self, v: Value, ty: Type) -> Result<(), String> {
        let i = v.index();
        if i >= 1 << 24 {
            return Err(format!("value number {v} is too large"));
        }
        if self.value_types.len() <= i {
            self.value_types.resize(i + 1, None);
        }
        if self.value_types[i].is_some() {
            return Err(format!("{v} is defined twice"));
        }
        self.value_types[i] = Some(ty);
        Ok(())
    }

    fn use_value(&mut self, w: &str, line: usize) -> Result<Value, String> {
        let v = Value(parse_entity(w, "v")?);
        self.used.push((v, line));
        Ok(v)
    }

    fn block_ref(&mut self, w: &str) -> Result<Block, String> {
        let n = parse_entity(w, "bb")?;
        if n >= 1 << 24 {
            return Err(format!("block number {w} is too large"));
        }
        Ok(Block(n))
    }

    fn finish_block(&mut self) -> Result<(), String> {
        if let Some((b, _)) = &self.current {
            return Err(format!("{b} has no terminator"));
        }
        Ok(())
    }

    fn target(&mut self, l: &mut Line, line: usize) -> Result<(Block, Vec<Value>), String> {
        let b = self.block_ref(l.word()?)?;
        let mut args = Vec::new();
        if l.eat_punct('(') {
            loop {
                args.push(self.use_value(l.word()?, line)?);
                if l.eat_punct(')') {
                    break;
                }
                l.punct(',')?;
            }
        }
        Ok((b, args))
    }

    fn loc(l: &mut Line) -> Result<SrcLoc, String> {
        if !l.eat_punct('@') {
            return Ok(SrcLoc::UNKNOWN);
        }
        let a: u32 = l.number()?;
        l.punct(':')?;
        let b: u32 = l.number()?;
        if l.eat_punct(':') {
            let c: u32 = l.number()?;
            Ok(SrcLoc {
                file: a,
                line: b,
                col: c,
            })
        } else {
            Ok(SrcLoc {
                file: 0,
                line: a,
                col: b,
            })
        }
    }

    fn parse_line(&mut self, l: &mut Line, line: usize) -> Result<(), String> {
        let first = match l.peek() {
            Some(Tok::Word(w)) => w.as_str(),
            _ => return Err("expected a declaration or instruction".into()),
        };
        match first {
            "param" => {
                if !self.blocks.is_empty() || self.current.is_some() {
                    return Err("`param` after the first block".into());
                }
                l.next();
                self.func.params.push(parse_param(l)?);
                l.done()
            }
            "tgalloc" | "local" => {
                l.next();
                let n: usize = l.number()?;
                l.keyword("size")?;
                let size = l.number()?;
                l.keyword("align")?;
                let align = l.number()?;
                let name = l.string()?.to_string();
                l.done()?;
                let list = if first == "tgalloc" {
                    &mut self.func.threadgroup_allocs
                } else {
                    &mut self.func.locals
                };
                if n != list.len() {
                    return Err(format!("expected {first} {}, found {n}", list.len()));
                }
                list.push(Alloc { size, align, name });
                Ok(())
            }
            w if w.starts_with("bb") && self.is_label(l) => {
                self.finish_block()?;
                l.next();
                let b = self.block_ref(w)?;
                let mut params = Vec::new();
                if l.eat_punct('(') {
                    loop {
                        let v = Value(parse_entity(l.word()?, "v")?);
                        l.punct(':')?;
                        let ty = parse_type(l.word()?)?;
                        self.define(v, ty)?;
                        params.push(v);
                        if l.eat_punct(')') {
                            break;
                        }
                        l.punct(',')?;
                    }
                }
                l.punct(':')?;
                l.done()?;
                if self.blocks.get(b.index()).is_some_and(Option::is_some) {
                    return Err(format!("{b} is defined twice"));
                }
                self.current = Some((
                    b,
                    BlockData {
                        params,
                        insts: Vec::new(),
                        term: Terminator::Ret,
                        term_loc: SrcLoc::UNKNOWN,
                    },
                ));
                Ok(())
            }
            "ret" | "br" | "br_if" => {
                l.next();
                let term = match first {
                    "ret" => Terminator::Ret,
                    "br" => {
                        let (b, a) = self.target(l, line)?;
                        Terminator::Br(b, a)
                    }
                    _ => {
                        let cond = self.use_value(l.word()?, line)?;
                        l.punct(',')?;
                        let then_ = self.target(l, line)?;
                        l.punct(',')?;
                        let else_ = self.target(l, line)?;
                        Terminator::BrIf { cond, then_, else_ }
                    }
                };
                let loc = Self::loc(l)?;
                l.done()?;
                let (b, mut data) = self.current.take().ok_or("terminator outside a block")?;
                data.term = term;
                data.term_loc = loc;
                let i = b.index();
                if self.blocks.len() <= i {
                    self.blocks.resize(i + 1, None);
                }
                self.blocks[i] = Some(data);
                Ok(())
            }
            _ => self.parse_inst(l, line),
        }
    }

    fn is_label(&self, l: &Line) -> bool {
        matches!(l.toks.get(l.pos + 1), Some(Tok::Punct(':' | '(')))
    }

    fn parse_inst(&mut self, l: &mut Line, line: usize) -> Result<(), String> {
        if self.current.is_none() {
            return Err("instruction outside a block".into());
        }
        // Results: `vN =` or `vA, vB =`.
        let mut results = Vec::new();
        let has_results = l.toks[l.pos..]
            .iter()
            .position(|t| *t == Tok::Punct('='))
            .is_some_and(|eq| {
                l.toks[l.pos..l.pos + eq].iter().all(|t| {
                    matches!(t, Tok::Word(w) if w.starts_with('v')) || *t == Tok::Punct(',')
                })
            });
        if has_results {
            loop {
                results.push(Value(parse_entity(l.word()?, "v")?));
                if l.eat_punct('=') {
                    break;
                }
                l.punct(',')?;
            }
        }
        let (mut op, ty) = parse_mnemonic(l.word()?)?;
        if let Op::Const(_) = op {
            op = Op::Const(parse_constant(ty, l.word()?)?);
        }
        let mut args = Vec::new();
        for i in 0..op.arity() {
            if i > 0 {
                l.punct(',')?;
            }
            args.push(self.use_value(l.word()?, line)?);
        }
        let loc = Self::loc(l)?;
        l.done()?;
        let want = op.result_type(ty).map_or(0, |_| op.result_count());
        if results.len() != want {
            return Err(match want {
                0 => "this instruction produces no result".into(),
                1 => "this instruction needs a result `vN =`".into(),
                n => format!("this instruction has {n} results"),
            });
        }
        if let Some(rt) = op.result_type(ty) {
            for &v in &results {
                self.define(v, rt)?;
            }
        }
        let inst = Inst(self.func.insts.len() as u32);
        self.func.insts.push(InstData {
            op,
            ty,
            args,
            results,
        });
        self.func.inst_locs.push(loc);
        if let Some((_, data)) = &mut self.current {
            data.insts.push(inst);
        }
        Ok(())
    }

    fn finish(mut self, line: usize) -> Result<Function, ParseError> {
        let err = |line, message: String| ParseError { line, message };
        if let Some((b, _)) = &self.current {
            return Err(err(line, format!("{b} has no terminator")));
        }
        if self.blocks.is_empty() {
            return Err(err(
                line,
                format!("kernel {} has no blocks", self.func.name),
            ));
        }
        for (i, b) in self.blocks.iter().enumerate() {
            if b.is_none() {
                return Err(err(line, format!("bb{i} is never defined")));
            }
        }
        for &(v, l) in &self.used {
            if self.value_types.get(v.index()).copied().flatten().is_none() {
                return Err(err(l, format!("{v} is used but never defined")));
            }
        }
        for data in self.blocks.iter().flatten() {
            for (t, _) in data.term.targets() {
                if t.index() >= self.blocks.len() {
                    return Err(err(line, format!("branch to undefined block {t}")));
                }
            }
        }
        self.func.value_types = self
            .value_types
            .iter()
            .map(|t| t.unwrap_or(Type::Pred))
            .collect();
        self.func.blocks = self.blocks.into_iter().flatten().collect();
        Ok(self.func)
    }
}

fn parse_param(l: &mut Line) -> Result<KernelParam, String> {
    let kind_word = l.word()?;
    let kind = match kind_word {
        "buffer" => ParamKind::Buffer,
        "threadgroup" => ParamKind::Threadgroup,
        w => return Err(format!("expected `buffer` or `threadgroup`, found `{w}`")),
    };
    l.punct('(')?;
    let index = l.number()?;
    l.punct(')')?;
    let name = l.word()?.to_string();
    let space = Space::from_name(l.word()?).ok_or("unknown address space")?;
    let mut p = KernelParam {
        kind,
        index,
        name,
        space,
        type_name: String::new(),
        elem_size: 0,
        elem_align: 0,
        readonly: false,
        is_ref: false,
        atomic: false,
        is_struct: false,
    };
    loop {
        match l.word()? {
            "readonly" => p.readonly = true,
            "ref" => p.is_ref = true,
            "atomic" => p.atomic = true,
            "struct" => p.is_struct = true,
            "type" => break,
            w => return Err(format!("unknown parameter flag `{w}`")),
        }
    }
    p.type_name = l.string()?.to_string();
    l.keyword("size")?;
    p.elem_size = l.number()?;
    l.keyword("align")?;
    p.elem_align = l.number()?;
    Ok(p)
}

fn parse_hex(s: &str) -> Result<Vec<u8>, String> {
    if !s.len().is_multiple_of(2) {
        return Err("odd number of hex digits".into());
    }
    (0..s.len())
        .step_by(2)
        .map(|i| {
            s.get(i..i + 2)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| "bad hex digits".to_string())
        })
        .collect()
}

/// Parses a module in the text format.
pub fn parse_module(text: &str) -> Result<Module, ParseError> {
    let mut module = Module::default();
    let mut func: Option<FunctionParser> = None;
    let mut last_line = 0;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        last_line = line;
        let err = |message: String| ParseError { line, message };
        let toks = tokenize(raw).map_err(err)?;
        if toks.is_empty() {
            continue;
        }
        let mut l = Line {
            toks: &toks,
            pos: 0,
        };
        if let Some(fp) = &mut func {
            if toks == [Tok::Punct('}')] {
                let fp = func.take().ok_or_else(|| err("unbalanced `}`".into()))?;
                module.functions.push(fp.finish(line)?);
                continue;
            }
            fp.parse_line(&mut l, line).map_err(err)?;
            continue;
        }
        let result: Result<(), String> = (|| {
            match l.word()? {
                "file" => {
                    let n: usize = l.number()?;
                    if n != module.files.len() {
                        return Err(format!("expected file {}, found {n}", module.files.len()));
                    }
                    module.files.push(l.string()?.to_string());
                }
                "data" => {
                    let n: usize = l.number()?;
                    if n != module.data.len() {
                        return Err(format!("expected data {}, found {n}", module.data.len()));
                    }
                    l.keyword("align")?;
                    let align = l.number()?;
                    let name = l.string()?.to_string();
                    l.keyword("x")?;
                    let bytes = parse_hex(l.string()?)?;
                    module.data.push(DataObject { bytes, align, name });
                }
                "kernel" => {
                    let name = l.word()?;
                    l.punct('{')?;
                    func = Some(FunctionParser::new(name));
                }
                w => return Err(format!("expected `file`, `data` or `kernel`, found `{w}`")),
            }
            l.done()
        })();
        result.map_err(err)?;
    }
    if func.is_some() {
        return Err(ParseError {
            line: last_line,
            message: "missing `}` at end of kernel".into(),
        });
    }
    Ok(module)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"file 0 "k.metal"
data 0 align 4 "table" x"0000803f00000040"

kernel k {
  param buffer(0) a device readonly type "float" size 4 align 4
  param buffer(1) out device atomic type "atomic_float" size 4 align 4
  param threadgroup(0) tile threadgroup type "float" size 4 align 4
  tgalloc 0 size 64 align 4 "partials"
  local 0 size 16 align 4 "arr"
bb0:
  v0 = buffer_addr.0
  v1 = sreg.thread_position_in_grid.x  @3:7
  v2 = ptradd.4 v0, v1
  v3 = ld.device.f32 v2  @4:12
  v4 = const.f32 1.5
  v5 = const.i32 -3
  v6 = const.f32 0x7fc00000
  v7 = cmp.lt.f32 v3, v4
  br_if v7, bb1(v3), bb2  @5:3
bb1(v8:f32):
  v9 = fma.f32 v8, v4, v3
  v10 = simd.shuffle_down.f32 v9, v1
  v11 = buffer_addr.1
  v12 = atomic.add.device.f32 v11, v10
  barrier.threadgroup.device|threadgroup
  v13 = cvt.sat.f32.u8 v9
  v14 = simd.ballot.pred v7
  v15 = simd.is_first
  v16, v17, v18, v19 = ld.device.x4.f32 v0
  st.threadgroup.x2.f32 v11, v16, v17
  v20, v21 = matrix_load_t.threadgroup.f32 v11, v1
  v22, v23 = matrix_mac.f32 v20, v21, v20, v21, v16, v17
  matrix_store.device.f32 v0, v1, v22, v23
  v24 = sin.precise.f32 v9
  v25 = atan2.f32 v9, v24
  v26 = ldexp.precise.f32 v9, v5
  v27 = addsat.u32 v1, v1
  v28 = extract_bits.i32 v5, v1, v1
  v29 = insert_bits.i32 v5, v5, v1, v1
  v30 = reverse_bits.u32 v1
  br bb2
bb2:
  ret
}
"#;

    #[test]
    fn sample_round_trips() {
        let m = parse_module(SAMPLE).unwrap();
        assert_eq!(m.to_string(), SAMPLE);
        let again = parse_module(&m.to_string()).unwrap();
        assert_eq!(again, m);
    }

    #[test]
    fn constants() {
        assert_eq!(parse_constant(Type::I16, "-1"), Ok(0xffff));
        assert!(parse_constant(Type::U8, "256").is_err());
        assert!(parse_constant(Type::I8, "-129").is_err());
        assert_eq!(parse_constant(Type::F16, "0x3c00"), Ok(0x3c00));
        assert!(parse_constant(Type::F16, "0x13c00").is_err());
    }

    fn error_of(text: &str) -> ParseError {
        parse_module(text).unwrap_err()
    }

    #[test]
    fn errors_name_their_line() {
        let e = error_of("kernel k {\nbb0:\n  v1 = add.f32 v0, v0\n  ret\n}\n");
        assert_eq!(e.line, 3);
        assert!(e.message.contains("v0 is used but never defined"), "{e}");
        let e = error_of("kernel k {\nbb0:\n  v0 = frobnicate.f32\n  ret\n}\n");
        assert!(e.message.contains("unknown instruction"), "{e}");
        let e = error_of("kernel k {\nbb0:\n  v0 = const.f32 1.0\n}\n");
        assert!(e.message.contains("no terminator"), "{e}");
        let e = error_of("kernel k {\nbb0:\n  br bb7\n}\n");
        assert!(e.message.contains("bb7"), "{e}");
        let e = error_of("kernel k {\nbb0:\n  st.device.f32 v0\n  ret\n}\n");
        assert_eq!(e.line, 3);
    }

    #[test]
    fn never_panics_on_garbage() {
        for text in [
            "",
            "}",
            "kernel",
            "kernel k {",
            "kernel k {\nbb0(\n",
            "kernel k {\nbb0(v0:\n",
            "kernel k {\nbb0:\n v0 = const.f32\n",
            "kernel k {\nbb99999999999:\n",
            "data 0 align 4 \"x\" x\"abc\"",
            "file 0 \"unterminated",
            "kernel k {\nbb0:\n  v0 = sreg.\n",
            "kernel k {\nbb0:\n  v0 = cvt.sat\n",
            "kernel k {\nbb0:\n  br_if v0, bb0\n",
        ] {
            let _ = parse_module(text);
        }
    }
}
