//! Tests of the verification layer.
