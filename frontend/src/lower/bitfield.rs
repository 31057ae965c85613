//! Bit-fields: where clang puts them (the Itanium C++ ABI's rules, little-endian, as on
//! Apple's targets), the storage words that hold them, and reading and writing one.
//!
//! Layout, member by member in declaration order:
//! - a bit-field of declared type `T` (`S` bits) goes at the next free bit unless its bits
//!   would straddle an `S`-bit boundary (its allocation unit), then at that boundary;
//! - an unnamed `T : 0` moves the next free bit up to the next `S`-bit boundary;
//! - a named bit-field contributes `alignof(T)` to the struct's alignment; an unnamed one
//!   does not;
//! - an ordinary member after bit-fields starts at the first byte after the last bit used,
//!   aligned as usual (so it can share a bit-field's unit: `uint a : 4; uchar c;` puts `c`
//!   at byte 1).
//!
//! The bytes the named bit-fields of a run use become hidden struct fields (the storage
//! words: the widest naturally aligned unsigned words, no wider than the run's widest
//! declared type, that tile each stretch of used bytes), so struct values keep living in
//! registers leaf by leaf and in memory byte for byte. A bit-field's place reads its words,
//! shifts and masks (sign-extending a signed field); a write reads, merges and writes back
//! each word it touches.

use metalsim_isa::{Op, Value};

use crate::ast;
use crate::lower::consteval::Const;
use crate::lower::types::{Scalar, StructId, StructInfo, Ty};
use crate::lower::{DeclType, FnLowerer, Operand, Place};
use crate::source::Span;

/// The name of a hidden field holding bit-field storage (no identifier can spell it).
pub const STORAGE_FIELD: &str = "<bit-field storage>";

/// A named bit-field member of a struct.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct BitField {
    /// Its name.
    pub name: String,
    /// Its declared integer (or `bool`) type.
    pub ty: Scalar,
    /// Its first bit, counted from bit 0 of the struct's first byte.
    pub bit_offset: u32,
    /// Its width in bits (1 to the bits of its type).
    pub width: u32,
    /// The storage words holding its bits: byte offset in the struct and unsigned type.
    pub words: Vec<(u32, Scalar)>,
    /// Its position in declaration order: the number of (flattened) fields before it, for
    /// aggregate initialization.
    pub decl_pos: usize,
}

/// A member that aggregate initialization sets, in declaration order.
#[derive(Clone, Debug)]
pub enum InitMember {
    /// An ordinary field, by flattened index.
    Field(usize),
    /// A named bit-field.
    Bits(BitField),
}

/// The members of a struct from flattened field `first` on, in declaration order: its
/// fields (not the bit-field storage) with its named bit-fields among them.
pub fn init_members(info: &StructInfo, first: usize) -> Vec<InitMember> {
    let mut out = Vec::new();
    let bits_at = |pos: usize| {
        info.bit_fields
            .iter()
            .filter(move |b| b.decl_pos == pos)
            .cloned()
            .map(InitMember::Bits)
    };
    for (i, (name, _, _)) in info.fields.iter().enumerate().skip(first) {
        out.extend(bits_at(i));
        if name != STORAGE_FIELD {
            out.push(InitMember::Field(i));
        }
    }
    out.extend(bits_at(info.fields.len()));
    out
}

/// Writes the low `field.width` bits of `value` into a struct's bytes at `base`.
pub fn write_bits(out: &mut [u8], base: u32, field: &BitField, value: u64) {
    for k in 0..field.width {
        let bit = base as usize * 8 + (field.bit_offset + k) as usize;
        if let Some(byte) = out.get_mut(bit / 8) {
            let m = 1u8 << (bit % 8);
            if (value >> k) & 1 == 1 {
                *byte |= m;
            } else {
                *byte &= !m;
            }
        }
    }
}

/// The value of a bit-field in a struct's bytes (the counterpart of [`write_bits`]):
/// sign-extended from its width when its type is signed, as a load of it is.
pub fn read_bits(bytes: &[u8], field: &BitField) -> u64 {
    let mut v = 0u64;
    for k in 0..field.width {
        let bit = (field.bit_offset + k) as usize;
        if bytes
            .get(bit / 8)
            .is_some_and(|b| (b >> (bit % 8)) & 1 == 1)
        {
            v |= 1 << k;
        }
    }
    let unused = 64 - field.width.clamp(1, 64);
    if field.ty.is_signed() {
        v = ((v << unused) as i64 >> unused) as u64;
    }
    v
}

