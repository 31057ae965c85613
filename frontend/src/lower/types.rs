//! Semantic types of MSL as lowering sees them, their memory layout, and how each maps
//! onto ISA registers.

use std::fmt;

use metalsim_isa::{Space, Type};

/// MSL scalar types.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Scalar {
    /// `bool`
    Bool,
    /// `char`
    Char,
    /// `uchar`
    UChar,
    /// `short`
    Short,
    /// `ushort`
    UShort,
    /// `int`
    Int,
    /// `uint`
    UInt,
    /// `long`
    Long,
    /// `ulong`
    ULong,
    /// `half`
    Half,
    /// `bfloat`
    BFloat,
    /// `float`
    Float,
}

impl Scalar {
    /// The ISA type holding a value of this scalar type.
    pub fn isa(self) -> Type {
        match self {
            Scalar::Bool => Type::Pred,
            Scalar::Char => Type::I8,
            Scalar::UChar => Type::U8,
            Scalar::Short => Type::I16,
            Scalar::UShort => Type::U16,
            Scalar::Int => Type::I32,
            Scalar::UInt => Type::U32,
            Scalar::Long => Type::I64,
            Scalar::ULong => Type::U64,
            Scalar::Half => Type::F16,
            Scalar::BFloat => Type::BF16,
            Scalar::Float => Type::F32,
        }
    }

    /// The MSL spelling.
    pub fn name(self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::Char => "char",
            Scalar::UChar => "uchar",
            Scalar::Short => "short",
            Scalar::UShort => "ushort",
            Scalar::Int => "int",
            Scalar::UInt => "uint",
            Scalar::Long => "long",
            Scalar::ULong => "ulong",
            Scalar::Half => "half",
            Scalar::BFloat => "bfloat",
            Scalar::Float => "float",
        }
    }

    /// Parses a scalar spelling, including the C aliases MSL accepts.
    pub fn from_name(s: &str) -> Option<Scalar> {
        Some(match s {
            "bool" => Scalar::Bool,
            "char" | "int8_t" => Scalar::Char,
            "uchar" | "uint8_t" => Scalar::UChar,
            "short" | "int16_t" => Scalar::Short,
            "ushort" | "uint16_t" => Scalar::UShort,
            "int" | "int32_t" => Scalar::Int,
            "uint" | "uint32_t" => Scalar::UInt,
            "long" | "int64_t" | "ptrdiff_t" => Scalar::Long,
            "ulong" | "uint64_t" | "size_t" => Scalar::ULong,
            "half" => Scalar::Half,
            "bfloat" => Scalar::BFloat,
            "float" => Scalar::Float,
            _ => return None,
        })
    }

    /// Size in bytes.
    pub fn size(self) -> u32 {
        self.isa().bytes()
    }

    /// A floating-point type.
    pub fn is_float(self) -> bool {
        matches!(self, Scalar::Half | Scalar::BFloat | Scalar::Float)
    }

    /// An integer type (not bool).
    pub fn is_int(self) -> bool {
        !self.is_float() && self != Scalar::Bool
    }

    /// A signed integer type.
    pub fn is_signed(self) -> bool {
        matches!(
            self,
            Scalar::Char | Scalar::Short | Scalar::Int | Scalar::Long
        )
    }

    /// Conversion rank for the usual arithmetic conversions.
    fn rank(self) -> u8 {
        match self {
            Scalar::Bool => 0,
            Scalar::Char | Scalar::UChar => 1,
            Scalar::Short | Scalar::UShort => 2,
            Scalar::Int | Scalar::UInt => 3,
            Scalar::Long | Scalar::ULong => 4,
            Scalar::Half | Scalar::BFloat => 5,
            Scalar::Float => 6,
        }
    }

    /// C's integer promotion: types narrower than `int` (and bool) become `int`.
    pub fn promoted(self) -> Scalar {
        if self.rank() < 3 { Scalar::Int } else { self }
    }

    /// The common type of a binary arithmetic operation on two scalars (C++'s usual
    /// arithmetic conversions with MSL's `half`: `half op int` is `half`).
    pub fn common(a: Scalar, b: Scalar) -> Scalar {
        if a.is_float() || b.is_float() {
            return match (a, b) {
                (Scalar::Float, _) | (_, Scalar::Float) => Scalar::Float,
                (Scalar::Half, Scalar::BFloat) | (Scalar::BFloat, Scalar::Half) => Scalar::Float,
                (Scalar::BFloat, _) | (_, Scalar::BFloat) => Scalar::BFloat,
                _ => Scalar::Half,
            };
        }
        let (a, b) = (a.promoted(), b.promoted());
        if a == b {
            return a;
        }
        if a.rank() != b.rank() {
            let (hi, lo) = if a.rank() > b.rank() { (a, b) } else { (b, a) };
            // A wider signed type holds every value of a narrower unsigned one.
            let _ = lo;
            return hi;
        }
        // Same rank, different signedness: unsigned wins.
        if a.is_signed() { b } else { a }
    }

    /// The unsigned type of the same width (itself when unsigned or not an integer).
    pub fn to_unsigned(self) -> Scalar {
        match self {
            Scalar::Char => Scalar::UChar,
            Scalar::Short => Scalar::UShort,
            Scalar::Int => Scalar::UInt,
            Scalar::Long => Scalar::ULong,
            s => s,
        }
    }
}

