//! The one error type of the launch boundary.

use std::io;

/// Why a launch spec could not be read, checked or materialized, or an output not written.
///
/// Every message is meant for the user: it starts with the spec file (or the `.npy` file)
/// and, where one is at fault, the buffer (`buffer 3 (N)`) or threadgroup-memory binding,
/// then says which key is wrong and what would be right.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    /// The spec file could not be read.
    #[error("{path}: cannot read the launch spec: {source}")]
    Read {
        /// The file as given.
        path: String,
        /// What the operating system said.
        source: io::Error,
    },
    /// The file is not valid TOML, or a key, type or value is not one the format knows.
    #[error("{origin}:{line}:{column}: {message}")]
    Syntax {
        /// The spec file.
        origin: String,
        /// 1-based line.
        line: usize,
        /// 1-based column, in characters.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// A top-level key (`kernel`, `threads`, `threadgroups`, `threadgroup`) is wrong, or the
    /// kernel has a parameter that the spec does not bind.
    #[error("{origin}: {message}")]
    Launch {
        /// The spec file.
        origin: String,
        /// What is wrong.
        message: String,
    },
    /// A `[[buffer]]` is wrong or does not fit the kernel's parameter.
    #[error("{origin}: buffer {index} ({name}): {message}")]
    Buffer {
        /// The spec file.
        origin: String,
        /// The buffer's `index`.
        index: u32,
        /// The buffer's `name`.
        name: String,
        /// What is wrong, naming the key.
        message: String,
    },
    /// A `[[texture]]` is wrong or does not fit the kernel's parameter.
    #[error("{origin}: texture {index} ({name}): {message}")]
    Texture {
        /// The spec file.
        origin: String,
        /// The texture's `index`.
        index: u32,
        /// The texture's `name`.
        name: String,
        /// What is wrong, naming the key.
        message: String,
    },
    /// A `[[sampler]]` is wrong or does not fit the kernel's parameters.
    #[error("{origin}: sampler {index}: {message}")]
    Sampler {
        /// The spec file.
        origin: String,
        /// The sampler's `index`.
        index: u32,
        /// What is wrong, naming the key.
        message: String,
    },
    /// A `[[threadgroup_memory]]` is wrong or does not fit the kernel's parameter.
    #[error("{origin}: threadgroup_memory {index}: {message}")]
    ThreadgroupMemory {
        /// The spec file.
        origin: String,
        /// The binding's `index`.
        index: u32,
        /// What is wrong, naming the key.
        message: String,
    },
    /// The buffers together need more memory than may be allocated. Raised before any
    /// buffer is allocated.
    #[error(
        "{origin}: the buffers need {} in all but at most {} may be allocated; \
         the largest is buffer {largest_index} ({largest_name}) with {}",
        bytes_text(*needed),
        bytes_text(*limit as u128),
        bytes_text(*largest_bytes)
    )]
    MemoryLimit {
        /// The spec file.
        origin: String,
        /// Bytes all buffers need together.
        needed: u128,
        /// Bytes they may take.
        limit: u64,
        /// The largest buffer's index.
        largest_index: u32,
        /// The largest buffer's name.
        largest_name: String,
        /// The largest buffer's size in bytes.
        largest_bytes: u128,
    },
    /// A `.npy` file could not be read, or does not fit the element type asked for.
    #[error("{path}: {message}")]
    Npy {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// An output could not be written.
    #[error("{path}: cannot write the output: {message}")]
    Output {
        /// The file (or folder) that could not be written.
        path: String,
        /// What is wrong.
        message: String,
    },
}

/// A byte count for people: `1.5 GiB (1610612736 bytes)`.
pub(crate) fn bytes_text(bytes: u128) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if bytes < 1024 {
        return format!("{bytes} bytes");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {} ({bytes} bytes)", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_counts_read_well() {
        assert_eq!(bytes_text(12), "12 bytes");
        assert_eq!(bytes_text(1024), "1.0 KiB (1024 bytes)");
        assert_eq!(bytes_text(3 << 29), "1.5 GiB (1610612736 bytes)");
        assert_eq!(
            bytes_text(1 << 80),
            "1048576.0 EiB (1208925819614629174706176 bytes)"
        );
    }
}
