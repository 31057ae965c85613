//! The lexer: one file's text to [`Spanned`] tokens.
//!
//! A hand-written scanner rather than a chumsky parser: it must see line continuations
//! (backslash-newline) inside any token, report where whitespace was (the preprocessor needs
//! `space_before` for `#define F(x)` versus `#define F (x)`) and emit a [`Token::Newline`] at
//! every line end, all of which are byte-level concerns that a scanner states most plainly.
//! It never fails: a bad character or an unterminated literal becomes a [`Diagnostic`] and
//! scanning goes on.
//!
//! The module also holds the parsing of numeric literal spellings into values, shared by the
//! preprocessor's `#if` evaluation and the parser.

use std::rc::Rc;

use crate::diag::Diagnostic;
use crate::source::{FileId, Span};
use crate::token::{Keyword, Punct, Spanned, Token};

/// Lexes one file. Emits [`Token::Newline`] at every line end (the preprocessor needs them);
/// backslash-newline is a line continuation (no `Newline`). Comments (`//` and `/* */`) are
/// skipped. Never panics; bad characters and unterminated literals become diagnostics and
/// lexing continues.
pub fn lex(file: FileId, text: &str) -> (Vec<Spanned>, Vec<Diagnostic>) {
    let mut lexer = Lexer {
        text,
        // A byte-order mark is not part of the source.
        pos: if text.starts_with('\u{feff}') { 3 } else { 0 },
        file,
        tokens: Vec::new(),
        diags: Vec::new(),
        space_before: true,
    };
    lexer.run();
    (lexer.tokens, lexer.diags)
}

struct Lexer<'a> {
    text: &'a str,
    pos: usize,
    file: FileId,
    tokens: Vec<Spanned>,
    diags: Vec<Diagnostic>,
    space_before: bool,
}

