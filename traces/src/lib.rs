//! Run results (being written).
