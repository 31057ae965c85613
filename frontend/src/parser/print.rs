//! A compact S-expression rendering of the AST, for snapshot tests and debugging.
//!
//! Items and statements go one per line, indented two spaces per level; expressions and
//! types stay on one line: `(+ a (* b c))`, `(ptr (const device float))`,
//! `(array (array float 8) 4)`. Spans are not shown.

use std::fmt::Write;

use crate::ast::{
    AddressSpace, Attribute, BinaryOp, Block, CastKind, Expr, ExprKind, FnKind, FunctionDef, Init,
    Item, Param, Path, PostfixOp, Qualifiers, Stmt, StmtKind, TemplateArg, TemplateParamKind,
    TranslationUnit, TypeExpr, TypeKind, UnaryOp, VarDecl,
};

/// Renders a translation unit, one top-level item per line (nested parts indented).
pub fn print_ast(tu: &TranslationUnit) -> String {
    let mut out = String::new();
    for item in &tu.items {
        print_item(&mut out, item, 0);
        out.push('\n');
    }
    out
}

/// Renders one expression on one line.
pub fn print_expr(e: &Expr) -> String {
    let mut out = String::new();
    expr(&mut out, e);
    out
}

/// Renders one type on one line.
pub fn print_type(t: &TypeExpr) -> String {
    let mut out = String::new();
    ty(&mut out, t);
    out
}

fn indent(out: &mut String, level: usize) {
    for _ in 0..level {
        out.push_str("  ");
    }
}

fn print_item(out: &mut String, item: &Item, level: usize) {
    indent(out, level);
    match item {
        Item::Function(f) => function(out, f, level),
        Item::Struct(s) => {
            let _ = write!(
                out,
                "({} {}",
                match (s.forward, s.is_union) {
                    (true, false) => "struct-decl",
                    (true, true) => "union-decl",
                    (false, false) => "struct",
                    (false, true) => "union",
                },
                s.name.name
            );
            if let Some(args) = &s.spec_args {
                template_args(out, args);
            }
            for b in &s.bases {
                out.push_str(" : ");
                ty(out, b);
            }
            for f in &s.fields {
                out.push('\n');
                indent(out, level + 1);
                out.push_str("(field ");
                ty(out, &f.ty);
                let _ = write!(out, " {}", f.name.name);
                if let Some(w) = &f.bit_width {
                    out.push_str(" : ");
                    expr(out, w);
                }
                attrs(out, &f.attrs);
                init(out, &f.init);
                out.push(')');
            }
            for m in &s.members {
                out.push('\n');
                print_item(out, m, level + 1);
            }
            out.push(')');
        }
        Item::Enum(e) => {
            out.push_str("(enum ");
            if e.scoped {
                out.push_str("class ");
            }
            out.push_str(e.name.as_ref().map_or("_", |n| n.name.as_str()));
            if let Some(u) = &e.underlying {
                out.push_str(" : ");
                ty(out, u);
            }
            for (name, value) in &e.variants {
                let _ = write!(out, " {}", name.name);
                if let Some(v) = value {
                    out.push('=');
                    expr(out, v);
                }
            }
            out.push(')');
        }
        Item::Vars(vars) => {
            out.push_str("(vars");
            for v in vars {
                out.push(' ');
                var_decl(out, v);
            }
            out.push(')');
        }
        Item::UsingNamespace(p, _) => {
            let _ = write!(out, "(using-namespace {})", p.to_text());
        }
        Item::NamespaceAlias { name, target, .. } => {
            let _ = write!(out, "(namespace-alias {} {})", name.name, target.to_text());
        }
        Item::UsingDecl(p, _) => {
            out.push_str("(using ");
            path(out, p);
            out.push(')');
        }
        Item::Alias { name, ty: t, .. } => {
            let _ = write!(out, "(alias {} ", name.name);
            ty(out, t);
            out.push(')');
        }
        Item::Namespace { name, items, .. } => {
            let name = name.as_ref().map_or("_", |n| n.name.as_str());
            let _ = write!(out, "(namespace {name}");
            for i in items {
                out.push('\n');
                print_item(out, i, level + 1);
            }
            out.push(')');
        }
        Item::Template { params, item, .. } => {
            out.push_str("(template <");
            for (i, p) in params.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                match &p.kind {
                    TemplateParamKind::Type => out.push_str("typename"),
                    TemplateParamKind::Value(t) => ty(out, t),
                    TemplateParamKind::Template => out.push_str("template"),
                }
                if p.pack {
                    out.push_str("...");
                }
                if let Some(n) = &p.name {
                    let _ = write!(out, " {}", n.name);
                }
                if let Some(d) = &p.default {
                    out.push_str(" = ");
                    template_arg(out, d);
                }
            }
            out.push_str(">\n");
            print_item(out, item, level + 1);
            out.push(')');
        }
        Item::Instantiation(inst) => {
            out.push_str("(instantiate ");
            path(out, &inst.name);
            attrs(out, &inst.attrs);
            if let Some(params) = &inst.params {
                for p in params {
                    out.push(' ');
                    param(out, p);
                }
            }
            out.push(')');
        }
        Item::StaticAssert { cond, message, .. } => static_assert(out, cond, message),
        Item::Unsupported { what, .. } => {
            let _ = write!(out, "(unsupported {what:?})");
        }
        Item::Error(_) => out.push_str("(error)"),
    }
}

