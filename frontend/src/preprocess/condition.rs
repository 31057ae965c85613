//! Evaluation of `#if` conditions: C's integer constant expressions over `intmax_t` and
//! `uintmax_t`, after `defined` and macro expansion have been done and every remaining
//! identifier has become `0`.

use crate::lexer::{parse_int, spell};
use crate::source::Span;
use crate::token::{Punct, Spanned, Token};

use super::MAX_IF_NESTING;

/// A `#if` expression value: C's `intmax_t` or `uintmax_t`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Value {
    pub(super) v: u64,
    unsigned: bool,
}

impl Value {
    fn signed(v: i64) -> Value {
        Value {
            v: v as u64,
            unsigned: false,
        }
    }

    fn bool(b: bool) -> Value {
        Value::signed(b as i64)
    }
}

pub(super) type EvalResult = Result<Value, (String, Span)>;

/// Evaluates a `#if` expression by precedence climbing.
pub(super) struct Eval<'t> {
    pub(super) toks: &'t [Spanned],
    pub(super) pos: usize,
    pub(super) depth: usize,
    /// False inside the unevaluated operand of `&&`, `||` and `?:` (no division errors).
    pub(super) live: bool,
    pub(super) end_span: Span,
}

impl Eval<'_> {
    fn peek(&self) -> Option<&Token> {
        self.toks.get(self.pos).map(|t| &t.token)
    }

    fn span(&self) -> Span {
        self.toks.get(self.pos).map_or(self.end_span, |t| t.span)
    }

    fn eat(&mut self, p: Punct) -> bool {
        if self.peek() == Some(&Token::Punct(p)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    pub(super) fn comma(&mut self) -> EvalResult {
        let mut v = self.conditional()?;
        while self.eat(Punct::Comma) {
            v = self.conditional()?;
        }
        Ok(v)
    }

    fn conditional(&mut self) -> EvalResult {
        let cond = self.binary(0)?;
        if !self.eat(Punct::Question) {
            return Ok(cond);
        }
        let live = self.live;
        self.live = live && cond.v != 0;
        let a = self.comma()?;
        if !self.eat(Punct::Colon) {
            return Err((
                "expected `:` in preprocessor expression".into(),
                self.span(),
            ));
        }
        self.live = live && cond.v == 0;
        let b = self.conditional()?;
        self.live = live;
        let unsigned = a.unsigned || b.unsigned;
        let v = if cond.v != 0 { a.v } else { b.v };
        Ok(Value { v, unsigned })
    }

    fn binary_op(&self) -> Option<(Punct, u8)> {
        let Some(Token::Punct(p)) = self.peek() else {
            return None;
        };
        let prec = match p {
            Punct::OrOr => 1,
            Punct::AndAnd => 2,
            Punct::Pipe => 3,
            Punct::Caret => 4,
            Punct::Amp => 5,
            Punct::EqEq | Punct::Ne => 6,
            Punct::Lt | Punct::Le | Punct::Gt | Punct::Ge => 7,
            Punct::Shl | Punct::Shr => 8,
            Punct::Plus | Punct::Minus => 9,
            Punct::Star | Punct::Slash | Punct::Percent => 10,
            _ => return None,
        };
        Some((*p, prec))
    }

    fn binary(&mut self, min_prec: u8) -> EvalResult {
        let mut lhs = self.unary()?;
        while let Some((op, prec)) = self.binary_op() {
            if prec <= min_prec {
                break;
            }
            let op_span = self.span();
            self.pos += 1;
            let live = self.live;
            if op == Punct::AndAnd {
                self.live = live && lhs.v != 0;
            } else if op == Punct::OrOr {
                self.live = live && lhs.v == 0;
            }
            let rhs = self.binary(prec)?;
            self.live = live;
            lhs = self.apply(op, lhs, rhs, op_span)?;
        }
        Ok(lhs)
    }

    fn apply(&self, op: Punct, a: Value, b: Value, span: Span) -> EvalResult {
        let unsigned = a.unsigned || b.unsigned;
        let (x, y) = (a.v, b.v);
        let (sx, sy) = (x as i64, y as i64);
        let arith = |v: u64| Value { v, unsigned };
        let v = match op {
            Punct::OrOr => Value::bool(x != 0 || y != 0),
            Punct::AndAnd => Value::bool(x != 0 && y != 0),
            Punct::Pipe => arith(x | y),
            Punct::Caret => arith(x ^ y),
            Punct::Amp => arith(x & y),
            Punct::EqEq => Value::bool(x == y),
            Punct::Ne => Value::bool(x != y),
            Punct::Lt => Value::bool(if unsigned { x < y } else { sx < sy }),
            Punct::Le => Value::bool(if unsigned { x <= y } else { sx <= sy }),
            Punct::Gt => Value::bool(if unsigned { x > y } else { sx > sy }),
            Punct::Ge => Value::bool(if unsigned { x >= y } else { sx >= sy }),
            Punct::Shl => Value {
                v: if y >= 64 { 0 } else { x << y },
                unsigned: a.unsigned,
            },
            Punct::Shr => Value {
                v: if a.unsigned {
                    x.checked_shr(y.min(64) as u32).unwrap_or(0)
                } else {
                    (sx >> y.min(63)) as u64
                },
                unsigned: a.unsigned,
            },
            Punct::Plus => arith(x.wrapping_add(y)),
            Punct::Minus => arith(x.wrapping_sub(y)),
            Punct::Star => arith(x.wrapping_mul(y)),
            Punct::Slash | Punct::Percent => {
                if y == 0 {
                    if self.live {
                        return Err(("division by zero in preprocessor expression".into(), span));
                    }
                    return Ok(arith(0));
                }
                let v = match (op, unsigned) {
                    (Punct::Slash, true) => x / y,
                    (Punct::Slash, false) => sx.wrapping_div(sy) as u64,
                    (_, true) => x % y,
                    (_, false) => sx.wrapping_rem(sy) as u64,
                };
                arith(v)
            }
            _ => arith(0),
        };
        Ok(v)
    }

    fn unary(&mut self) -> EvalResult {
        self.depth += 1;
        let result = if self.depth > MAX_IF_NESTING {
            Err((
                "preprocessor expression nested too deeply".into(),
                self.span(),
            ))
        } else {
            self.unary_inner()
        };
        self.depth -= 1;
        result
    }

    fn unary_inner(&mut self) -> EvalResult {
        let span = self.span();
        let Some(tok) = self.peek().cloned() else {
            return Err(("expected an expression in `#if`".into(), span));
        };
        self.pos += 1;
        match tok {
            Token::Punct(Punct::Minus) => {
                let v = self.unary()?;
                Ok(Value {
                    v: v.v.wrapping_neg(),
                    unsigned: v.unsigned,
                })
            }
            Token::Punct(Punct::Plus) => self.unary(),
            Token::Punct(Punct::Tilde) => {
                let v = self.unary()?;
                Ok(Value {
                    v: !v.v,
                    unsigned: v.unsigned,
                })
            }
            Token::Punct(Punct::Bang) => {
                let v = self.unary()?;
                Ok(Value::bool(v.v == 0))
            }
            Token::Punct(Punct::LParen) => {
                let v = self.comma()?;
                if !self.eat(Punct::RParen) {
                    return Err((
                        "expected `)` in preprocessor expression".into(),
                        self.span(),
                    ));
                }
                Ok(v)
            }
            Token::Int(text) => match parse_int(&text) {
                Ok(i) => Ok(Value {
                    v: i.value,
                    unsigned: i.unsigned || i.value > i64::MAX as u64,
                }),
                Err(message) => Err((message, span)),
            },
            Token::Char(c) => Ok(Value::signed(c as i64)),
            Token::Float(_) => Err((
                "floating-point literal in preprocessor expression".into(),
                span,
            )),
            other => Err((
                format!("unexpected `{}` in preprocessor expression", spell(&other)),
                span,
            )),
        }
    }
}
