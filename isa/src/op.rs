//! The operations: one table of opcodes, their text names, operand counts and timing
//! classes. Printing, parsing, verification and the simulator's decoder all read it.

use crate::types::Type;

/// Declares a field-less enum whose variants have text names, with `name()`, `ALL` and
/// `from_name()`.
macro_rules! named_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $var:ident = $text:literal),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
        pub enum $name { $($(#[$vdoc])* $var),* }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$var),*];

            /// The text name used by the ISA text format.
            pub fn name(self) -> &'static str {
                match self { $($name::$var => $text),* }
            }

            /// The variant with this text name.
            pub fn from_name(s: &str) -> Option<$name> {
                match s { $($text => Some($name::$var),)* _ => None }
            }
        }
    };
}

named_enum!(
    /// A memory address space.
    Space {
        /// `device`: read-write buffers in unified memory.
        Device = "device",
        /// `constant`: read-only buffers and program-scope constants.
        Constant = "constant",
        /// `threadgroup`: on-chip memory shared by one threadgroup.
        Threadgroup = "threadgroup",
        /// `thread`: memory private to one thread (local arrays, spilled locals).
        Thread = "thread",
    }
);

named_enum!(
    /// Comparison conditions. Signedness and float-ness come from the compared type; float
    /// comparisons are ordered except `ne`, which is true when either operand is NaN.
    CmpCond {
        /// Equal.
        Eq = "eq",
        /// Not equal.
        Ne = "ne",
        /// Less than.
        Lt = "lt",
        /// Less or equal.
        Le = "le",
        /// Greater than.
        Gt = "gt",
        /// Greater or equal.
        Ge = "ge",
    }
);

named_enum!(
    /// Floating-point math functions beyond basic arithmetic. [`Op::Math`] computes the
    /// fast-math variant (Metal's default), [`Op::PreciseMath`] the precise one; the two
    /// differ for `f32` only (the simulator's `docs/math-precision.md` gives each one's
    /// accuracy).
    MathFn {
        /// Round toward negative infinity.
        Floor = "floor",
        /// Round toward positive infinity.
        Ceil = "ceil",
        /// Round toward zero.
        Trunc = "trunc",
        /// Round half away from zero.
        Round = "round",
        /// Round half to even.
        Rint = "rint",
        /// Square root.
        Sqrt = "sqrt",
        /// Reciprocal square root.
        Rsqrt = "rsqrt",
        /// Reciprocal.
        Rcp = "rcp",
        /// e to the x.
        Exp = "exp",
        /// 2 to the x.
        Exp2 = "exp2",
        /// Natural logarithm.
        Log = "log",
        /// Base-2 logarithm.
        Log2 = "log2",
        /// Sine (radians).
        Sin = "sin",
        /// Cosine (radians).
        Cos = "cos",
        /// Tangent (radians).
        Tan = "tan",
        /// x to the y (binary).
        Pow = "pow",
        /// Arc sine.
        Asin = "asin",
        /// Arc cosine.
        Acos = "acos",
        /// Arc tangent.
        Atan = "atan",
        /// Arc tangent of `y / x` in the quadrant of `(x, y)`: operands `y`, `x`.
        Atan2 = "atan2",
        /// Hyperbolic sine.
        Sinh = "sinh",
        /// Hyperbolic cosine.
        Cosh = "cosh",
        /// Hyperbolic tangent.
        Tanh = "tanh",
        /// Inverse hyperbolic sine.
        Asinh = "asinh",
        /// Inverse hyperbolic cosine.
        Acosh = "acosh",
        /// Inverse hyperbolic tangent.
        Atanh = "atanh",
        /// `sin(pi * x)`.
        Sinpi = "sinpi",
        /// `cos(pi * x)`.
        Cospi = "cospi",
        /// `tan(pi * x)`.
        Tanpi = "tanpi",
        /// 10 to the x.
        Exp10 = "exp10",
        /// Base-10 logarithm.
        Log10 = "log10",
        /// `x - y * trunc(x / y)`, exactly (binary).
        Fmod = "fmod",
        /// `x * 2^k`, correctly rounded: operands `x` and `k` (an `i32`).
        Ldexp = "ldexp",
    }
);

impl MathFn {
    /// Number of operands (1, or 2 for `pow`, `atan2`, `fmod` and `ldexp`).
    pub fn arity(self) -> usize {
        match self {
            MathFn::Pow | MathFn::Atan2 | MathFn::Fmod | MathFn::Ldexp => 2,
            _ => 1,
        }
    }

