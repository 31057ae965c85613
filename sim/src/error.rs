//! Errors of bad input: the dispatch cannot be run at all (exit code 2 at the CLI).

use thiserror::Error;

/// Why a dispatch cannot be simulated.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum SimError {
    /// The module has no kernel of this name.
    #[error("the module has no kernel named `{name}`")]
    UnknownKernel {
        /// The name asked for.
        name: String,
    },
    /// The kernel fails the ISA verifier.
    #[error(transparent)]
    Verify(#[from] metalsim_isa::VerifyError),
    /// A `[[buffer(n)]]` parameter has no buffer bound.
    #[error("no buffer is bound at buffer({index}) for parameter `{name}`")]
    MissingBuffer {
        /// The binding index.
        index: u32,
        /// The parameter's name.
        name: String,
    },
    /// A `[[threadgroup(n)]]` parameter has no threadgroup memory size given.
    #[error("no threadgroup memory is bound at threadgroup({index}) for parameter `{name}`")]
    MissingThreadgroupMemory {
        /// The binding index.
        index: u32,
        /// The parameter's name.
        name: String,
    },
    /// The launch cannot run on this GPU or with this kernel (sizes, limits).
    #[error("bad launch: {0}")]
    BadLaunch(String),
}