fn init(out: &mut String, i: &Option<Init>) {
    match i {
        None => {}
        Some(Init::Assign(e)) => {
            out.push_str(" = ");
            expr(out, e);
        }
        Some(Init::Ctor(args)) => list(out, " (ctor", args),
        Some(Init::Brace(args)) => list(out, " (brace", args),
    }
}

fn static_assert(out: &mut String, cond: &Expr, message: &Option<String>) {
    out.push_str("(static-assert ");
    expr(out, cond);
    if let Some(m) = message {
        let _ = write!(out, " {m:?}");
    }
    out.push(')');
}

fn function(out: &mut String, f: &FunctionDef, level: usize) {
    out.push_str("(fn ");
    let s = f.specifiers;
    for (on, word) in [
        (s.kernel, "kernel"),
        (s.is_static, "static"),
        (s.inline, "inline"),
        (s.constexpr, "constexpr"),
    ] {
        if on {
            out.push_str(word);
            out.push(' ');
        }
    }
    match f.kind {
        FnKind::Normal => {}
        FnKind::Constructor => out.push_str("ctor "),
        FnKind::Destructor => out.push_str("dtor "),
        FnKind::Conversion => out.push_str("conversion "),
    }
    for s in &f.scope {
        out.push_str(&s.name.name);
        template_args(out, &s.args);
        out.push_str("::");
    }
    out.push_str(&f.name.name);
    if let Some(args) = &f.spec_args {
        template_args(out, args);
    }
    out.push_str(" -> ");
    ty(out, &f.ret);
    if f.method_quals != Qualifiers::default() {
        out.push_str(" (this ");
        quals(out, &f.method_quals);
        out.push(')');
    }
    if f.deleted {
        out.push_str(" deleted");
    }
    attrs(out, &f.attrs);
    for i in &f.inits {
        out.push_str(" (init ");
        path(out, &i.name);
        list(out, if i.brace { " (brace" } else { " (paren" }, &i.args);
        out.push(')');
    }
    for p in &f.params {
        out.push('\n');
        indent(out, level + 1);
        param(out, p);
    }
    if let Some(body) = &f.body {
        out.push('\n');
        block(out, body, level + 1);
    }
    out.push(')');
}