    /// Runs on the special-function (transcendental) pipe rather than the main ALU.
    pub fn is_special(self) -> bool {
        !matches!(
            self,
            MathFn::Floor
                | MathFn::Ceil
                | MathFn::Trunc
                | MathFn::Round
                | MathFn::Rint
                | MathFn::Ldexp
        )
    }
}

named_enum!(
    /// Integer functions of the MSL standard library that are one instruction each.
    /// Operands have the instruction's (integer) type unless stated otherwise.
    IntFn {
        /// `x + y`, saturated to the type's range.
        AddSat = "addsat",
        /// `x - y`, saturated.
        SubSat = "subsat",
        /// `a * b + c` computed exactly, then saturated.
        MadSat = "madsat",
        /// `(x + y) >> 1` without overflow of the intermediate sum.
        HAdd = "hadd",
        /// `(x + y + 1) >> 1` without overflow of the intermediate sum.
        RHAdd = "rhadd",
        /// `x` rotated left by `y` bits (taken modulo the width).
        Rotate = "rotate",
        /// The bits of `x` in reverse order.
        ReverseBits = "reverse_bits",
        /// Bits `[offset, offset + bits)` of `x` in the low bits of the result, zero- or
        /// sign-extended by the type: operands `x`, `offset` (u32), `bits` (u32). `offset`
        /// and `bits` are clamped so the field stays inside the value (MSL leaves a field
        /// past the end undefined); `bits == 0` gives 0.
        ExtractBits = "extract_bits",
        /// `base` with bits `[offset, offset + bits)` replaced by the low `bits` bits of
        /// `insert`: operands `base`, `insert`, `offset` (u32), `bits` (u32), clamped as
        /// for `extract_bits`.
        InsertBits = "insert_bits",
    }
);

impl IntFn {
    /// Number of operands.
    pub fn arity(self) -> usize {
        match self {
            IntFn::ReverseBits => 1,
            IntFn::MadSat | IntFn::ExtractBits => 3,
            IntFn::InsertBits => 4,
            _ => 2,
        }
    }

    /// Operands of the instruction's type, counted from the first (the rest are `u32`).
    pub fn typed_operands(self) -> usize {
        match self {
            IntFn::ExtractBits => 1,
            IntFn::InsertBits => 2,
            f => f.arity(),
        }
    }
}

named_enum!(
    /// Read-modify-write operations of `atomic_*_explicit`. Every one returns the old value
    /// except `store`.
    AtomicOp {
        /// `atomic_load_explicit`.
        Load = "load",
        /// `atomic_store_explicit` (no result).
        Store = "store",
        /// `atomic_exchange_explicit`.
        Exchange = "xchg",
        /// `atomic_compare_exchange_weak_explicit`: operands expected, desired.
        CmpXchg = "cmpxchg",
        /// `atomic_fetch_add_explicit`.
        Add = "add",
        /// `atomic_fetch_sub_explicit`.
        Sub = "sub",
        /// `atomic_fetch_min_explicit`.
        Min = "min",
        /// `atomic_fetch_max_explicit`.
        Max = "max",
        /// `atomic_fetch_and_explicit`.
        And = "and",
        /// `atomic_fetch_or_explicit`.
        Or = "or",
        /// `atomic_fetch_xor_explicit`.
        Xor = "xor",
    }
);

impl AtomicOp {
    /// Operands after the address.
    pub fn value_operands(self) -> usize {
        match self {
            AtomicOp::Load => 0,
            AtomicOp::CmpXchg => 2,
            _ => 1,
        }
    }

    /// Produces the old value.
    pub fn has_result(self) -> bool {
        self != AtomicOp::Store
    }
}

