//! The metalsim command line.
fn main() {}
