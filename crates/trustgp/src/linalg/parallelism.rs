//! When dense kernels should use both cores.
//!
//! Below n ≈ 1000 the factorisations are faster sequential (thread hand-off costs more than it
//! saves) and the cores are better spent on independent work such as optimiser restarts. Never
//! nest faer's rayon parallelism inside a rayon parallel loop of ours.

/// Whether dense linear algebra may use all cores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Parallelism {
    /// One thread: the caller is already running things in parallel, or the problem is small.
    Sequential,
    /// All of rayon's threads.
    Parallel,
}

impl Parallelism {
    /// The faer setting for this choice.
    pub fn faer(self) -> faer::Par {
        match self {
            Parallelism::Sequential => faer::Par::Seq,
            Parallelism::Parallel => faer::Par::rayon(0),
        }
    }
}

/// The size from which factorisations are run in parallel.
pub const PARALLEL_FROM: usize = 768;

/// The parallelism dense work on an `n × n` matrix should use when nothing else runs beside it.
pub fn parallelism_for(n: usize) -> Parallelism {
    if n >= PARALLEL_FROM && rayon::current_num_threads() > 1 {
        Parallelism::Parallel
    } else {
        Parallelism::Sequential
    }
}