/// Where the next bit-field of `width` bits and `unit_bits`-bit declared type goes when
/// the next free bit is `cursor`: the bit offset it takes (a zero width only aligns).
pub fn place_bit_field(cursor: u64, width: u32, unit_bits: u32) -> u64 {
    let unit = unit_bits as u64;
    let straddles = width > 0 && cursor / unit != (cursor + width as u64 - 1) / unit;
    if width == 0 || straddles {
        cursor.div_ceil(unit) * unit
    } else {
        cursor
    }
}

/// The storage words that tile the bytes `fields` use: each stretch of consecutive used
/// bytes split into the widest naturally aligned words of at most `max_word` bytes.
pub fn storage_words(fields: &[BitField], max_word: u32) -> Vec<(u32, Scalar)> {
    let mut used: Vec<u32> = fields
        .iter()
        .flat_map(|f| f.bit_offset / 8..=(f.bit_offset + f.width - 1) / 8)
        .collect();
    used.sort_unstable();
    used.dedup();
    let mut words = Vec::new();
    let mut i = 0;
    while i < used.len() {
        let start = used[i];
        let mut end = start + 1;
        while i + 1 < used.len() && used[i + 1] == end {
            end += 1;
            i += 1;
        }
        i += 1;
        let mut at = start;
        while at < end {
            let (size, word) = [
                (8, Scalar::ULong),
                (4, Scalar::UInt),
                (2, Scalar::UShort),
                (1, Scalar::UChar),
            ]
            .into_iter()
            .find(|(size, _)| *size <= max_word && at.is_multiple_of(*size) && at + size <= end)
            .unwrap_or((1, Scalar::UChar));
            words.push((at, word));
            at += size;
        }
    }
    words
}

/// The words among `words` that hold some of `field`'s bits.
pub fn words_of(field: &BitField, words: &[(u32, Scalar)]) -> Vec<(u32, Scalar)> {
    let (lo, hi) = (field.bit_offset, field.bit_offset + field.width);
    words
        .iter()
        .filter(|(off, w)| off * 8 < hi && (off + w.size()) * 8 > lo)
        .copied()
        .collect()
}

impl FnLowerer<'_, '_> {
    /// The named bit-field `name` of class `id` (its own or a base's).
    pub fn bit_field(&self, id: StructId, name: &str) -> Option<BitField> {
        self.g
            .structs
            .get(id)
            .bit_fields
            .iter()
            .rev()
            .find(|f| f.name == name)
            .cloned()
    }

    /// `base.name` for a bit-field `field`: a place of an object's bit-field, or the
    /// bit-field's value read out of a struct value.
    pub fn bit_field_operand(
        &mut self,
        base: Operand,
        field: BitField,
        span: Span,
    ) -> Option<Operand> {
        let (place, is_value) = match base {
            Operand::Place { place, .. } => (place, false),
            Operand::Value(v) => (self.temp(&v, true), true),
        };
        let place = Place::BitField {
            base: Box::new(place),
            field: Box::new(field),
        };
        if is_value {
            return self.load(&place, span).map(Operand::Value);
        }
        Some(Operand::Place {
            place,
            cached: None,
        })
    }

    /// Checks a bit-field declaration and returns its width: an integer constant from 0
    /// (unnamed only) to the bits of its integer (or `bool`) type.
    pub fn bit_field_width(
        &mut self,
        f: &ast::Field,
        d: &DeclType,
        width: &ast::Expr,
    ) -> Option<u32> {
        let name = &f.name.name;
        let what = if name.is_empty() {
            "an unnamed bit-field".to_string()
        } else {
            format!("bit-field `{name}`")
        };
        let t = match &d.ty {
            Ty::Scalar(t) if !d.is_ref && (t.is_int() || *t == Scalar::Bool) => *t,
            other => {
                let shown = self.show(other);
                self.error(
                    format!("{what} has the type `{shown}`; a bit-field must have an integer or `bool` type"),
                    f.span,
                );
                return None;
            }
        };
        let c = self.const_expr(width, "a bit-field width")?;
        if c.ty.is_float() {
            self.error(
                format!("the width of {what} must be an integer"),
                width.span,
            );
            return None;
        }
        let w = c.as_i128();
        let bits = t.size() * 8;
        let fail = if w < 0 {
            Some(format!("{what} has a negative width ({w})"))
        } else if w > bits as i128 {
            Some(format!(
                "{what} is wider than its type (`{t}` has {bits} bits, the width is {w})"
            ))
        } else if w == 0 && !name.is_empty() {
            Some(format!("named {what} has zero width"))
        } else if f.init.is_some() {
            Some(format!(
                "{what} cannot have a default member initializer: that is C++20, and MSL is based on C++14 (MSL 1.4)"
            ))
        } else {
            None
        };
        if let Some(message) = fail {
            self.error(message, width.span);
            return None;
        }
        Some(w as u32)
    }

