//! Candidate kernel sets: the 144-kernel space (Duvenaud et al.'s grammar to level 3), the
//! 12-kernel space of the VBKS paper's Table 1, and lists the user writes
//! (`"se; per * lin; (per + rq) * lin"`), each deduplicated by canonical form.

use std::collections::HashSet;

use crate::kernels::BaseKind;

use super::grammar::Structure;
use super::SelectionError;

/// The four base kernels of the spaces, in the canonical order SE < RQ < PER < LIN.
pub const BASES: [BaseKind; 4] = [BaseKind::Se, BaseKind::Rq, BaseKind::Per, BaseKind::Lin];

/// A finite, duplicate-free, ordered set of candidate kernel structures.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelSpace {
    kernels: Vec<Structure>,
}

fn b(i: usize) -> Structure {
    Structure::Base(BASES[i])
}

/// The 10 multisets `{a ≤ b}` of two base kernels, in the order of spec §3.3.
fn pairs() -> Vec<(usize, usize)> {
    (0..4).flat_map(|a| (a..4).map(move |b| (a, b))).collect()
}

impl KernelSpace {
    /// The space of these structures, in this order, after canonicalisation.
    ///
    /// # Errors
    /// [`SelectionError::Invalid`] if the list is empty or two entries have the same canonical
    /// form (naming both).
    pub fn new(kernels: Vec<Structure>) -> Result<KernelSpace, SelectionError> {
        if kernels.is_empty() {
            return Err(SelectionError::Invalid(
                "a kernel space needs at least one kernel".into(),
            ));
        }
        let kernels: Vec<Structure> = kernels.iter().map(Structure::canonical).collect();
        let mut seen = HashSet::new();
        for (i, k) in kernels.iter().enumerate() {
            if !seen.insert(k.key()) {
                let first = kernels.iter().position(|o| o.key() == k.key()).unwrap_or(0);
                return Err(SelectionError::Invalid(format!(
                    "kernel {} (`{k}`) is the same structure as kernel {}: list each kernel once",
                    i + 1,
                    first + 1
                )));
            }
        }
        Ok(KernelSpace { kernels })
    }

    /// The 144 kernels up to level 3, in the enumeration order of spec §3.3: the 4 base
    /// kernels; `a + b` and `a * b` over the 10 pairs; `a + b + c` and `a * b * c` over the 20
    /// triples; `a * b + c` and `(a + b) * c` for each pair and each `c`.
    pub fn k144() -> KernelSpace {
        let triples: Vec<(usize, usize, usize)> = (0..4)
            .flat_map(|a| (a..4).flat_map(move |b| (b..4).map(move |c| (a, b, c))))
            .collect();
        let mut k: Vec<Structure> = (0..4).map(b).collect();
        k.extend(
            pairs()
                .iter()
                .map(|&(x, y)| Structure::sum(vec![b(x), b(y)])),
        );
        k.extend(
            pairs()
                .iter()
                .map(|&(x, y)| Structure::product(vec![b(x), b(y)])),
        );
        for sum in [true, false] {
            k.extend(triples.iter().map(|&(x, y, z)| {
                let children = vec![b(x), b(y), b(z)];
                if sum {
                    Structure::sum(children)
                } else {
                    Structure::product(children)
                }
            }));
        }
        for &(x, y) in &pairs() {
            for z in 0..4 {
                k.push(Structure::sum(vec![
                    Structure::product(vec![b(x), b(y)]),
                    b(z),
                ]));
            }
        }
        for &(x, y) in &pairs() {
            for z in 0..4 {
                k.push(Structure::product(vec![
                    Structure::sum(vec![b(x), b(y)]),
                    b(z),
                ]));
            }
        }
        KernelSpace { kernels: k }
    }

    /// The 12 kernels of the VBKS paper's Table 1 (k1 … k12; k11 = PER×LIN×RQ and
    /// k12 = (PER+RQ)×LIN are the synthetic data's true kernels).
    pub fn k12() -> KernelSpace {
        const TABLE: [&str; 12] = [
            "lin + rq",
            "lin * rq + lin",
            "lin * rq + per",
            "per + rq + se",
            "per + lin + rq",
            "per + per + se",
            "per * se + se",
            "per * rq + se",
            "per * lin + se",
            "per * lin * se",
            "per * lin * rq",
            "(per + rq) * lin",
        ];
        let kernels = TABLE
            .iter()
            .map(|e| Structure::parse(e).expect("the table's expressions parse"))
            .collect();
        KernelSpace::new(kernels).expect("the table has 12 distinct kernels")
    }

    /// A named space (`k144`, `k12`) or a list of kernel expressions separated by `;`.
    ///
    /// # Errors
    /// [`SelectionError::Kernel`] naming the entry that does not parse (its position in the
    /// list and the parser's message); [`SelectionError::Invalid`] for an empty list, an empty
    /// entry or a repeated structure.
    pub fn parse(spec: &str) -> Result<KernelSpace, SelectionError> {
        match spec.trim() {
            "k144" | "K144" => return Ok(Self::k144()),
            "k12" | "K12" => return Ok(Self::k12()),
            _ => {}
        }
        let mut kernels = Vec::new();
        for (i, entry) in spec.split(';').enumerate() {
            if entry.trim().is_empty() {
                return Err(SelectionError::Invalid(format!(
                    "kernel list entry {} is empty: expected `k144`, `k12` or kernel expressions \
                     separated by `;`, such as \"se; per * lin\"",
                    i + 1
                )));
            }
            kernels.push(Structure::parse(entry).map_err(|e| match e {
                SelectionError::Kernel { expr, source } => SelectionError::Kernel {
                    expr: format!("entry {} (`{expr}`)", i + 1),
                    source,
                },
                other => other,
            })?);
        }
        KernelSpace::new(kernels)
    }

    /// The kernels, in order.
    pub fn kernels(&self) -> &[Structure] {
        &self.kernels
    }

    /// Number of kernels.
    pub fn len(&self) -> usize {
        self.kernels.len()
    }

    /// Whether the space is empty (never, for a constructed space).
    pub fn is_empty(&self) -> bool {
        self.kernels.is_empty()
    }

    /// The position of a structure in the space, if it is in it.
    pub fn position(&self, s: &Structure) -> Option<usize> {
        let key = s.canonical().key();
        self.kernels.iter().position(|k| k.key() == key)
    }
}
