//! Modules, functions, blocks and instructions.

use crate::entity::{Block, Inst, Value};
use crate::op::{Op, Space};
use crate::types::Type;

/// Where in the source an instruction came from. `line == 0` means unknown.
///
/// `file` indexes [`Module::files`]; lines and columns count from 1 (columns in bytes).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, PartialOrd, Ord)]
pub struct SrcLoc {
    /// Index into the module's file table.
    pub file: u32,
    /// 1-based line, or 0 when unknown.
    pub line: u32,
    /// 1-based column in bytes.
    pub col: u32,
}

impl SrcLoc {
    /// No location.
    pub const UNKNOWN: SrcLoc = SrcLoc {
        file: 0,
        line: 0,
        col: 0,
    };

    /// Whether the location is known.
    pub fn is_known(self) -> bool {
        self.line != 0
    }
}

/// One instruction: an operation, its type, its operands and its results.
#[derive(Clone, PartialEq, Debug)]
pub struct InstData {
    /// What the instruction does.
    pub op: Op,
    /// The operation type (see [`Op::result_type`] for the result's type).
    pub ty: Type,
    /// Operands, `op.arity()` of them.
    pub args: Vec<Value>,
    /// The values defined: `op.result_count()` of them (most operations define one or
    /// none).
    pub results: Vec<Value>,
}

impl InstData {
    /// The first (for most operations the only) result.
    pub fn result(&self) -> Option<Value> {
        self.results.first().copied()
    }
}

/// How a block ends.
#[derive(Clone, PartialEq, Debug)]
pub enum Terminator {
    /// Jump to a block, passing its parameters.
    Br(Block, Vec<Value>),
    /// Jump to the first target where `cond` holds, else to the second.
    BrIf {
        /// The predicate.
        cond: Value,
        /// Target when true, with its arguments.
        then_: (Block, Vec<Value>),
        /// Target when false, with its arguments.
        else_: (Block, Vec<Value>),
    },
    /// The thread finishes.
    Ret,
}

impl Terminator {
    /// The successor blocks with the arguments passed to each.
    pub fn targets(&self) -> Vec<(Block, &[Value])> {
        match self {
            Terminator::Br(b, a) => vec![(*b, a.as_slice())],
            Terminator::BrIf { then_, else_, .. } => {
                vec![(then_.0, then_.1.as_slice()), (else_.0, else_.1.as_slice())]
            }
            Terminator::Ret => vec![],
        }
    }

    /// Every value the terminator reads.
    pub fn uses(&self) -> Vec<Value> {
        let mut v = Vec::new();
        if let Terminator::BrIf { cond, .. } = self {
            v.push(*cond);
        }
        for (_, args) in self.targets() {
            v.extend_from_slice(args);
        }
        v
    }
}

/// A basic block.
#[derive(Clone, PartialEq, Debug)]
pub struct BlockData {
    /// Block parameters (SSA phis), set by the branches that enter the block.
    pub params: Vec<Value>,
    /// Instructions in order.
    pub insts: Vec<Inst>,
    /// How the block ends.
    pub term: Terminator,
    /// Where the terminator came from.
    pub term_loc: SrcLoc,
}

/// Whether a kernel parameter is a buffer or host-sized threadgroup memory.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum ParamKind {
    /// `[[buffer(n)]]`.
    Buffer,
    /// `[[threadgroup(n)]]`.
    Threadgroup,
}

impl ParamKind {
    /// `buffer` or `threadgroup`.
    pub fn name(self) -> &'static str {
        match self {
            ParamKind::Buffer => "buffer",
            ParamKind::Threadgroup => "threadgroup",
        }
    }
}

/// A kernel parameter bound by the host: what the launch spec must provide.
#[derive(Clone, PartialEq, Debug)]
pub struct KernelParam {
    /// Buffer or threadgroup binding.
    pub kind: ParamKind,
    /// The binding index `n`.
    pub index: u32,
    /// The parameter's name in the source.
    pub name: String,
    /// Its address space.
    pub space: Space,
    /// The element type as the source spells it (`float`, `uchar4`, `atomic_float`,
    /// `Params`), used to check a launch spec's `type`.
    pub type_name: String,
    /// Bytes per element.
    pub elem_size: u32,
    /// Alignment of an element in bytes.
    pub elem_align: u32,
    /// The kernel never writes through it (`const` or `constant`).
    pub readonly: bool,
    /// Bound as a reference (`constant T& x`): one element.
    pub is_ref: bool,
    /// The element is an atomic type.
    pub atomic: bool,
    /// The element is a struct: a spec only needs to match its size.
    pub is_struct: bool,
}

impl KernelParam {
    /// Buffer bindings from this index up are not written by users (Metal's end at 30):
    /// the texture bound at `[[texture(n)]]` is lowered to the device buffer bound at
    /// `TEXTURE_BUFFER_BASE + n`. That buffer holds a 16-byte header (width, height, depth
    /// and a pixel-format code, four `u32`s) followed by the texels, row-major, four
    /// channels of the texture's element type each.
    pub const TEXTURE_BUFFER_BASE: u32 = 1024;