fn param(out: &mut String, p: &Param) {
    out.push_str("(param ");
    ty(out, &p.ty);
    if p.pack {
        out.push_str("...");
    }
    if let Some(n) = &p.name {
        let _ = write!(out, " {}", n.name);
    }
    attrs(out, &p.attrs);
    if let Some(d) = &p.default {
        out.push_str(" = ");
        expr(out, d);
    }
    out.push(')');
}

fn attrs(out: &mut String, attrs: &[Attribute]) {
    for a in attrs {
        let _ = write!(out, " [[{}", a.name.name);
        if !a.args.is_empty() {
            out.push('(');
            for (i, arg) in a.args.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                expr(out, arg);
            }
            out.push(')');
        }
        out.push_str("]]");
    }
}

fn var_decl(out: &mut String, v: &VarDecl) {
    out.push_str("(decl ");
    if v.storage.is_static {
        out.push_str("static ");
    }
    if v.storage.constexpr {
        out.push_str("constexpr ");
    }
    ty(out, &v.ty);
    let _ = write!(out, " {}", v.name.name);
    init(out, &v.init);
    attrs(out, &v.attrs);
    out.push(')');
}

/// `head a b c)`.
fn list(out: &mut String, head: &str, items: &[Expr]) {
    out.push_str(head);
    for e in items {
        out.push(' ');
        expr(out, e);
    }
    out.push(')');
}

fn block(out: &mut String, b: &Block, level: usize) {
    indent(out, level);
    out.push_str("(block");
    for s in &b.stmts {
        out.push('\n');
        stmt(out, s, level + 1);
    }
    out.push(')');
}

/// A statement on one line (for `for` headers).
fn inline_stmt(out: &mut String, s: &Stmt) {
    match &s.kind {
        StmtKind::Decl(vars) => {
            for (i, v) in vars.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                var_decl(out, v);
            }
        }
        StmtKind::Expr(e) => {
            out.push_str("(expr ");
            expr(out, e);
            out.push(')');
        }
        _ => stmt(out, s, 0),
    }
}

fn child(out: &mut String, s: &Stmt, level: usize) {
    out.push('\n');
    stmt(out, s, level);
}

fn stmt(out: &mut String, s: &Stmt, level: usize) {
    if let StmtKind::Block(b) = &s.kind {
        block(out, b, level);
        return;
    }
    indent(out, level);
    match &s.kind {
        StmtKind::Decl(vars) => {
            for (i, v) in vars.iter().enumerate() {
                if i > 0 {
                    out.push('\n');
                    indent(out, level);
                }
                var_decl(out, v);
            }
        }
        StmtKind::Expr(e) => {
            out.push_str("(expr ");
            expr(out, e);
            out.push(')');
        }
        StmtKind::Block(_) => {}
        StmtKind::Items(items) => {
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push('\n');
                }
                print_item(out, item, if i > 0 { level } else { 0 });
            }
        }
        StmtKind::If {
            constexpr_,
            cond,
            then_,
            else_,
        } => {
            out.push_str(if *constexpr_ {
                "(if-constexpr "
            } else {
                "(if "
            });
            expr(out, cond);
            child(out, then_, level + 1);
            if let Some(e) = else_ {
                child(out, e, level + 1);
            }
            out.push(')');
        }
        StmtKind::For {
            init,
            cond,
            step,
            body,
        } => {
            out.push_str("(for ");
            match init {
                Some(i) => inline_stmt(out, i),
                None => out.push('_'),
            }
            for part in [cond, step] {
                out.push(' ');
                match part {
                    Some(e) => expr(out, e),
                    None => out.push('_'),
                }
            }
            child(out, body, level + 1);
            out.push(')');
        }
        StmtKind::While { cond, body } => {
            out.push_str("(while ");
            expr(out, cond);
            child(out, body, level + 1);
            out.push(')');
        }
        StmtKind::DoWhile { body, cond } => {
            out.push_str("(do");
            child(out, body, level + 1);
            out.push('\n');
            indent(out, level + 1);
            expr(out, cond);
            out.push(')');
        }
        StmtKind::Switch { cond, body } => {
            out.push_str("(switch ");
            expr(out, cond);
            child(out, body, level + 1);
            out.push(')');
        }
        StmtKind::Case(e) => {
            out.push_str("(case ");
            expr(out, e);
            out.push(')');
        }
        StmtKind::Default => out.push_str("default"),
        StmtKind::Break => out.push_str("break"),
        StmtKind::Continue => out.push_str("continue"),
        StmtKind::Return(None) => out.push_str("(return)"),
        StmtKind::Return(Some(e)) => {
            out.push_str("(return ");
            expr(out, e);
            out.push(')');
        }
        StmtKind::StaticAssert { cond, message } => static_assert(out, cond, message),
        StmtKind::Empty => out.push_str("empty"),
        StmtKind::Error => out.push_str("(error)"),
    }
}

