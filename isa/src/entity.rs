//! Entity references: small `u32` newtypes whose `Display` is their text form.

use std::fmt;

macro_rules! entity {
    ($(#[$doc:meta])* $name:ident, $prefix:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
        pub struct $name(pub u32);

        impl $name {
            /// The entity's position in its function's table.
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }
    };
}

entity!(
    /// An SSA value: a typed virtual register, defined once (by an instruction or as a
    /// block parameter). Printed `v12`.
    Value,
    "v"
);
entity!(
    /// A basic block. Printed `bb3`; `bb0` is the entry.
    Block,
    "bb"
);
entity!(
    /// An instruction in its function's instruction arena. Printed `i7` (not part of the
    /// text format; used in diagnostics).
    Inst,
    "i"
);
