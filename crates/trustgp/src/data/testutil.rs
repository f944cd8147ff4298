//! Test helpers: uniquely named temporary files and random CSV-like garbage.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};

/// A file under `std::env::temp_dir()` with a unique name, removed when dropped.
pub(crate) struct TempFile {
    /// Where the file is.
    pub(crate) path: PathBuf,
}

impl TempFile {
    /// Writes `contents` to a fresh file whose name starts with `stem` and ends with `.csv`.
    pub(crate) fn new(stem: &str, contents: &[u8]) -> TempFile {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let k = COUNTER.fetch_add(1, Ordering::Relaxed);
        let name = format!("trustgp_{stem}_{}_{k}.csv", std::process::id());
        let path = std::env::temp_dir().join(name);
        std::fs::write(&path, contents).expect("write temporary test file");
        TempFile { path }
    }

    /// The file name (without directory), for checking error messages.
    pub(crate) fn name(&self) -> String {
        self.path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        // Best effort: a leftover file in the temp directory is harmless.
        let _ = std::fs::remove_file(&self.path);
    }
}

/// `count` deterministic random texts built from CSV-significant pieces (separators, quotes,
/// line endings, numbers, non-finite words, column names, control characters), for checking
/// that no input makes a reader panic.
pub(crate) fn garbage_texts(count: usize) -> Vec<String> {
    const PIECES: &[&str] = &[
        ",", ",", "\"", "\n", "\r\n", "\r", " ", "\t", "0", "1", "-2.5", "1e999", "nan", "inf",
        "a", "b", "y", "split", "set", "row", "train", "test", "\u{0}", "\u{feff}", "\u{fffd}",
    ];
    let mut rng = StdRng::seed_from_u64(2024);
    (0..count)
        .map(|_| {
            let len = rng.random_range(0..40);
            (0..len)
                .map(|_| *PIECES.choose(&mut rng).unwrap_or(&","))
                .collect()
        })
        .collect()
}