fn quals(out: &mut String, q: &Qualifiers) {
    let mut words: Vec<&str> = Vec::new();
    if q.is_const {
        words.push("const");
    }
    if q.is_volatile {
        words.push("volatile");
    }
    if let Some(s) = q.space {
        words.push(match s {
            AddressSpace::Device => "device",
            AddressSpace::Constant => "constant",
            AddressSpace::Threadgroup => "threadgroup",
            AddressSpace::Thread => "thread",
            AddressSpace::ThreadgroupImageblock => "threadgroup_imageblock",
        });
    }
    out.push_str(&words.join(" "));
}

fn ty(out: &mut String, t: &TypeExpr) {
    match &t.kind {
        TypeKind::Named(p) => path(out, p),
        TypeKind::Qualified { quals: q, inner } => {
            out.push('(');
            quals(out, q);
            out.push(' ');
            ty(out, inner);
            out.push(')');
        }
        TypeKind::Pointer { pointee, quals: q } => {
            out.push_str("(ptr ");
            if *q != Qualifiers::default() {
                quals(out, q);
                out.push(' ');
            }
            ty(out, pointee);
            out.push(')');
        }
        TypeKind::Reference { referent } => {
            out.push_str("(ref ");
            ty(out, referent);
            out.push(')');
        }
        TypeKind::Array { elem, len } => {
            out.push_str("(array ");
            ty(out, elem);
            if let Some(n) = len {
                out.push(' ');
                expr(out, n);
            }
            out.push(')');
        }
        TypeKind::Auto => out.push_str("auto"),
        TypeKind::Decltype(e) => {
            out.push_str("(decltype ");
            expr(out, e);
            out.push(')');
        }
    }
}

fn template_args(out: &mut String, args: &[TemplateArg]) {
    if args.is_empty() {
        return;
    }
    out.push('<');
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        template_arg(out, a);
    }
    out.push('>');
}

fn template_arg(out: &mut String, a: &TemplateArg) {
    match a {
        TemplateArg::Type(t) => ty(out, t),
        TemplateArg::Expr(e) => expr(out, e),
        TemplateArg::Pack(a) => {
            template_arg(out, a);
            out.push_str("...");
        }
    }
}

/// A path with the template arguments of each segment: `a::B<float>::c`.
fn path(out: &mut String, p: &Path) {
    if p.global {
        out.push_str("::");
    }
    for (i, s) in p.segments.iter().enumerate() {
        if i > 0 {
            out.push_str("::");
        }
        out.push_str(&s.name.name);
        template_args(out, &s.args);
    }
}