impl Lexer<'_> {
    /// The position of the next character after skipping line continuations at `pos`.
    fn skip_splices_from(&self, mut pos: usize) -> usize {
        let b = self.text.as_bytes();
        loop {
            if b.get(pos) == Some(&b'\\') {
                if b.get(pos + 1) == Some(&b'\n') {
                    pos += 2;
                    continue;
                }
                if b.get(pos + 1) == Some(&b'\r') && b.get(pos + 2) == Some(&b'\n') {
                    pos += 3;
                    continue;
                }
            }
            return pos;
        }
    }

    /// The character `n` places ahead (line continuations skipped) and the position after it.
    fn peek_at(&self, n: usize) -> Option<(char, usize)> {
        let mut pos = self.pos;
        for i in 0..=n {
            pos = self.skip_splices_from(pos);
            let c = self.text.get(pos..)?.chars().next()?;
            if i == n {
                return Some((c, pos + c.len_utf8()));
            }
            pos += c.len_utf8();
        }
        None
    }

    fn peek(&self) -> Option<char> {
        self.peek_at(0).map(|(c, _)| c)
    }

    fn peek2(&self) -> Option<char> {
        self.peek_at(1).map(|(c, _)| c)
    }

    fn bump(&mut self) -> Option<char> {
        let (c, next) = self.peek_at(0)?;
        self.pos = next;
        Some(c)
    }

    fn span(&self, start: usize) -> Span {
        Span::new(self.file, start, self.pos)
    }

    fn push(&mut self, token: Token, start: usize) {
        let span = self.span(start);
        self.tokens.push(Spanned {
            token,
            span,
            space_before: self.space_before,
        });
        self.space_before = false;
    }

    fn error(&mut self, message: impl Into<String>, label: &str, start: usize) {
        let span = self.span(start);
        self.diags
            .push(Diagnostic::error(message, span).with_label_message(label));
    }

    fn run(&mut self) {
        loop {
            self.pos = self.skip_splices_from(self.pos);
            let start = self.pos;
            let Some(c) = self.peek() else { break };
            match c {
                '\n' => {
                    self.bump();
                    self.space_before = true;
                    let span = self.span(start);
                    self.tokens.push(Spanned {
                        token: Token::Newline,
                        span,
                        space_before: true,
                    });
                }
                ' ' | '\t' | '\r' | '\x0b' | '\x0c' => {
                    self.bump();
                    self.space_before = true;
                }
                '/' if self.peek2() == Some('/') => {
                    while let Some(c) = self.peek() {
                        if c == '\n' {
                            break;
                        }
                        self.bump();
                    }
                    self.space_before = true;
                }
                '/' if self.peek2() == Some('*') => {
                    self.bump();
                    self.bump();
                    let mut closed = false;
                    while let Some(c) = self.bump() {
                        if c == '*' && self.peek() == Some('/') {
                            self.bump();
                            closed = true;
                            break;
                        }
                    }
                    if !closed {
                        self.pos = start + 2;
                        self.error(
                            "unterminated comment",
                            "this comment is never closed",
                            start,
                        );
                        self.pos = self.text.len();
                    }
                    self.space_before = true;
                }
                c if c == '_' || c.is_ascii_alphabetic() => self.ident(start),
                c if c.is_ascii_digit() => self.number(start),
                '.' if self.peek2().is_some_and(|c| c.is_ascii_digit()) => self.number(start),
                '"' => self.string(start),
                '\'' => self.char_lit(start),
                _ => {
                    if let Some(p) = self.punct() {
                        self.push(Token::Punct(p), start);
                    } else {
                        self.bad_chars(start);
                    }
                }
            }
        }
    }

    fn ident(&mut self, start: usize) {
        let mut name = String::new();
        while let Some(c) = self.peek() {
            if c == '_' || c.is_ascii_alphanumeric() {
                name.push(c);
                self.bump();
            } else {
                break;
            }
        }
        let token = match Keyword::from_str(&name) {
            Some(k) => Token::Keyword(k),
            None => Token::Ident(Rc::from(name)),
        };
        self.push(token, start);
    }

    /// A preprocessing number: digits, letters, `_`, `.`, and a sign right after an exponent
    /// letter (`e`/`E` in decimal, `p`/`P` in hexadecimal). Unlike C's pp-number, `0x1e+1` is
    /// three tokens, which is what a reader means.
    fn number(&mut self, start: usize) {
        let mut text = String::new();
        let hex = {
            let a = self.peek();
            let b = self.peek2();
            a == Some('0') && matches!(b, Some('x' | 'X'))
        };
        while let Some(c) = self.peek() {
            if c == '_' || c == '.' || c.is_ascii_alphanumeric() {
                text.push(c);
                self.bump();
                let exp = if hex {
                    matches!(c, 'p' | 'P')
                } else {
                    matches!(c, 'e' | 'E')
                };
                if exp && matches!(self.peek(), Some('+' | '-')) {
                    text.push(self.bump().unwrap_or('+'));
                }
            } else {
                break;
            }
        }
        let is_float = if hex {
            text.contains(['.', 'p', 'P'])
        } else if text.starts_with("0b") || text.starts_with("0B") {
            false
        } else {
            text.contains(['.', 'e', 'E'])
        };
        let token = if is_float {
            Token::Float(Rc::from(text))
        } else {
            Token::Int(Rc::from(text))
        };
        self.push(token, start);
    }

    /// Reads one escape sequence after a backslash; returns the code point.
    fn escape(&mut self) -> u32 {
        let Some(c) = self.bump() else {
            return '\\' as u32;
        };
        match c {
            'n' => 10,
            't' => 9,
            'r' => 13,
            'a' => 7,
            'b' => 8,
            'f' => 12,
            'v' => 11,
            'e' => 27,
            '0'..='7' => {
                let mut v = c.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match self.peek().and_then(|c| c.to_digit(8)) {
                        Some(d) => {
                            v = v * 8 + d;
                            self.bump();
                        }
                        None => break,
                    }
                }
                v
            }
            'x' => {
                let mut v: u32 = 0;
                while let Some(d) = self.peek().and_then(|c| c.to_digit(16)) {
                    v = v.wrapping_mul(16).wrapping_add(d);
                    self.bump();
                }
                v
            }
            'u' | 'U' => {
                let n = if c == 'u' { 4 } else { 8 };
                let mut v: u32 = 0;
                for _ in 0..n {
                    match self.peek().and_then(|c| c.to_digit(16)) {
                        Some(d) => {
                            v = v.wrapping_mul(16).wrapping_add(d);
                            self.bump();
                        }
                        None => break,
                    }
                }
                v
            }
            other => other as u32,
        }
    }

    fn string(&mut self, start: usize) {
        self.bump();
        let mut value = String::new();
        loop {
            match self.peek() {
                None | Some('\n') => {
                    self.error("unterminated string literal", "missing closing `\"`", start);
                    break;
                }
                Some('"') => {
                    self.bump();
                    break;
                }
                Some('\\') => {
                    self.bump();
                    let v = self.escape();
                    value.push(char::from_u32(v).unwrap_or('\u{fffd}'));
                }
                Some(c) => {
                    value.push(c);
                    self.bump();
                }
            }
        }
        self.push(Token::Str(Rc::from(value)), start);
    }

    fn char_lit(&mut self, start: usize) {
        self.bump();
        let mut value: u32 = 0;
        let mut count = 0;
        loop {
            match self.peek() {
                None | Some('\n') => {
                    self.error(
                        "unterminated character literal",
                        "missing closing `'`",
                        start,
                    );
                    break;
                }
                Some('\'') => {
                    self.bump();
                    break;
                }
                Some('\\') => {
                    self.bump();
                    let v = self.escape();
                    value = value.wrapping_shl(8) | (v & 0xff);
                    if count == 0 {
                        value = v;
                    }
                    count += 1;
                }
                Some(c) => {
                    self.bump();
                    value = if count == 0 {
                        c as u32
                    } else {
                        value.wrapping_shl(8) | (c as u32 & 0xff)
                    };
                    count += 1;
                }
            }
        }
        if count == 0 && self.pos > start + 1 {
            self.error(
                "empty character literal",
                "a character literal needs a character",
                start,
            );
        }
        self.push(Token::Char(value), start);
    }

    /// The longest punctuator at the current position, consumed.
    fn punct(&mut self) -> Option<Punct> {
        let mut chars = [None; 3];
        for (i, slot) in chars.iter_mut().enumerate() {
            *slot = self.peek_at(i).map(|(c, _)| c);
        }
        'outer: for &p in Punct::ALL {
            let s = p.as_str();
            for (i, want) in s.chars().enumerate() {
                if chars.get(i).copied().flatten() != Some(want) {
                    continue 'outer;
                }
            }
            for _ in 0..s.len() {
                self.bump();
            }
            return Some(p);
        }
        None
    }

    /// Skips a run of characters that start no token and reports them once.
    fn bad_chars(&mut self, start: usize) {
        let mut shown = String::new();
        while let Some(c) = self.peek() {
            let starts_token = c.is_ascii_alphanumeric()
                || c.is_ascii_whitespace()
                || matches!(c, '_' | '"' | '\'')
                || Punct::ALL.iter().any(|p| p.as_str().starts_with(c));
            if !shown.is_empty() && starts_token {
                break;
            }
            if c == '\\' && !shown.is_empty() && self.skip_splices_from(self.pos) != self.pos {
                break;
            }
            shown.push(c);
            self.bump();
            if shown.len() > 64 {
                break;
            }
        }
        let message = if shown.chars().count() == 1 {
            format!("unexpected character `{}`", shown.escape_debug())
        } else {
            format!("unexpected characters `{}`", shown.escape_debug())
        };
        self.error(message, "not valid in MSL source", start);
        self.space_before = true;
    }
}