/// Identifies a struct in the lowering's struct table.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct StructId(pub usize);

/// A semantic type.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Ty {
    /// `void`
    Void,
    /// A scalar.
    Scalar(Scalar),
    /// A vector of 2 to 4 scalars (`float4`, `vec<half, 2>`); `packed` vectors have no
    /// padding and scalar alignment.
    Vector {
        /// Element type.
        elem: Scalar,
        /// Components.
        len: u8,
        /// `packed_float3` and friends.
        packed: bool,
    },
    /// A fixed-size array.
    Array(Box<Ty>, u32),
    /// A struct.
    Struct(StructId),
    /// A pointer into an address space.
    Pointer(Box<PointerTy>),
    /// An atomic object (`atomic_int`, `atomic<float>`); only reachable through pointers and
    /// references and only usable by the atomic functions.
    Atomic(Scalar),
    /// `simdgroup_matrix<T, 8, 8>`: each thread holds two elements (see
    /// `metalsim_isa::matrix_element`).
    SimdMatrix(Scalar),
}

/// What a pointer points to.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct PointerTy {
    /// The pointee type.
    pub pointee: Ty,
    /// Its address space.
    pub space: Space,
    /// Whether the pointee is `const`.
    pub is_const: bool,
}

impl Ty {
    /// A scalar type.
    pub fn scalar(s: Scalar) -> Ty {
        Ty::Scalar(s)
    }

    /// A (non-packed) vector type, or the scalar when `len == 1`.
    pub fn vector(elem: Scalar, len: u8) -> Ty {
        if len == 1 {
            Ty::Scalar(elem)
        } else {
            Ty::Vector {
                elem,
                len,
                packed: false,
            }
        }
    }

    /// A pointer type.
    pub fn pointer(pointee: Ty, space: Space, is_const: bool) -> Ty {
        Ty::Pointer(Box::new(PointerTy {
            pointee,
            space,
            is_const,
        }))
    }

    /// `bool`.
    pub const BOOL: Ty = Ty::Scalar(Scalar::Bool);
    /// `int`.
    pub const INT: Ty = Ty::Scalar(Scalar::Int);
    /// `uint`.
    pub const UINT: Ty = Ty::Scalar(Scalar::UInt);
    /// `float`.
    pub const FLOAT: Ty = Ty::Scalar(Scalar::Float);

    /// The element scalar of a scalar or vector type.
    pub fn elem_scalar(&self) -> Option<Scalar> {
        match self {
            Ty::Scalar(s) | Ty::Vector { elem: s, .. } => Some(*s),
            _ => None,
        }
    }

    /// Components of a scalar (1) or vector.
    pub fn vector_len(&self) -> Option<u8> {
        match self {
            Ty::Scalar(_) => Some(1),
            Ty::Vector { len, .. } => Some(*len),
            _ => None,
        }
    }

    /// A scalar or vector of arithmetic (non-bool) elements or bools.
    pub fn is_numeric(&self) -> bool {
        matches!(self, Ty::Scalar(_) | Ty::Vector { .. })
    }

    /// The same shape with another element type.
    pub fn with_elem(&self, elem: Scalar) -> Ty {
        match self {
            Ty::Vector { len, .. } => Ty::vector(elem, *len),
            _ => Ty::Scalar(elem),
        }
    }

    /// The pointer's pointee description.
    pub fn as_pointer(&self) -> Option<&PointerTy> {
        match self {
            Ty::Pointer(p) => Some(p),
            _ => None,
        }
    }
}

/// A struct's layout, computed when it is declared.
#[derive(Clone, Debug)]
pub struct StructInfo {
    /// The name.
    pub name: String,
    /// Fields in order: name, type, byte offset.
    pub fields: Vec<(String, Ty, u32)>,
    /// Size in bytes (padded to the alignment).
    pub size: u32,
    /// Alignment in bytes.
    pub align: u32,
    /// Its array fields stay in registers rather than thread memory (the prelude's
    /// `matrix`, whose columns are indexed with constants once loops are unrolled).
    pub arrays_in_registers: bool,
    /// A union's members, all at offset 0. Its one field is then its storage, an array of
    /// words, so that it lives in memory and a member is read through memory: a read of
    /// another member than the one written reinterprets the bytes (as `as_type` does).
    pub union_members: Vec<(String, Ty, u32)>,
    /// Its named bit-fields (its bases' included), whose bits live in hidden storage
    /// fields (see `lower::bitfield`).
    pub bit_fields: Vec<crate::lower::bitfield::BitField>,
}