named_enum!(
    /// SIMD-group (and quad-group) cross-lane operations.
    SimdOp {
        /// Value from the lane given by the second operand.
        Shuffle = "shuffle",
        /// Value from lane `lane - delta`; lanes below `delta` keep their own.
        ShuffleUp = "shuffle_up",
        /// Value from lane `lane + delta`; lanes whose source is past the end keep their own.
        ShuffleDown = "shuffle_down",
        /// Value from lane `lane ^ mask`.
        ShuffleXor = "shuffle_xor",
        /// Value from lane `(lane - delta) mod width`.
        ShuffleRotateUp = "shuffle_rotate_up",
        /// Value from lane `(lane + delta) mod width`.
        ShuffleRotateDown = "shuffle_rotate_down",
        /// Value of the lane given by the second operand, for every lane.
        Broadcast = "broadcast",
        /// Value of the first active lane, for every lane.
        BroadcastFirst = "broadcast_first",
        /// Sum over active lanes.
        Sum = "sum",
        /// Product over active lanes.
        Product = "product",
        /// Minimum over active lanes.
        Min = "min",
        /// Maximum over active lanes.
        Max = "max",
        /// Bitwise and over active lanes.
        And = "and",
        /// Bitwise or over active lanes.
        Or = "or",
        /// Bitwise xor over active lanes.
        Xor = "xor",
        /// Inclusive prefix sum over active lanes.
        PrefixInclusiveSum = "prefix_inclusive_sum",
        /// Exclusive prefix sum over active lanes.
        PrefixExclusiveSum = "prefix_exclusive_sum",
        /// Inclusive prefix product over active lanes.
        PrefixInclusiveProduct = "prefix_inclusive_product",
        /// Exclusive prefix product over active lanes.
        PrefixExclusiveProduct = "prefix_exclusive_product",
        /// Bit mask (u64) of the active lanes whose predicate is true.
        Ballot = "ballot",
        /// True when the predicate holds in every active lane.
        All = "all",
        /// True when the predicate holds in some active lane.
        Any = "any",
        /// True in the first active lane only (`simd_is_first`).
        IsFirst = "is_first",
        /// Bit mask (u64) of the active lanes (`simd_active_threads_mask`).
        ActiveMask = "active_mask",
    }
);

impl SimdOp {
    /// Number of operands.
    pub fn arity(self) -> usize {
        match self {
            SimdOp::Shuffle
            | SimdOp::ShuffleUp
            | SimdOp::ShuffleDown
            | SimdOp::ShuffleXor
            | SimdOp::ShuffleRotateUp
            | SimdOp::ShuffleRotateDown
            | SimdOp::Broadcast => 2,
            SimdOp::IsFirst | SimdOp::ActiveMask => 0,
            _ => 1,
        }
    }

    /// The type of the result given the operation type.
    pub fn result_type(self, ty: Type) -> Type {
        match self {
            SimdOp::Ballot | SimdOp::ActiveMask => Type::U64,
            SimdOp::All | SimdOp::Any | SimdOp::IsFirst => Type::Pred,
            _ => ty,
        }
    }

    /// A reduction or scan (cost on the order of a tree over the lanes).
    pub fn is_reduction(self) -> bool {
        matches!(
            self,
            SimdOp::Sum
                | SimdOp::Product
                | SimdOp::Min
                | SimdOp::Max
                | SimdOp::And
                | SimdOp::Or
                | SimdOp::Xor
                | SimdOp::PrefixInclusiveSum
                | SimdOp::PrefixExclusiveSum
                | SimdOp::PrefixInclusiveProduct
                | SimdOp::PrefixExclusiveProduct
        )
    }
}