    /// The sampler bound at `[[sampler(n)]]` is lowered to the constant buffer bound at
    /// `SAMPLER_BUFFER_BASE + n`: the prelude's `sampler` struct, twelve 4-byte words
    /// (written by the launch crate from the spec's `[[sampler]]` table).
    pub const SAMPLER_BUFFER_BASE: u32 = Self::TEXTURE_BUFFER_BASE + 512;

    /// For the buffer of a texture, the index `n` of its `[[texture(n)]]` binding.
    pub fn texture_index(&self) -> Option<u32> {
        (self.kind == ParamKind::Buffer
            && (Self::TEXTURE_BUFFER_BASE..Self::SAMPLER_BUFFER_BASE).contains(&self.index))
        .then(|| self.index - Self::TEXTURE_BUFFER_BASE)
    }

    /// For the buffer of a sampler, the index `n` of its `[[sampler(n)]]` binding.
    pub fn sampler_index(&self) -> Option<u32> {
        (self.kind == ParamKind::Buffer && self.index >= Self::SAMPLER_BUFFER_BASE)
            .then(|| self.index - Self::SAMPLER_BUFFER_BASE)
    }
}

/// A fixed-size memory allocation of a function (a threadgroup array declared in the
/// kernel body, or a thread-private array).
#[derive(Clone, PartialEq, Debug)]
pub struct Alloc {
    /// Size in bytes.
    pub size: u32,
    /// Alignment in bytes.
    pub align: u32,
    /// The source name, for diagnostics.
    pub name: String,
}

/// Read-only data in the constant address space (program-scope `constant` arrays).
#[derive(Clone, PartialEq, Debug)]
pub struct DataObject {
    /// The bytes.
    pub bytes: Vec<u8>,
    /// Alignment in bytes.
    pub align: u32,
    /// The source name, for diagnostics.
    pub name: String,
}

/// A kernel: parameters, allocations, values and blocks.
#[derive(Clone, PartialEq, Debug, Default)]
pub struct Function {
    /// The host name of the kernel.
    pub name: String,
    /// Host-bound parameters in declaration order.
    pub params: Vec<KernelParam>,
    /// Threadgroup allocations declared in the body (`ThreadgroupAddr(n)`).
    pub threadgroup_allocs: Vec<Alloc>,
    /// Thread-memory allocations (`LocalAddr(n)`).
    pub locals: Vec<Alloc>,
    /// The type of each value, indexed by [`Value`].
    pub value_types: Vec<Type>,
    /// Instruction arena, indexed by [`Inst`].
    pub insts: Vec<InstData>,
    /// Source location of each instruction, indexed by [`Inst`] (a side table).
    pub inst_locs: Vec<SrcLoc>,
    /// Blocks, indexed by [`Block`]; `bb0` is the entry.
    pub blocks: Vec<BlockData>,
}

impl Function {
    /// The type of a value.
    pub fn value_type(&self, v: Value) -> Type {
        self.value_types[v.index()]
    }

    /// An instruction's data.
    pub fn inst(&self, i: Inst) -> &InstData {
        &self.insts[i.index()]
    }

    /// A block's data.
    pub fn block(&self, b: Block) -> &BlockData {
        &self.blocks[b.index()]
    }

    /// The entry block.
    pub fn entry(&self) -> Block {
        Block(0)
    }

    /// All blocks in index order.
    pub fn block_ids(&self) -> impl Iterator<Item = Block> + '_ {
        (0..self.blocks.len() as u32).map(Block)
    }

    /// Number of instructions placed in blocks (the arena may hold detached ones).
    pub fn placed_inst_count(&self) -> usize {
        self.blocks.iter().map(|b| b.insts.len()).sum()
    }

    /// The parameter bound at a given kind and index.
    pub fn param(&self, kind: ParamKind, index: u32) -> Option<&KernelParam> {
        self.params
            .iter()
            .find(|p| p.kind == kind && p.index == index)
    }
}

/// A compilation unit: the source files it came from, its constant data and its kernels.
#[derive(Clone, PartialEq, Debug, Default)]
pub struct Module {
    /// Source file names, indexed by [`SrcLoc::file`].
    pub files: Vec<String>,
    /// Constant data objects (`DataAddr(n)`), shared by every kernel.
    pub data: Vec<DataObject>,
    /// The kernels.
    pub functions: Vec<Function>,
}

impl Module {
    /// The kernel with this name.
    pub fn function(&self, name: &str) -> Option<&Function> {
        self.functions.iter().find(|f| f.name == name)
    }

    /// `file:line:col` for a location, or `?` when unknown.
    pub fn describe_loc(&self, loc: SrcLoc) -> String {
        if !loc.is_known() {
            return "?".to_string();
        }
        let file = self
            .files
            .get(loc.file as usize)
            .map(String::as_str)
            .unwrap_or("?");
        format!("{file}:{}:{}", loc.line, loc.col)
    }
}
