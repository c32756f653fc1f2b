//! orrery-sim's integration tests (one binary; see the modules).

mod drift;
mod gpu;
mod host;
mod restart;