named_enum!(
    /// Per-thread special registers: the kernel-input attributes of MSL spec 4.3.4.6, one
    /// component at a time. All are `u32`.
    SpecialReg {
        /// `thread_position_in_grid.x`
        ThreadPositionInGridX = "thread_position_in_grid.x",
        /// `thread_position_in_grid.y`
        ThreadPositionInGridY = "thread_position_in_grid.y",
        /// `thread_position_in_grid.z`
        ThreadPositionInGridZ = "thread_position_in_grid.z",
        /// `thread_position_in_threadgroup.x`
        ThreadPositionInThreadgroupX = "thread_position_in_threadgroup.x",
        /// `thread_position_in_threadgroup.y`
        ThreadPositionInThreadgroupY = "thread_position_in_threadgroup.y",
        /// `thread_position_in_threadgroup.z`
        ThreadPositionInThreadgroupZ = "thread_position_in_threadgroup.z",
        /// `thread_index_in_threadgroup`
        ThreadIndexInThreadgroup = "thread_index_in_threadgroup",
        /// `threadgroup_position_in_grid.x`
        ThreadgroupPositionInGridX = "threadgroup_position_in_grid.x",
        /// `threadgroup_position_in_grid.y`
        ThreadgroupPositionInGridY = "threadgroup_position_in_grid.y",
        /// `threadgroup_position_in_grid.z`
        ThreadgroupPositionInGridZ = "threadgroup_position_in_grid.z",
        /// `threads_per_grid.x`
        ThreadsPerGridX = "threads_per_grid.x",
        /// `threads_per_grid.y`
        ThreadsPerGridY = "threads_per_grid.y",
        /// `threads_per_grid.z`
        ThreadsPerGridZ = "threads_per_grid.z",
        /// `threads_per_threadgroup.x` (the actual size of this threadgroup)
        ThreadsPerThreadgroupX = "threads_per_threadgroup.x",
        /// `threads_per_threadgroup.y`
        ThreadsPerThreadgroupY = "threads_per_threadgroup.y",
        /// `threads_per_threadgroup.z`
        ThreadsPerThreadgroupZ = "threads_per_threadgroup.z",
        /// `dispatch_threads_per_threadgroup.x` (the size given at dispatch)
        DispatchThreadsPerThreadgroupX = "dispatch_threads_per_threadgroup.x",
        /// `dispatch_threads_per_threadgroup.y`
        DispatchThreadsPerThreadgroupY = "dispatch_threads_per_threadgroup.y",
        /// `dispatch_threads_per_threadgroup.z`
        DispatchThreadsPerThreadgroupZ = "dispatch_threads_per_threadgroup.z",
        /// `threadgroups_per_grid.x`
        ThreadgroupsPerGridX = "threadgroups_per_grid.x",
        /// `threadgroups_per_grid.y`
        ThreadgroupsPerGridY = "threadgroups_per_grid.y",
        /// `threadgroups_per_grid.z`
        ThreadgroupsPerGridZ = "threadgroups_per_grid.z",
        /// `thread_execution_width`
        ThreadExecutionWidth = "thread_execution_width",
        /// `threads_per_simdgroup`
        ThreadsPerSimdgroup = "threads_per_simdgroup",
        /// `thread_index_in_simdgroup`
        ThreadIndexInSimdgroup = "thread_index_in_simdgroup",
        /// `simdgroup_index_in_threadgroup`
        SimdgroupIndexInThreadgroup = "simdgroup_index_in_threadgroup",
        /// `simdgroups_per_threadgroup`
        SimdgroupsPerThreadgroup = "simdgroups_per_threadgroup",
        /// `dispatch_simdgroups_per_threadgroup`
        DispatchSimdgroupsPerThreadgroup = "dispatch_simdgroups_per_threadgroup",
        /// `thread_index_in_quadgroup`
        ThreadIndexInQuadgroup = "thread_index_in_quadgroup",
        /// `quadgroup_index_in_threadgroup`
        QuadgroupIndexInThreadgroup = "quadgroup_index_in_threadgroup",
        /// `quadgroups_per_threadgroup`
        QuadgroupsPerThreadgroup = "quadgroups_per_threadgroup",
        /// `dispatch_quadgroups_per_threadgroup`
        DispatchQuadgroupsPerThreadgroup = "dispatch_quadgroups_per_threadgroup",
    }
);

named_enum!(
    /// What a barrier synchronizes.
    BarrierScope {
        /// `threadgroup_barrier`: every thread of the threadgroup.
        Threadgroup = "threadgroup",
        /// `simdgroup_barrier`: every thread of the SIMD-group.
        Simdgroup = "simdgroup",
    }
);

/// The `mem_flags` of a barrier, as a bit set.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct MemFlags(pub u8);

impl MemFlags {
    /// `mem_flags::mem_none`.
    pub const NONE: MemFlags = MemFlags(0);
    /// `mem_flags::mem_device`.
    pub const DEVICE: MemFlags = MemFlags(1);
    /// `mem_flags::mem_threadgroup`.
    pub const THREADGROUP: MemFlags = MemFlags(2);
    /// `mem_flags::mem_texture`.
    pub const TEXTURE: MemFlags = MemFlags(4);
    /// `mem_flags::mem_threadgroup_imageblock`.
    pub const IMAGEBLOCK: MemFlags = MemFlags(8);

    const NAMES: [(MemFlags, &'static str); 4] = [
        (MemFlags::DEVICE, "device"),
        (MemFlags::THREADGROUP, "threadgroup"),
        (MemFlags::TEXTURE, "texture"),
        (MemFlags::IMAGEBLOCK, "imageblock"),
    ];

    /// Whether every flag of `other` is set.
    pub fn contains(self, other: MemFlags) -> bool {
        self.0 & other.0 == other.0
    }

    /// Text form: `none` or names joined by `|`.
    pub fn to_text(self) -> String {
        let names: Vec<&str> = MemFlags::NAMES
            .iter()
            .filter(|(f, _)| self.contains(*f))
            .map(|(_, n)| *n)
            .collect();
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join("|")
        }
    }

    /// Parses the text form.
    pub fn from_text(s: &str) -> Option<MemFlags> {
        if s == "none" {
            return Some(MemFlags::NONE);
        }
        let mut bits = 0;
        for part in s.split('|') {
            let (f, _) = MemFlags::NAMES.iter().find(|(_, n)| *n == part)?;
            bits |= f.0;
        }
        Some(MemFlags(bits))
    }
}

