//! The simulator (being written).
