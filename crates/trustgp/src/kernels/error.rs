//! Errors raised while building, parsing or validating a kernel.

use thiserror::Error;

/// Everything that can go wrong with user-supplied kernel input.
///
/// Each variant says what was wrong, where (character position in the
/// expression, or the parameter/kernel concerned) and what was expected, so
/// that a message can be shown to the user verbatim.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum KernelError {
    /// The expression contains no kernel at all.
    #[error("empty kernel expression: expected a kernel such as `se` or `const * se`")]
    Empty,
    /// A token that the grammar does not allow at this point.
    #[error("at position {pos}: expected {expected}, found {found}")]
    Syntax {
        /// 0-based character position of the offending token.
        pos: usize,
        /// What the grammar allows here.
        expected: String,
        /// The offending token (or "end of input").
        found: String,
    },
    /// A kernel name that is not one of the known base kernels.
    #[error("at position {pos}: unknown kernel `{name}`, expected one of {known}")]
    UnknownKernel {
        /// 0-based character position of the name.
        pos: usize,
        /// The unknown name.
        name: String,
        /// The accepted names.
        known: &'static str,
    },
    /// Parentheses nested deeper than the parser accepts.
    #[error(
        "at position {pos}: parentheses nested more than {max} deep; write the kernel with \
         fewer nested groups"
    )]
    TooDeep {
        /// 0-based character position of the first `(` beyond the limit.
        pos: usize,
        /// The deepest nesting accepted.
        max: usize,
    },
    /// An expression with more base kernels than the parser accepts.
    #[error(
        "at position {pos}: the expression has more than {max} base kernels; every one adds \
         parameters to fit and work to every evaluation"
    )]
    TooLarge {
        /// 0-based character position of the first base kernel beyond the limit.
        pos: usize,
        /// The most base kernels accepted.
        max: usize,
    },
    /// A semantic error located at a character position of the expression.
    #[error("at position {pos}: {source}")]
    At {
        /// 0-based character position of the argument concerned.
        pos: usize,
        /// What was wrong there.
        source: Box<KernelError>,
    },
    /// A key that the kernel does not accept.
    #[error("`{kernel}` has no parameter `{key}`; valid keys are {valid}")]
    InvalidKey {
        /// Kernel name.
        kernel: &'static str,
        /// The rejected key.
        key: String,
        /// The keys this kernel accepts.
        valid: &'static str,
    },
    /// The same key given twice for one kernel.
    #[error("`{kernel}`: parameter `{key}` given more than once")]
    DuplicateKey {
        /// Kernel name.
        kernel: &'static str,
        /// The repeated key.
        key: String,
    },
    /// A positive parameter that is zero, negative, NaN or infinite.
    #[error("`{name}` must be a positive finite number, got {value}")]
    NotPositive {
        /// Parameter name (e.g. `se.ls` or `k1.se.ls[0]`).
        name: String,
        /// The rejected value.
        value: f64,
    },
    /// A value of the wrong shape (list where a number is expected, etc.).
    #[error("`{kernel}`: `{key}` expects {expected}")]
    BadValue {
        /// Kernel name.
        kernel: &'static str,
        /// Parameter key.
        key: String,
        /// Description of the accepted values.
        expected: &'static str,
    },
    /// A `dims` list with a repeated column.
    #[error("`{kernel}`: dims lists input column {dim} more than once")]
    DuplicateDim {
        /// Kernel name.
        kernel: &'static str,
        /// The repeated column.
        dim: usize,
    },
    /// A kernel uses an input column the data does not have.
    #[error(
        "`{kernel}`: dims refers to input column {dim}, but the data has only {ncols} columns"
    )]
    DimOutOfRange {
        /// Kernel name.
        kernel: &'static str,
        /// Requested column.
        dim: usize,
        /// Number of columns in the data.
        ncols: usize,
    },
    /// An ARD lengthscale list whose length differs from the number of active inputs.
    #[error("`{kernel}`: ls lists {got} lengthscales, expected {expected} (one per active input)")]
    LengthscaleCount {
        /// Kernel name.
        kernel: &'static str,
        /// Number of active inputs.
        expected: usize,
        /// Number of lengthscales given.
        got: usize,
    },
    /// A parameter vector of the wrong length.
    #[error("expected {expected} kernel parameters, got {got}")]
    ParamCount {
        /// Number of parameters of the kernel.
        expected: usize,
        /// Length of the vector supplied.
        got: usize,
    },
    /// A non-finite log-parameter value.
    #[error("log-parameter `{name}` must be finite, got {value}")]
    NonFiniteParam {
        /// Parameter name.
        name: String,
        /// The rejected value.
        value: f64,
    },
    /// A multi-output (coregionalisation) kernel that does not make sense.
    #[error("multi-output kernel: {0}")]
    MultiOutput(String),
    /// A kernel without the random-feature (spectral) prior samples of `kernels::spectral`.
    #[error("random-feature prior samples: {0}")]
    NoSpectralFeatures(String),
}

impl KernelError {
    /// Attaches a character position to an error raised while checking an argument, unless
    /// it carries a more precise one already (so that a message says "at position" once).
    pub(crate) fn at(self, pos: usize) -> Self {
        match self {
            KernelError::Syntax { .. }
            | KernelError::UnknownKernel { .. }
            | KernelError::TooDeep { .. }
            | KernelError::TooLarge { .. }
            | KernelError::At { .. } => self,
            other => KernelError::At {
                pos,
                source: Box::new(other),
            },
        }
    }
}
