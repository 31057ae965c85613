//! MLX outputs: each written as a `.npy` file of its shape.

use std::fs::File;
use std::io::{self, BufWriter};
use std::path::Path;

use half::{bf16, f16};
use metalsim_isa::Type;
use npyz::WriterBuilder;

use crate::dispatch::ElemType;

/// Writes buffer bytes of scalar `elem`s as a `.npy` file of the given shape.
pub(super) fn write_shaped(
    path: &Path,
    elem: ElemType,
    shape: &[u64],
    bytes: &[u8],
) -> io::Result<()> {
    let size = elem.scalar.bytes() as usize;
    let items = bytes.chunks_exact(size);
    let w = BufWriter::new(File::create(path)?);
    fn le<const N: usize>(b: &[u8]) -> [u8; N] {
        b.try_into().expect("chunks of the element size")
    }
    match elem.scalar {
        Type::Pred => write_items(w, shape, items.map(|b| b[0] != 0)),
        Type::I8 => write_items(w, shape, items.map(|b| b[0] as i8)),
        Type::U8 => write_items(w, shape, items.map(|b| b[0])),
        Type::I16 => write_items(w, shape, items.map(|b| i16::from_le_bytes(le(b)))),
        Type::U16 => write_items(w, shape, items.map(|b| u16::from_le_bytes(le(b)))),
        Type::I32 => write_items(w, shape, items.map(|b| i32::from_le_bytes(le(b)))),
        Type::U32 => write_items(w, shape, items.map(|b| u32::from_le_bytes(le(b)))),
        Type::I64 => write_items(w, shape, items.map(|b| i64::from_le_bytes(le(b)))),
        Type::U64 => write_items(w, shape, items.map(|b| u64::from_le_bytes(le(b)))),
        Type::F16 => write_items(w, shape, items.map(|b| f16::from_le_bytes(le(b)))),
        Type::F32 => write_items(w, shape, items.map(|b| f32::from_le_bytes(le(b)))),
        Type::BF16 => write_items(w, shape, items.map(|b| bf16::from_le_bytes(le(b)).to_f32())),
    }
}

fn write_items<T: npyz::AutoSerialize>(
    w: BufWriter<File>,
    shape: &[u64],
    items: impl Iterator<Item = T>,
) -> io::Result<()> {
    let mut npy = npyz::WriteOptions::new()
        .default_dtype()
        .shape(shape)
        .writer(w)
        .begin_nd()?;
    for x in items {
        npy.push(&x)?;
    }
    npy.finish()
}