    /// Reads a bit-field of the object at `obj`.
    pub fn load_bit_field(&mut self, obj: &Place, field: &BitField, span: Span) -> Option<Value> {
        let mut words = Vec::with_capacity(field.words.len());
        for (off, w) in &field.words {
            let p = self.word_place(obj, *off, *w, &field.name, span)?;
            words.push(self.load(&p, span)?.parts[0]);
        }
        Some(self.extract_bits(field, &words))
    }

    /// Writes `v` (of the bit-field's declared type) to a bit-field of the object at `obj`.
    pub fn store_bit_field(
        &mut self,
        obj: &Place,
        field: &BitField,
        v: Value,
        span: Span,
    ) -> Option<()> {
        let mut places = Vec::with_capacity(field.words.len());
        let mut old = Vec::with_capacity(field.words.len());
        for (off, w) in &field.words {
            let p = self.word_place(obj, *off, *w, &field.name, span)?;
            old.push(self.load(&p, span)?.parts[0]);
            places.push(p);
        }
        let new = self.insert_bits(field, &old, v);
        for (p, n) in places.iter().zip(new) {
            let ty = self.place_ty(p);
            self.store(p, &crate::lower::Val { ty, parts: vec![n] }, span)?;
        }
        Some(())
    }

    /// A bit-field's value from the values of its storage words.
    pub fn extract_bits(&mut self, field: &BitField, words: &[Value]) -> Value {
        let wide = work_type(field);
        let bits = wide.size() * 8;
        let mut acc: Option<Value> = None;
        for ((off, w), v) in field.words.iter().zip(words) {
            let x = self.scalar_cvt(*v, *w, wide);
            let x = self.shift_to_field(x, wide, off * 8, field.bit_offset);
            acc = Some(match acc {
                None => x,
                Some(a) => self.s.val(Op::Or, wide.isa(), &[a, x]),
            });
        }
        let acc = acc.unwrap_or_else(|| self.constant(Const::int(wide, 0)));
        let rest = bits - field.width;
        if field.ty.is_signed() {
            // Sign-extend: the field's top bit to the register's top, then back down.
            let signed = match wide {
                Scalar::ULong => Scalar::Long,
                _ => Scalar::Int,
            };
            let x = self.scalar_cvt(acc, wide, signed);
            let x = self.shift(Op::Shl, x, signed, rest);
            let x = self.shift(Op::Shr, x, signed, rest);
            return self.scalar_cvt(x, signed, field.ty);
        }
        let x = if rest == 0 {
            acc
        } else {
            let m = self.constant(Const::int(wide, low_mask(field.width) as i128));
            self.s.val(Op::And, wide.isa(), &[acc, m])
        };
        self.scalar_cvt(x, wide, field.ty)
    }

    /// The new values of a bit-field's storage words (`old`) once `v` (of its declared
    /// type) is written to it: the field's bits replaced, the others kept.
    pub fn insert_bits(&mut self, field: &BitField, old: &[Value], v: Value) -> Vec<Value> {
        let wide = work_type(field);
        let val = self.scalar_cvt(v, field.ty, wide);
        let mut out = Vec::with_capacity(old.len());
        for ((off, w), o) in field.words.iter().zip(old) {
            let word_bit = off * 8;
            let placed = if word_bit >= field.bit_offset {
                self.shift(Op::Shr, val, wide, word_bit - field.bit_offset)
            } else {
                self.shift(Op::Shl, val, wide, field.bit_offset - word_bit)
            };
            let lo = field.bit_offset.max(word_bit) - word_bit;
            let hi = (field.bit_offset + field.width).min(word_bit + w.size() * 8) - word_bit;
            let mask = low_mask(hi - lo) << lo;
            let m = self.constant(Const::int(wide, mask as i128));
            let keep = self.constant(Const::int(wide, (!mask & low_mask(w.size() * 8)) as i128));
            let placed = self.s.val(Op::And, wide.isa(), &[placed, m]);
            let o = self.scalar_cvt(*o, *w, wide);
            let kept = self.s.val(Op::And, wide.isa(), &[o, keep]);
            let merged = self.s.val(Op::Or, wide.isa(), &[kept, placed]);
            out.push(self.scalar_cvt(merged, wide, *w));
        }
        out
    }