/// The value and suffix flags of an integer literal spelling (`16`, `0xffu`, `1ul`, `0b101`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct IntValue {
    pub value: u64,
    pub unsigned: bool,
    pub long: bool,
    pub non_decimal: bool,
}

/// Parses an integer literal's spelling; the error is a complete diagnostic message.
pub(crate) fn parse_int(text: &str) -> Result<IntValue, String> {
    let lower = text.to_ascii_lowercase();
    let (radix, digits_start) = if lower.starts_with("0x") {
        (16, 2)
    } else if lower.starts_with("0b") {
        (2, 2)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (8, 1)
    } else {
        (10, 0)
    };
    let body = &lower[digits_start..];
    let digits_end = body
        .find(|c: char| !(c.is_ascii_hexdigit() && (radix == 16 || c.is_ascii_digit())))
        .unwrap_or(body.len());
    let (digits, suffix) = body.split_at(digits_end);
    let (unsigned, long) = match suffix {
        "" => (false, false),
        "u" => (true, false),
        "l" | "ll" => (false, true),
        "ul" | "lu" | "ull" | "llu" => (true, true),
        _ => {
            let shown = &text[text.len() - suffix.len()..];
            return Err(format!(
                "invalid suffix `{shown}` on integer literal `{text}`"
            ));
        }
    };
    if digits.is_empty() {
        if radix == 8 {
            // "0" followed by a suffix, e.g. `0u`.
            return Ok(IntValue {
                value: 0,
                unsigned,
                long,
                non_decimal: false,
            });
        }
        return Err(format!("integer literal `{text}` has no digits"));
    }
    let mut value: u64 = 0;
    for c in digits.chars() {
        let d = c.to_digit(radix).ok_or_else(|| {
            let base = match radix {
                8 => "octal",
                2 => "binary",
                _ => "decimal",
            };
            format!("invalid digit `{c}` in {base} literal `{text}`")
        })?;
        value = value
            .checked_mul(radix as u64)
            .and_then(|v| v.checked_add(d as u64))
            .ok_or_else(|| format!("integer literal `{text}` is too large"))?;
    }
    Ok(IntValue {
        value,
        unsigned,
        long,
        non_decimal: radix != 10,
    })
}