/// The widest vector memory access, in bits: AGX's `device_load`/`local_load` and stores
/// move at most four 32-bit components (Dougall Johnson's applegpu ISA docs; Mesa's
/// `agx_mem_vectorize_cb` allows at most 4 components of at most 32 bits).
pub const MAX_VECTOR_ACCESS_BITS: u32 = 128;

/// One memory instruction of a value's load or store: `count` consecutive elements of
/// type `ty` from byte `offset` (one is a scalar access, 2 to 4 a vector access).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct MemAccess {
    /// The element type.
    pub ty: Type,
    /// The first element's byte offset in the value.
    pub offset: u32,
    /// The number of elements.
    pub count: u8,
}

/// Struct definitions, indexed by [`StructId`].
#[derive(Clone, Debug, Default)]
pub struct Structs(pub Vec<StructInfo>);

impl Structs {
    /// A struct's info.
    pub fn get(&self, id: StructId) -> &StructInfo {
        &self.0[id.0]
    }

    /// Size of a type in memory, per MSL's layout rules (3-component vectors take the
    /// space of 4 unless packed).
    pub fn size(&self, ty: &Ty) -> u32 {
        match ty {
            Ty::Void => 0,
            Ty::Scalar(s) | Ty::Atomic(s) => s.size(),
            Ty::Vector { elem, len, packed } => {
                let n = if *len == 3 && !packed { 4 } else { *len as u32 };
                elem.size() * n
            }
            Ty::Array(e, n) => self.size(e).saturating_mul(*n),
            Ty::Struct(id) => self.get(*id).size,
            Ty::Pointer(_) => 8,
            Ty::SimdMatrix(s) => 2 * s.size(),
        }
    }

    /// Alignment of a type in memory.
    pub fn align(&self, ty: &Ty) -> u32 {
        match ty {
            Ty::Void => 1,
            Ty::Scalar(s) | Ty::Atomic(s) => s.size(),
            Ty::Vector { elem, len, packed } => {
                if *packed {
                    elem.size()
                } else {
                    let n = if *len == 3 { 4 } else { *len as u32 };
                    elem.size() * n
                }
            }
            Ty::Array(e, _) => self.align(e),
            Ty::Struct(id) => self.get(*id).align,
            Ty::Pointer(_) => 8,
            Ty::SimdMatrix(s) => s.size(),
        }
    }

    /// The register types a value of this type is split into (vectors into components,
    /// structs into their fields' leaves, arrays into elements), in memory order, with each
    /// leaf's byte offset.
    pub fn leaves(&self, ty: &Ty) -> Vec<(Type, u32)> {
        let mut out = Vec::new();
        self.collect_leaves(ty, 0, &mut out);
        out
    }

    fn collect_leaves(&self, ty: &Ty, base: u32, out: &mut Vec<(Type, u32)>) {
        match ty {
            Ty::Void => {}
            Ty::Scalar(s) | Ty::Atomic(s) => out.push((s.isa(), base)),
            Ty::Vector { elem, len, .. } => {
                for i in 0..*len as u32 {
                    out.push((elem.isa(), base + i * elem.size()));
                }
            }
            Ty::Array(e, n) => {
                let stride = self.size(e);
                for i in 0..*n {
                    self.collect_leaves(e, base + i * stride, out);
                }
            }
            Ty::Struct(id) => {
                for (_, fty, off) in &self.get(*id).fields {
                    self.collect_leaves(fty, base + off, out);
                }
            }
            Ty::Pointer(_) => out.push((Type::U64, base)),
            Ty::SimdMatrix(s) => {
                out.push((s.isa(), base));
                out.push((s.isa(), base + s.size()));
            }
        }
    }

    /// The memory instructions that read or write a value of this type, in the order of
    /// [`Self::leaves`]: a whole non-packed vector is one access of its components (split
    /// into accesses of at most [`MAX_VECTOR_ACCESS_BITS`]), every other leaf is an access
    /// of its own. Packed vectors are only element-aligned, and `bool` vectors are kept
    /// per component too (the ISA's `pred` is not a memory element of a vector access).
    pub fn mem_accesses(&self, ty: &Ty) -> Vec<MemAccess> {
        let mut out = Vec::new();
        self.collect_accesses(ty, 0, &mut out);
        out
    }