    /// `x` (a word whose bit 0 is bit `word_bit` of the struct) shifted so that bit
    /// `field_bit` of the struct lands on bit 0.
    fn shift_to_field(&mut self, x: Value, ty: Scalar, word_bit: u32, field_bit: u32) -> Value {
        if word_bit >= field_bit {
            self.shift(Op::Shl, x, ty, word_bit - field_bit)
        } else {
            self.shift(Op::Shr, x, ty, field_bit - word_bit)
        }
    }

    fn shift(&mut self, op: Op, x: Value, ty: Scalar, by: u32) -> Value {
        if by == 0 {
            return x;
        }
        let c = self.constant(Const::int(ty, by as i128));
        self.s.val(op, ty.isa(), &[x, c])
    }

    /// The place of the storage word at byte `off` (of type `word`) of a struct object.
    fn word_place(
        &mut self,
        obj: &Place,
        off: u32,
        word: Scalar,
        name: &str,
        span: Span,
    ) -> Option<Place> {
        match obj {
            Place::Mem {
                addr,
                offset,
                space,
                is_const,
                ..
            } => Some(Place::Mem {
                ty: Ty::Scalar(word),
                addr: *addr,
                offset: offset + off,
                space: *space,
                is_const: *is_const,
            }),
            Place::Var {
                ty,
                slots,
                is_const,
            } => {
                let leaves = self.g.structs.leaves(ty);
                let Some(i) = leaves
                    .iter()
                    .position(|(t, o)| *o == off && *t == word.isa())
                else {
                    self.error(
                        format!("the bit-field `{name}` can only be accessed in memory here"),
                        span,
                    );
                    return None;
                };
                Some(Place::Var {
                    ty: Ty::Scalar(word),
                    slots: vec![slots[i]],
                    is_const: *is_const,
                })
            }
            _ => {
                self.error(
                    format!("the bit-field `{name}` cannot be accessed through this object"),
                    span,
                );
                None
            }
        }
    }
}

/// The unsigned register type bit-field arithmetic runs in: 64 bits when the field or one
/// of its words is that wide, else 32.
fn work_type(field: &BitField) -> Scalar {
    if field.ty.size() == 8 || field.words.iter().any(|(_, w)| w.size() == 8) {
        Scalar::ULong
    } else {
        Scalar::UInt
    }
}