/// An operation. Together with the instruction's type (`InstData::ty`) and its operands it
/// fully describes what an instruction does.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Op {
    /// A constant; the payload holds the bits of the value, masked to the type's width.
    Const(u64),
    /// `a + b` (integers wrap).
    Add,
    /// `a - b`.
    Sub,
    /// `a * b`.
    Mul,
    /// `a / b` (integer division by zero gives all ones for unsigned, -1 for signed).
    Div,
    /// `a % b` (integer only; by zero gives `a`).
    Rem,
    /// `-a`.
    Neg,
    /// `|a|`.
    Abs,
    /// Smaller of `a`, `b` (floats: the non-NaN one).
    Min,
    /// Larger of `a`, `b`.
    Max,
    /// `a * b + c`: fused for floats, wrapping for integers.
    Fma,
    /// Bitwise (or logical, for predicates) and.
    And,
    /// Bitwise or.
    Or,
    /// Bitwise xor.
    Xor,
    /// Bitwise not.
    Not,
    /// Shift left; the count is taken modulo the type's width.
    Shl,
    /// Shift right, arithmetic for signed types; count modulo the width.
    Shr,
    /// Count leading zeros.
    Clz,
    /// Count trailing zeros.
    Ctz,
    /// Count set bits.
    Popcount,
    /// High half of the full product.
    MulHi,
    /// A floating-point math function, fast-math variant (Metal's default).
    Math(MathFn),
    /// A floating-point math function, precise variant (`metal::precise::`,
    /// `-fno-fast-math`).
    PreciseMath(MathFn),
    /// An integer function of the standard library.
    Int(IntFn),
    /// Compare two operands of the instruction's type; result `pred`.
    Cmp(CmpCond),
    /// `cond ? a : b`; operands `cond` (pred), `a`, `b`.
    Select,
    /// Numeric conversion from `from` to the instruction's type. Float to integer rounds
    /// toward zero and saturates to the target range (NaN gives 0); integer to float rounds
    /// to nearest even; integer to integer wraps unless `sat`.
    Cvt {
        /// The source type.
        from: Type,
        /// Saturate integer results to the target range.
        sat: bool,
    },
    /// Reinterpret the bits of a value of type `from` (same width) as the instruction's type.
    Bitcast {
        /// The source type.
        from: Type,
    },
    /// `ptr + index * scale`: operands `ptr` (u64) and an integer index (sign-extended when
    /// its type is signed). Result `u64`.
    PtrAdd {
        /// Bytes per index step.
        scale: u32,
    },
    /// Load a value of the instruction's type from an address (u64) in a space.
    Load(Space),
    /// Store a value (second operand) of the instruction's type to an address.
    Store(Space),
    /// An atomic read-modify-write on the instruction's type; operands address then values.
    Atomic(AtomicOp, Space),
    /// Wait for the scope's threads; order memory by the flags.
    Barrier(BarrierScope, MemFlags),
    /// A SIMD-group cross-lane operation.
    Simd(SimdOp),
    /// A quad-group (4 lanes) cross-lane operation.
    Quad(SimdOp),
    /// Read a special register.
    Sreg(SpecialReg),
    /// The address (u64) of the buffer bound at `[[buffer(n)]]`.
    BufferAddr(u32),
    /// The address (u64) of the threadgroup memory bound at `[[threadgroup(n)]]`.
    ThreadgroupParamAddr(u32),
    /// The address (u64) of threadgroup allocation `n` of the function.
    ThreadgroupAddr(u32),
    /// The address (u64) of thread-memory allocation `n` of the function (per lane).
    LocalAddr(u32),
    /// The address (u64, constant space) of data object `n` of the module.
    DataAddr(u32),
    /// Load `n` (2 to 4) consecutive elements of the instruction's type (a vector) from an
    /// address; `n` results.
    LoadVec(Space, u8),
    /// Store `n` consecutive elements: operands the address, then the `n` values.
    StoreVec(Space, u8),
    /// Load this lane's two elements of an 8x8 SIMD-group matrix (see
    /// [`matrix_element`](crate::matrix_element)) from a row-major matrix: operands the
    /// address of element (0, 0) and the row stride in elements (u32); the matrix is read
    /// transposed when the flag is set. Two results.
    MatrixLoad(Space, bool),
    /// Store this lane's two elements of an 8x8 SIMD-group matrix: operands the address of
    /// element (0, 0), the row stride in elements (u32), then the two elements.
    MatrixStore(Space, bool),
    /// `D = A x B + C` on 8x8 SIMD-group matrices: operands `a0, a1, b0, b1, c0, c1` (each
    /// lane's two elements of each), results `d0, d1`. Reads every lane of the SIMD-group.
    MatrixMac,
}