fn expr(out: &mut String, e: &Expr) {
    match &e.kind {
        ExprKind::IntLit {
            value,
            unsigned,
            long,
            non_decimal,
        } => {
            if *non_decimal {
                let _ = write!(out, "0x{value:x}");
            } else {
                let _ = write!(out, "{value}");
            }
            if *unsigned {
                out.push('u');
            }
            if *long {
                out.push('l');
            }
        }
        ExprKind::FloatLit { value, suffix } => {
            let _ = write!(out, "{value:?}");
            if let Some(s) = suffix {
                out.push(*s);
            }
        }
        ExprKind::BoolLit(b) => {
            let _ = write!(out, "{b}");
        }
        ExprKind::StringLit(s) => {
            let _ = write!(out, "{s:?}");
        }
        ExprKind::Name(p) => path(out, p),
        ExprKind::SizeofPack(n) => {
            let _ = write!(out, "(sizeof... {})", n.name);
        }
        ExprKind::PackExpansion(e) => {
            out.push_str("(expand ");
            expr(out, e);
            out.push(')');
        }
        ExprKind::Unary { op, operand } => {
            let op = match op {
                UnaryOp::Neg => "-",
                UnaryOp::Plus => "+",
                UnaryOp::Not => "!",
                UnaryOp::BitNot => "~",
                UnaryOp::Deref => "deref",
                UnaryOp::AddrOf => "addr",
                UnaryOp::PreInc => "pre++",
                UnaryOp::PreDec => "pre--",
            };
            let _ = write!(out, "({op} ");
            expr(out, operand);
            out.push(')');
        }
        ExprKind::Postfix { op, operand } => {
            let op = match op {
                PostfixOp::Inc => "post++",
                PostfixOp::Dec => "post--",
            };
            let _ = write!(out, "({op} ");
            expr(out, operand);
            out.push(')');
        }
        ExprKind::Binary { op, lhs, rhs } => {
            let _ = write!(out, "({} ", op.symbol());
            expr(out, lhs);
            out.push(' ');
            expr(out, rhs);
            out.push(')');
        }
        ExprKind::Assign { op, lhs, rhs } => {
            let _ = write!(out, "({}= ", op.map_or("", BinaryOp::symbol));
            expr(out, lhs);
            out.push(' ');
            expr(out, rhs);
            out.push(')');
        }
        ExprKind::Conditional { cond, then_, else_ } => {
            out.push_str("(? ");
            expr(out, cond);
            out.push(' ');
            expr(out, then_);
            out.push(' ');
            expr(out, else_);
            out.push(')');
        }
        ExprKind::Call { callee, args } => {
            out.push_str("(call ");
            expr(out, callee);
            list(out, "", args);
        }
        ExprKind::Member {
            base,
            name,
            targs,
            arrow,
        } => {
            out.push_str(if *arrow { "(-> " } else { "(. " });
            expr(out, base);
            let _ = write!(out, " {}", name.name);
            template_args(out, targs);
            out.push(')');
        }
        ExprKind::Index { base, index } => {
            out.push_str("(index ");
            expr(out, base);
            out.push(' ');
            expr(out, index);
            out.push(')');
        }
        ExprKind::Cast {
            kind,
            ty: t,
            expr: e,
        } => {
            let head = match kind {
                CastKind::CStyle => "cast",
                CastKind::Static => "static_cast",
                CastKind::Reinterpret => "reinterpret_cast",
                CastKind::Const => "const_cast",
                CastKind::AsType => "as_type",
            };
            let _ = write!(out, "({head} ");
            ty(out, t);
            out.push(' ');
            expr(out, e);
            out.push(')');
        }
        ExprKind::SizeofType(t) => {
            out.push_str("(sizeof-type ");
            ty(out, t);
            out.push(')');
        }
        ExprKind::SizeofExpr(e) => {
            out.push_str("(sizeof ");
            expr(out, e);
            out.push(')');
        }
        ExprKind::AlignofType(t) => {
            out.push_str("(alignof ");
            ty(out, t);
            out.push(')');
        }
        ExprKind::InitList(items) => list(out, "(init", items),
        ExprKind::TypedInitList { ty: t, elems } => {
            out.push_str("(typed-init ");
            ty(out, t);
            list(out, "", elems);
        }
        ExprKind::Error => out.push_str("<error>"),
    }
}