/// Parses a floating literal's spelling (`1.0f`, `1.f`, `.5`, `1e-3f`, `2.0h`, `0x1.8p1f`)
/// into its exact value and lower-cased suffix (`f` or `h`).
pub(crate) fn parse_float(text: &str) -> Result<(f64, Option<char>), String> {
    let lower = text.to_ascii_lowercase();
    let hex = lower.starts_with("0x");
    let (body, suffix) = match lower.chars().last() {
        Some('f') if !hex || lower.contains('p') => (&lower[..lower.len() - 1], Some('f')),
        Some('h') => (&lower[..lower.len() - 1], Some('h')),
        Some('l') => (&lower[..lower.len() - 1], None),
        _ => (lower.as_str(), None),
    };
    let bad = || format!("invalid floating-point literal `{text}`");
    if hex {
        return parse_hex_float(body.get(2..).unwrap_or(""))
            .map(|v| (v, suffix))
            .ok_or_else(bad);
    }
    if body.is_empty()
        || !body
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | '+' | '-'))
    {
        return Err(bad());
    }
    body.parse::<f64>().map(|v| (v, suffix)).map_err(|_| bad())
}

/// `1.8p3` (without `0x`) to its value; exact for mantissas of up to 64 bits.
fn parse_hex_float(body: &str) -> Option<f64> {
    let (mant, exp) = match body.find('p') {
        Some(i) => (&body[..i], body[i + 1..].parse::<i32>().ok()?),
        None => (body, 0),
    };
    let (int_part, frac_part) = match mant.find('.') {
        Some(i) => (&mant[..i], &mant[i + 1..]),
        None => (mant, ""),
    };
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    let mut m: u64 = 0;
    let mut shift: i32 = 0;
    for c in int_part.chars().chain(frac_part.chars()) {
        let d = c.to_digit(16)? as u64;
        if m >> 60 == 0 {
            m = m * 16 + d;
        } else {
            shift = shift.saturating_add(4);
        }
    }
    let frac_bits = 4 * frac_part.len().min(1 << 20) as i32;
    let e = exp.saturating_add(shift).saturating_sub(frac_bits);
    Some(m as f64 * 2f64.powi(e))
}