/// The timing class of an instruction: what the timing model charges for it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum OpClass {
    /// 32-bit float add, multiply, FMA, min/max, compare and select.
    FloatAlu,
    /// 16-bit float arithmetic.
    HalfAlu,
    /// Integer add, logic, compare, select, address arithmetic.
    IntAlu,
    /// Integer multiply, shifts and bit counting (the integer/complex pipe).
    IntMul,
    /// Transcendentals, reciprocal, square root, division (the special-function pipe).
    Special,
    /// Numeric conversions.
    Convert,
    /// Constants, bit casts and special-register reads: free or nearly so.
    Move,
    /// Loads and stores to device or constant memory.
    DeviceMemory,
    /// Loads and stores to threadgroup memory.
    ThreadgroupMemory,
    /// Loads and stores to thread memory (stack).
    ThreadMemory,
    /// Atomic operations.
    Atomic,
    /// Barriers.
    Barrier,
    /// SIMD-group and quad-group shuffles.
    SimdShuffle,
    /// SIMD-group reductions and scans.
    SimdReduce,
    /// SIMD-group 8x8 matrix multiply-accumulate.
    SimdMatrix,
    /// Branches and returns.
    Control,
}

impl OpClass {
    /// Every class, in a fixed order.
    pub const ALL: [OpClass; 16] = [
        OpClass::FloatAlu,
        OpClass::HalfAlu,
        OpClass::IntAlu,
        OpClass::IntMul,
        OpClass::Special,
        OpClass::Convert,
        OpClass::Move,
        OpClass::DeviceMemory,
        OpClass::ThreadgroupMemory,
        OpClass::ThreadMemory,
        OpClass::Atomic,
        OpClass::Barrier,
        OpClass::SimdShuffle,
        OpClass::SimdReduce,
        OpClass::SimdMatrix,
        OpClass::Control,
    ];

    /// A short lower-case name (`float_alu`, `device_memory`...).
    pub fn name(self) -> &'static str {
        match self {
            OpClass::FloatAlu => "float_alu",
            OpClass::HalfAlu => "half_alu",
            OpClass::IntAlu => "int_alu",
            OpClass::IntMul => "int_mul",
            OpClass::Special => "special",
            OpClass::Convert => "convert",
            OpClass::Move => "move",
            OpClass::DeviceMemory => "device_memory",
            OpClass::ThreadgroupMemory => "threadgroup_memory",
            OpClass::ThreadMemory => "thread_memory",
            OpClass::Atomic => "atomic",
            OpClass::Barrier => "barrier",
            OpClass::SimdShuffle => "simd_shuffle",
            OpClass::SimdReduce => "simd_reduce",
            OpClass::SimdMatrix => "simd_matrix",
            OpClass::Control => "control",
        }
    }
}

impl Op {
    /// The number of operands the operation takes.
    pub fn arity(self) -> usize {
        match self {
            Op::Const(_)
            | Op::Sreg(_)
            | Op::BufferAddr(_)
            | Op::ThreadgroupParamAddr(_)
            | Op::ThreadgroupAddr(_)
            | Op::LocalAddr(_)
            | Op::DataAddr(_)
            | Op::Barrier(..) => 0,
            Op::Neg
            | Op::Abs
            | Op::Not
            | Op::Clz
            | Op::Ctz
            | Op::Popcount
            | Op::Cvt { .. }
            | Op::Bitcast { .. }
            | Op::Load(_) => 1,
            Op::Math(f) | Op::PreciseMath(f) => f.arity(),
            Op::Int(f) => f.arity(),
            Op::Add
            | Op::Sub
            | Op::Mul
            | Op::Div
            | Op::Rem
            | Op::Min
            | Op::Max
            | Op::And
            | Op::Or
            | Op::Xor
            | Op::Shl
            | Op::Shr
            | Op::MulHi
            | Op::Cmp(_)
            | Op::PtrAdd { .. }
            | Op::Store(_) => 2,
            Op::Fma | Op::Select => 3,
            Op::LoadVec(..) => 1,
            Op::StoreVec(_, n) => 1 + n as usize,
            Op::MatrixLoad(..) => 2,
            Op::MatrixStore(..) => 4,
            Op::MatrixMac => 6,
            Op::Atomic(a, _) => 1 + a.value_operands(),
            Op::Simd(s) | Op::Quad(s) => s.arity(),
        }
    }