/// The low `n` bits set (`n` up to 64).
fn low_mask(n: u32) -> u64 {
    if n >= 64 { u64::MAX } else { (1u64 << n) - 1 }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Compiles `struct S { members };` with a program-scope constant of it per member,
    /// that member all ones and the others zero, and checks `sizeof`/`alignof` and each
    /// constant's bytes against the member's expected bits (`(first bit, width)` per
    /// initializable member, in declaration order). Returns the diagnostics on failure.
    fn check(members: &str, size: u32, align: u32, bits: &[(u32, u32)]) -> Result<(), String> {
        let mut src = format!(
            "struct S {{ {members} }};\n\
             static_assert(sizeof(S) == {size} && alignof(S) == {align}, \"size or alignment\");\n"
        );
        for k in 0..bits.len() {
            let init: Vec<&str> = (0..bits.len())
                .map(|j| if j == k { "-1" } else { "0" })
                .collect();
            src += &format!("constant S c{k} = {{{}}};\n", init.join(", "));
        }
        src += "kernel void k(device uint* o [[buffer(0)]]) { o[0] = 0";
        for k in 0..bits.len() {
            src += &format!(" + uint(sizeof(c{k}))");
        }
        src += "; }\n";
        let (m, diags, sources) = crate::compile_str("t.metal", &src);
        let isa = match m {
            Some(m) if !crate::has_errors(&diags) => m.to_string(),
            _ => return Err(crate::render_short(&diags, &sources)),
        };
        for (k, (first, width)) in bits.iter().enumerate() {
            let mut want = vec![0u8; size as usize];
            for b in *first..first + width {
                want[b as usize / 8] |= 1 << (b % 8);
            }
            let hex: String = want.iter().map(|b| format!("{b:02x}")).collect();
            let line = format!("\"c{k}\" x\"{hex}\"");
            if !isa.contains(&line) {
                return Err(format!("member {k}: want {line} in\n{isa}"));
            }
        }
        Ok(())
    }

    /// Members, `sizeof`, `alignof`, and each initializable member's `(first bit, width)`.
    type LayoutCase = (&'static str, u32, u32, &'static [(u32, u32)]);

    #[test]
    fn layouts_follow_the_itanium_rules() {
        // (members, sizeof, alignof, each member's bits), derived by hand; the rule each
        // case checks is beside it.
        let table: &[LayoutCase] = &[
            // Consecutive fields fill a unit from bit 0 (little-endian).
            ("uint kind : 4; uint count : 28;", 4, 4, &[(0, 4), (4, 28)]),
            // A field that would straddle its unit starts the next one.
            ("uint a : 30; uint b : 4;", 8, 4, &[(0, 30), (32, 4)]),
            ("uchar a : 7; uchar b : 2;", 2, 1, &[(0, 7), (8, 2)]),
            ("ulong a : 40; uint b : 30;", 16, 8, &[(0, 40), (64, 30)]),
            // Units are per declared type: a wider type's field shares the bytes before it.
            ("uchar a : 4; uint b : 8;", 4, 4, &[(0, 4), (4, 8)]),
            ("bool f : 1; int x : 31;", 4, 4, &[(0, 1), (1, 31)]),
            // `T : 0` moves to the next unit of T and takes no name.
            (
                "uint a : 4; uint : 0; uint b : 4;",
                8,
                4,
                &[(0, 4), (32, 4)],
            ),
            (
                "ushort a : 3; ushort : 0; uchar b : 6;",
                4,
                2,
                &[(0, 3), (16, 6)],
            ),
            // A bit-field after an ordinary member shares that member's unit...
            ("uchar c; uint a : 12;", 4, 4, &[(0, 8), (8, 12)]),
            // ...and an ordinary member after bit-fields starts at the next free byte.
            ("uint a : 4; uchar c;", 4, 4, &[(0, 4), (8, 8)]),
            // An unnamed bit-field takes bits but adds no alignment.
            ("uchar c; uint : 20; uchar d;", 5, 1, &[(0, 8), (32, 8)]),
            // A signed field keeps its width (all ones is -1 in 5 bits).
            ("int s : 5; short t : 9;", 4, 4, &[(0, 5), (5, 9)]),
        ];
        for (members, size, align, bits) in table {
            if let Err(e) = check(members, *size, *align, bits) {
                panic!("`{members}`: {e}");
            }
        }
    }

    #[test]
    fn storage_words_are_the_widest_aligned_words_of_the_used_bytes() {
        let field = |bit_offset, width| BitField {
            name: "f".into(),
            ty: Scalar::UInt,
            bit_offset,
            width,
            words: Vec::new(),
            decl_pos: 0,
        };
        // Bytes 1..=3: a byte, then a half-word (no word at an odd offset).
        let f = field(8, 17);
        let words = storage_words(std::slice::from_ref(&f), 4);
        assert_eq!(words, [(1, Scalar::UChar), (2, Scalar::UShort)]);
        assert_eq!(words_of(&f, &words), words);
        // Two stretches, and never wider than the widest declared type.
        let (a, b) = (field(0, 32), field(64, 8));
        let words = storage_words(&[a.clone(), b.clone()], 2);
        assert_eq!(
            words,
            [(0, Scalar::UShort), (2, Scalar::UShort), (8, Scalar::UChar)]
        );
        assert_eq!(words_of(&b, &words), [(8, Scalar::UChar)]);
        assert_eq!(place_bit_field(30, 4, 32), 32);
        assert_eq!(place_bit_field(33, 0, 16), 48);
        assert_eq!(place_bit_field(4, 28, 32), 4);
    }

    #[test]
    fn bit_field_misuse_is_reported() {
        let err = check("float f : 3;", 4, 4, &[]).unwrap_err();
        assert!(err.contains("a bit-field must have an integer"), "{err}");
        let err = check("uint w : 33;", 4, 4, &[]).unwrap_err();
        assert!(
            err.contains("bit-field `w` is wider than its type"),
            "{err}"
        );
        let err = check("uint n : 0;", 4, 4, &[]).unwrap_err();
        assert!(err.contains("named bit-field `n` has zero width"), "{err}");
        let err = check("uint a : 2; uint a : 3;", 4, 4, &[]).unwrap_err();
        assert!(err.contains("duplicate field `a`"), "{err}");
    }
}