/// How a token is spelled in source (strings and characters re-escaped), for stringizing,
/// token pasting and messages.
pub(crate) fn spell(token: &Token) -> String {
    match token {
        Token::Ident(s) | Token::Int(s) | Token::Float(s) => s.to_string(),
        Token::Keyword(k) => k.as_str().to_string(),
        Token::Punct(p) => p.as_str().to_string(),
        Token::Str(s) => {
            let mut out = String::from("\"");
            for c in s.chars() {
                match c {
                    '"' => out.push_str("\\\""),
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    '\t' => out.push_str("\\t"),
                    c => out.push(c),
                }
            }
            out.push('"');
            out
        }
        Token::Char(c) => match char::from_u32(*c) {
            Some('\'') => "'\\''".to_string(),
            Some('\\') => "'\\\\'".to_string(),
            Some('\n') => "'\\n'".to_string(),
            Some(ch) if !ch.is_control() => format!("'{ch}'"),
            _ => format!("'\\x{c:x}'"),
        },
        Token::Newline => "\n".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lexes `src` and compares a compact rendering with `expect`: per token its kind,
    /// spelling, for numbers `=` and the parsed value (`u`, `l` flags, `#` for
    /// non-decimal) or `=!` and the error, and its byte span; `|` marks a space before a
    /// token, `\n` a newline token. Diagnostics follow, one per line.
    fn check(src: &str, expect: &str) {
        let (tokens, diags) = lex(FileId(0), src);
        let mut out = String::new();
        for t in &tokens {
            if !out.is_empty() {
                out.push(' ');
            }
            if t.space_before && t.token != Token::Newline {
                out.push('|');
            }
            match &t.token {
                Token::Newline => out.push_str("\\n"),
                Token::Char(c) => out.push_str(&format!("char:{c}")),
                Token::Int(text) => {
                    let value = match parse_int(text) {
                        Ok(v) => format!(
                            "{}{}{}{}",
                            v.value,
                            if v.unsigned { "u" } else { "" },
                            if v.long { "l" } else { "" },
                            if v.non_decimal { "#" } else { "" }
                        ),
                        Err(e) => format!("!{e}"),
                    };
                    out.push_str(&format!("int:{text}={value}"));
                }
                Token::Float(text) => {
                    let value = match parse_float(text) {
                        Ok((v, s)) => format!("{v:?}{}", s.map(String::from).unwrap_or_default()),
                        Err(e) => format!("!{e}"),
                    };
                    out.push_str(&format!("float:{text}={value}"));
                }
                tok => {
                    let kind = match tok {
                        Token::Ident(_) => "id",
                        Token::Keyword(_) => "kw",
                        Token::Str(_) => "str",
                        _ => "p",
                    };
                    out.push_str(&format!("{kind}:{}", spell(tok)));
                }
            }
            out.push_str(&format!("@{}..{}", t.span.start, t.span.end));
        }
        for d in &diags {
            let s = d.span().unwrap_or_default();
            out.push_str(&format!("\nerror@{}..{}: {}", s.start, s.end, d.message));
        }
        assert_eq!(out, expect, "\nsource: {src:?}");
    }

    #[test]
    fn identifiers_keywords_and_punctuation() {
        check(
            "kernel void f(device float* a)",
            "|kw:kernel@0..6 |kw:void@7..11 |id:f@12..13 p:(@13..14 kw:device@14..20 |id:float@21..26 p:*@26..27 |id:a@28..29 p:)@29..30",
        );
    }

    #[test]
    fn longest_punctuator_wins() {
        check(
            "a<<=b>>c->d...",
            "|id:a@0..1 p:<<=@1..4 id:b@4..5 p:>>@5..7 id:c@7..8 p:->@8..10 id:d@10..11 p:...@11..14",
        );
    }

    #[test]
    fn newlines_are_tokens_and_continuations_are_not() {
        check(
            "#define A 1 \\\n + 2\nA",
            "|p:#@0..1 id:define@1..7 |id:A@8..9 |int:1=1@10..11 |p:+@15..16 |int:2=2@17..18 \\n@18..19 |id:A@19..20",
        );
    }

    #[test]
    fn continuation_inside_an_identifier() {
        check("ab\\\ncd", "|id:abcd@0..6");
    }

    #[test]
    fn comments_are_whitespace() {
        check(
            "a// x \nb/* y\n z */c",
            "|id:a@0..1 \\n@6..7 |id:b@7..8 |id:c@18..19",
        );
    }

    #[test]
    fn unterminated_comment() {
        check("a /* x", "|id:a@0..1\nerror@2..4: unterminated comment");
    }

    #[test]
    fn numbers() {
        check(
            "1 0xffu 1.0f 1.f .5 1e-3f 2.0h 0x1e+1 0x1p-2",
            "|int:1=1@0..1 |int:0xffu=255u#@2..7 |float:1.0f=1.0f@8..12 |float:1.f=1.0f@13..16 |float:.5=0.5@17..19 |float:1e-3f=0.001f@20..25 |float:2.0h=2.0h@26..30 |int:0x1e=30#@31..35 p:+@35..36 int:1=1@36..37 |float:0x1p-2=0.25@38..44",
        );
    }

    #[test]
    fn integer_literals() {
        check(
            "1ul 1LU 017 0b101 0 0u 18446744073709551615u",
            "|int:1ul=1ul@0..3 |int:1LU=1ul@4..7 |int:017=15#@8..11 |int:0b101=5#@12..17 |int:0=0@18..19 |int:0u=0u@20..22 |int:18446744073709551615u=18446744073709551615u@23..44",
        );
    }

    #[test]
    fn bad_integer_literals() {
        check(
            "18446744073709551616 09 1f 0x",
            "|int:18446744073709551616=!integer literal `18446744073709551616` is too large@0..20 |int:09=!invalid digit `9` in octal literal `09`@21..23 |int:1f=!invalid suffix `f` on integer literal `1f`@24..26 |int:0x=!integer literal `0x` has no digits@27..29",
        );
    }

    #[test]
    fn float_literals() {
        check(
            "1.5E+2F 0.1 0x1.8p1 0x1p-2f 1.2.3 1.0q",
            "|float:1.5E+2F=150.0f@0..7 |float:0.1=0.1@8..11 |float:0x1.8p1=3.0@12..19 |float:0x1p-2f=0.25f@20..27 |float:1.2.3=!invalid floating-point literal `1.2.3`@28..33 |float:1.0q=!invalid floating-point literal `1.0q`@34..38",
        );
    }

    #[test]
    fn strings_and_chars() {
        check(
            r#""a\"b\n" 'x' '\n' '\0'"#,
            r#"|str:"a\"b\n"@0..8 |char:120@9..12 |char:10@13..17 |char:0@18..22"#,
        );
    }

    #[test]
    fn unterminated_string_stops_at_line_end() {
        check(
            "\"abc\nx",
            "|str:\"abc\"@0..4 \\n@4..5 |id:x@5..6\nerror@0..4: unterminated string literal",
        );
    }

    #[test]
    fn unterminated_literals_at_the_end() {
        check(
            "'\\",
            "|char:92@0..2\nerror@0..2: unterminated character literal",
        );
        check(
            "\"\\u12",
            "|str:\"\u{12}\"@0..5\nerror@0..5: unterminated string literal",
        );
        check("''", "|char:0@0..2\nerror@0..2: empty character literal");
    }

    #[test]
    fn bad_characters_are_reported_once_per_run() {
        check(
            "a @@ b é",
            "|id:a@0..1 |id:b@5..6\nerror@2..4: unexpected characters `@@`\nerror@7..9: unexpected character `é`",
        );
    }

    #[test]
    fn stray_backslash() {
        check(
            "a \\ b",
            "|id:a@0..1 |id:b@4..5\nerror@2..3: unexpected character `\\\\`",
        );
    }

    #[test]
    fn byte_order_mark_is_skipped() {
        check("\u{feff}x", "|id:x@3..4");
    }

    #[test]
    fn nul_and_lone_continuation() {
        check("\u{0}\\\r\n", "\nerror@0..1: unexpected character `\\0`");
    }
}