    /// The number of results: 0 or 1, except vector loads (one per element) and the
    /// matrix operations (two per lane).
    pub fn result_count(self) -> usize {
        match self {
            Op::LoadVec(_, n) => n as usize,
            Op::MatrixLoad(..) | Op::MatrixMac => 2,
            Op::Store(_) | Op::StoreVec(..) | Op::MatrixStore(..) | Op::Barrier(..) => 0,
            Op::Atomic(a, _) => a.has_result() as usize,
            _ => 1,
        }
    }

    /// The type of each result for an instruction of type `ty`, or `None` when the
    /// instruction produces no value.
    pub fn result_type(self, ty: Type) -> Option<Type> {
        match self {
            Op::Store(_) | Op::StoreVec(..) | Op::MatrixStore(..) | Op::Barrier(..) => None,
            Op::Atomic(a, _) => a.has_result().then_some(ty),
            Op::Cmp(_) => Some(Type::Pred),
            Op::Sreg(_) => Some(Type::U32),
            Op::PtrAdd { .. }
            | Op::BufferAddr(_)
            | Op::ThreadgroupParamAddr(_)
            | Op::ThreadgroupAddr(_)
            | Op::LocalAddr(_)
            | Op::DataAddr(_) => Some(Type::U64),
            Op::Simd(s) | Op::Quad(s) => Some(s.result_type(ty)),
            _ => Some(ty),
        }
    }

    /// The instruction type implied by the operation, for operations whose type is not
    /// free (the text format then omits it).
    pub fn implied_type(self) -> Option<Type> {
        match self {
            Op::Sreg(_) => Some(Type::U32),
            Op::PtrAdd { .. }
            | Op::BufferAddr(_)
            | Op::ThreadgroupParamAddr(_)
            | Op::ThreadgroupAddr(_)
            | Op::LocalAddr(_)
            | Op::DataAddr(_) => Some(Type::U64),
            Op::Barrier(..) | Op::Simd(SimdOp::IsFirst) | Op::Quad(SimdOp::IsFirst) => {
                Some(Type::Pred)
            }
            Op::Simd(SimdOp::ActiveMask) | Op::Quad(SimdOp::ActiveMask) => Some(Type::U64),
            _ => None,
        }
    }

    /// The timing class of an instruction of this operation and type.
    pub fn class(self, ty: Type) -> OpClass {
        let alu = |ty: Type| match ty {
            Type::F32 => OpClass::FloatAlu,
            Type::F16 | Type::BF16 => OpClass::HalfAlu,
            _ => OpClass::IntAlu,
        };
        match self {
            Op::Const(_) | Op::Bitcast { .. } | Op::Sreg(_) => OpClass::Move,
            Op::BufferAddr(_)
            | Op::ThreadgroupParamAddr(_)
            | Op::ThreadgroupAddr(_)
            | Op::LocalAddr(_)
            | Op::DataAddr(_) => OpClass::Move,
            Op::Add | Op::Sub | Op::Neg | Op::Abs | Op::Min | Op::Max | Op::Select => alu(ty),
            Op::Mul | Op::Fma => {
                if ty.is_float() {
                    alu(ty)
                } else {
                    OpClass::IntMul
                }
            }
            Op::Div | Op::Rem => {
                if ty.is_float() {
                    OpClass::Special
                } else {
                    OpClass::IntMul
                }
            }
            Op::Cmp(_) => alu(ty),
            Op::And | Op::Or | Op::Xor | Op::Not => OpClass::IntAlu,
            Op::Shl | Op::Shr | Op::Clz | Op::Ctz | Op::Popcount | Op::MulHi => OpClass::IntMul,
            Op::Int(f) => match f {
                IntFn::AddSat | IntFn::SubSat | IntFn::HAdd | IntFn::RHAdd => OpClass::IntAlu,
                _ => OpClass::IntMul,
            },
            Op::Math(f) | Op::PreciseMath(f) => {
                if f.is_special() {
                    OpClass::Special
                } else {
                    OpClass::Convert
                }
            }
            Op::Cvt { .. } => OpClass::Convert,
            Op::PtrAdd { .. } => OpClass::IntAlu,
            Op::Load(s)
            | Op::Store(s)
            | Op::LoadVec(s, _)
            | Op::StoreVec(s, _)
            | Op::MatrixLoad(s, _)
            | Op::MatrixStore(s, _) => match s {
                Space::Device | Space::Constant => OpClass::DeviceMemory,
                Space::Threadgroup => OpClass::ThreadgroupMemory,
                Space::Thread => OpClass::ThreadMemory,
            },
            Op::MatrixMac => OpClass::SimdMatrix,
            Op::Atomic(..) => OpClass::Atomic,
            Op::Barrier(..) => OpClass::Barrier,
            Op::Simd(s) | Op::Quad(s) => {
                if s.is_reduction() {
                    OpClass::SimdReduce
                } else {
                    OpClass::SimdShuffle
                }
            }
        }
    }

