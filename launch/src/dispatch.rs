//! A resolved dispatch: everything the simulator needs to run one kernel, as plain data.

use metalsim_isa::Type;

/// How the grid was given.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Grid {
    /// `dispatchThreads`: the grid in threads; edge threadgroups may be partial.
    Threads([u32; 3]),
    /// `dispatchThreadgroups`: the grid in whole threadgroups.
    Threadgroups([u32; 3]),
}

/// The element type of a buffer: a scalar type and a vector width (1 for scalars).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct ElemType {
    /// The scalar type (`bool` is [`Type::Pred`], one byte per element).
    pub scalar: Type,
    /// Vector components, 1 to 4.
    pub lanes: u8,
}

impl ElemType {
    /// Bytes per element in a buffer, as MSL lays it out (3-component vectors take the
    /// space of 4).
    pub fn size(self) -> u32 {
        let lanes = if self.lanes == 3 {
            4
        } else {
            self.lanes as u32
        };
        self.scalar.bytes() * lanes
    }

    /// The MSL spelling (`float`, `uchar4`, `bool`).
    pub fn msl_name(self) -> String {
        let base = match self.scalar {
            Type::Pred => "bool",
            Type::I8 => "char",
            Type::U8 => "uchar",
            Type::I16 => "short",
            Type::U16 => "ushort",
            Type::I32 => "int",
            Type::U32 => "uint",
            Type::I64 => "long",
            Type::U64 => "ulong",
            Type::F16 => "half",
            Type::BF16 => "bfloat",
            Type::F32 => "float",
        };
        if self.lanes == 1 {
            base.to_string()
        } else {
            format!("{base}{}", self.lanes)
        }
    }

    /// Parses an MSL scalar or vector type name (`float`, `uint2`, `uchar4`, `bool`).
    pub fn from_msl_name(name: &str) -> Option<ElemType> {
        let (base, lanes) = match name.as_bytes().last() {
            Some(d @ b'2'..=b'4') => (&name[..name.len() - 1], d - b'0'),
            _ => (name, 1),
        };
        let scalar = match base {
            "bool" => Type::Pred,
            "char" => Type::I8,
            "uchar" => Type::U8,
            "short" => Type::I16,
            "ushort" => Type::U16,
            "int" => Type::I32,
            "uint" => Type::U32,
            "long" => Type::I64,
            "ulong" => Type::U64,
            "half" => Type::F16,
            "bfloat" => Type::BF16,
            "float" => Type::F32,
            _ => return None,
        };
        Some(ElemType { scalar, lanes })
    }
}

/// A buffer bound at `[[buffer(index)]]`, with its initial contents.
#[derive(Clone, PartialEq, Debug)]
pub struct BufferBinding {
    /// The binding index.
    pub index: u32,
    /// The name (from the spec), used for output files and diagnostics.
    pub name: String,
    /// The element type the spec declared.
    pub elem: ElemType,
    /// Number of elements.
    pub count: u64,
    /// The contents, `count * elem.size()` bytes, little endian.
    pub bytes: Vec<u8>,
    /// Written out after the run.
    pub output: bool,
}

/// Host-sized threadgroup memory bound at `[[threadgroup(index)]]`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct ThreadgroupBinding {
    /// The binding index.
    pub index: u32,
    /// Size in bytes.
    pub bytes: u32,
}

/// One dispatch of one kernel, ready to simulate.
#[derive(Clone, PartialEq, Debug)]
pub struct Launch {
    /// The kernel's host name.
    pub kernel: String,
    /// The grid.
    pub grid: Grid,
    /// Threads per threadgroup.
    pub threadgroup: [u32; 3],
    /// Buffers in binding order.
    pub buffers: Vec<BufferBinding>,
    /// Threadgroup-memory bindings.
    pub threadgroup_memory: Vec<ThreadgroupBinding>,
}

impl Launch {
    /// Threadgroups per grid in each dimension.
    pub fn threadgroups_per_grid(&self) -> [u32; 3] {
        match self.grid {
            Grid::Threadgroups(g) => g,
            Grid::Threads(t) => {
                let mut g = [0; 3];
                for d in 0..3 {
                    g[d] = t[d].div_ceil(self.threadgroup[d].max(1));
                }
                g
            }
        }
    }

    /// Threads per grid in each dimension (for `dispatchThreadgroups`, whole groups).
    pub fn threads_per_grid(&self) -> [u32; 3] {
        match self.grid {
            Grid::Threads(t) => t,
            Grid::Threadgroups(g) => {
                let mut t = [0; 3];
                for d in 0..3 {
                    t[d] = g[d].saturating_mul(self.threadgroup[d]);
                }
                t
            }
        }
    }

    /// Total number of threadgroups.
    pub fn threadgroup_count(&self) -> u64 {
        self.threadgroups_per_grid()
            .iter()
            .map(|&g| g as u64)
            .product()
    }

    /// The buffer bound at an index.
    pub fn buffer(&self, index: u32) -> Option<&BufferBinding> {
        self.buffers.iter().find(|b| b.index == index)
    }

    /// The size of the threadgroup memory bound at an index.
    pub fn threadgroup_memory(&self, index: u32) -> Option<u32> {
        self.threadgroup_memory
            .iter()
            .find(|t| t.index == index)
            .map(|t| t.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn msl_names_round_trip() {
        for name in [
            "bool", "char", "uchar4", "short2", "ushort", "int3", "uint", "half4", "float",
            "float3", "long", "bfloat2",
        ] {
            let e = ElemType::from_msl_name(name).unwrap();
            assert_eq!(e.msl_name(), name);
        }
        assert_eq!(ElemType::from_msl_name("float3").unwrap().size(), 16);
        assert_eq!(ElemType::from_msl_name("uchar4").unwrap().size(), 4);
        assert!(ElemType::from_msl_name("float5").is_none());
        assert!(ElemType::from_msl_name("double").is_none());
    }

    #[test]
    fn grid_shapes() {
        let l = Launch {
            kernel: "k".into(),
            grid: Grid::Threads([1000, 3, 1]),
            threadgroup: [256, 2, 1],
            buffers: vec![],
            threadgroup_memory: vec![],
        };
        assert_eq!(l.threadgroups_per_grid(), [4, 2, 1]);
        assert_eq!(l.threadgroup_count(), 8);
        assert_eq!(l.threads_per_grid(), [1000, 3, 1]);
    }
}
