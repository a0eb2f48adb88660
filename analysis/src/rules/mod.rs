//! Rule families. Each module declares its rules (code, name, severity, docs, examples,
//! manual lines) next to the code that checks them; [`registry`] lists them all.

pub mod kernel;
pub mod mapping;
pub mod registry;
pub mod tool;