    /// Has an effect beyond its result (memory, synchronization): never removed as dead.
    pub fn has_side_effect(self) -> bool {
        matches!(
            self,
            Op::Store(_)
                | Op::StoreVec(..)
                | Op::MatrixStore(..)
                | Op::Atomic(..)
                | Op::Barrier(..)
        )
    }

    /// Reads memory (so it must not be speculated on lanes that would not execute it).
    pub fn reads_memory(self) -> bool {
        matches!(
            self,
            Op::Load(_) | Op::LoadVec(..) | Op::MatrixLoad(..) | Op::Atomic(..)
        )
    }

    /// Its result depends on which lanes are active (cross-lane operations).
    pub fn is_cross_lane(self) -> bool {
        matches!(self, Op::Simd(_) | Op::Quad(_) | Op::MatrixMac)
    }
}

/// The element of an 8x8 SIMD-group matrix that lane `lane` (0 to 31) holds as its
/// `k`-th thread element (`k` is 0 or 1), as `(row, column)`.
///
/// Each lane holds two adjacent elements of one row: lanes 0-7 cover rows 0-3, columns 0-3;
/// lanes 8-15 rows 0-3, columns 4-7; lanes 16-23 rows 4-7, columns 0-3; lanes 24-31 rows
/// 4-7, columns 4-7; within a group of 8, lane pairs share a row. This is the layout
/// Apple's `simdgroup_matrix::thread_elements()` is reported to use (it is not published
/// by Apple; metal-flash-attention relies on it), so kernels that read thread elements
/// directly see what they would on the GPU.
pub fn matrix_element(lane: u32, k: u32) -> (u32, u32) {
    let quad = (lane % 32) / 4;
    let row = (quad / 4) * 4 + (lane / 2) % 4;
    let col = (quad & 2) * 2 + (lane % 2) * 2 + (k & 1);
    (row, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matrix_layout_covers_every_element_once() {
        let mut seen = [[false; 8]; 8];
        for lane in 0..32 {
            for k in 0..2 {
                let (r, c) = matrix_element(lane, k);
                assert!(!seen[r as usize][c as usize], "lane {lane} element {k}");
                seen[r as usize][c as usize] = true;
            }
        }
        assert_eq!(matrix_element(0, 0), (0, 0));
        assert_eq!(matrix_element(1, 1), (0, 3));
        assert_eq!(matrix_element(8, 0), (0, 4));
        assert_eq!(matrix_element(31, 1), (7, 7));
    }

    #[test]
    fn names_are_unique_and_round_trip() {
        for s in SpecialReg::ALL {
            assert_eq!(SpecialReg::from_name(s.name()), Some(*s));
        }
        for s in SimdOp::ALL {
            assert_eq!(SimdOp::from_name(s.name()), Some(*s));
        }
        for m in MathFn::ALL {
            assert_eq!(MathFn::from_name(m.name()), Some(*m));
        }
        for f in IntFn::ALL {
            assert_eq!(IntFn::from_name(f.name()), Some(*f));
            assert!(MathFn::from_name(f.name()).is_none());
        }
    }

    #[test]
    fn mem_flags_text() {
        let f = MemFlags(MemFlags::DEVICE.0 | MemFlags::THREADGROUP.0);
        assert_eq!(f.to_text(), "device|threadgroup");
        assert_eq!(MemFlags::from_text("device|threadgroup"), Some(f));
        assert_eq!(MemFlags::from_text("none"), Some(MemFlags::NONE));
        assert_eq!(MemFlags::from_text("bogus"), None);
    }

    #[test]
    fn result_types() {
        assert_eq!(
            Op::Cmp(CmpCond::Lt).result_type(Type::F32),
            Some(Type::Pred)
        );
        assert_eq!(Op::Store(Space::Device).result_type(Type::F32), None);
        assert_eq!(
            Op::Simd(SimdOp::Ballot).result_type(Type::Pred),
            Some(Type::U64)
        );
        assert_eq!(
            Op::Atomic(AtomicOp::Store, Space::Device).result_type(Type::U32),
            None
        );
    }
}
