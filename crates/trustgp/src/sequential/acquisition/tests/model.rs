//! The acquisitions on a fitted exact GP: against Monte Carlo from its posterior, and their
//! input gradients against central finite differences.