    fn collect_accesses(&self, ty: &Ty, base: u32, out: &mut Vec<MemAccess>) {
        match ty {
            Ty::Vector {
                elem,
                len,
                packed: false,
            } if *elem != Scalar::Bool => {
                let per = (MAX_VECTOR_ACCESS_BITS / elem.isa().bits()).clamp(1, 4) as u8;
                let mut first = 0;
                while first < *len {
                    let count = per.min(*len - first);
                    out.push(MemAccess {
                        ty: elem.isa(),
                        offset: base + first as u32 * elem.size(),
                        count,
                    });
                    first += count;
                }
            }
            Ty::Array(e, n) => {
                let stride = self.size(e);
                for i in 0..*n {
                    self.collect_accesses(e, base + i * stride, out);
                }
            }
            Ty::Struct(id) => {
                for (_, fty, off) in &self.get(*id).fields {
                    self.collect_accesses(fty, base + off, out);
                }
            }
            _ => {
                let mut leaves = Vec::new();
                self.collect_leaves(ty, base, &mut leaves);
                out.extend(leaves.into_iter().map(|(ty, offset)| MemAccess {
                    ty,
                    offset,
                    count: 1,
                }));
            }
        }
    }

    /// Number of register leaves of a type (without building them).
    pub fn leaf_count(&self, ty: &Ty) -> usize {
        match ty {
            Ty::Void => 0,
            Ty::Scalar(_) | Ty::Atomic(_) | Ty::Pointer(_) => 1,
            Ty::SimdMatrix(_) => 2,
            Ty::Vector { len, .. } => *len as usize,
            Ty::Array(e, n) => self.leaf_count(e).saturating_mul(*n as usize),
            Ty::Struct(id) => self
                .get(*id)
                .fields
                .iter()
                .map(|(_, t, _)| self.leaf_count(t))
                .sum(),
        }
    }

    /// The MSL spelling of a type, for messages.
    pub fn display(&self, ty: &Ty) -> String {
        match ty {
            Ty::Void => "void".into(),
            Ty::Scalar(s) => s.name().into(),
            Ty::Vector { elem, len, packed } => {
                format!(
                    "{}{}{}",
                    if *packed { "packed_" } else { "" },
                    elem.name(),
                    len
                )
            }
            Ty::Array(e, n) => format!("{}[{n}]", self.display(e)),
            Ty::Struct(id) => self.get(*id).name.clone(),
            Ty::Pointer(p) => format!(
                "{} {}{}*",
                p.space.name(),
                if p.is_const { "const " } else { "" },
                self.display(&p.pointee)
            ),
            Ty::Atomic(s) => format!("atomic_{}", s.name()),
            Ty::SimdMatrix(s) => format!("simdgroup_{}8x8", s.name()),
        }
    }
}

/// Parses a builtin scalar or vector name (`float`, `uint2`, `packed_half4`).
pub fn builtin_type(name: &str) -> Option<Ty> {
    if let Some(s) = Scalar::from_name(name) {
        return Some(Ty::Scalar(s));
    }
    let (packed, rest) = match name.strip_prefix("packed_") {
        Some(r) => (true, r),
        None => (false, name),
    };
    let last = rest.as_bytes().last().copied()?;
    if !(b'2'..=b'4').contains(&last) {
        return None;
    }
    if rest.len() < 2 {
        return None;
    }
    let elem = Scalar::from_name(&rest[..rest.len() - 1])?;
    Some(Ty::Vector {
        elem,
        len: last - b'0',
        packed,
    })
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usual_arithmetic_conversions() {
        use Scalar::*;
        assert_eq!(Scalar::common(Int, UInt), UInt);
        assert_eq!(Scalar::common(UChar, UChar), Int);
        assert_eq!(Scalar::common(Half, Int), Half);
        assert_eq!(Scalar::common(Half, Float), Float);
        assert_eq!(Scalar::common(Long, UInt), Long);
        assert_eq!(Scalar::common(UShort, Short), Int);
    }

    #[test]
    fn layouts() {
        let s = Structs::default();
        let f3 = builtin_type("float3").unwrap();
        assert_eq!((s.size(&f3), s.align(&f3)), (16, 16));
        let p3 = builtin_type("packed_float3").unwrap();
        assert_eq!((s.size(&p3), s.align(&p3)), (12, 4));
        assert_eq!(s.size(&builtin_type("uchar4").unwrap()), 4);
        assert_eq!(s.leaves(&Ty::Array(Box::new(f3), 2)).len(), 6);
        assert!(builtin_type("float5").is_none());
        assert!(builtin_type("packed_").is_none());
    }
}
