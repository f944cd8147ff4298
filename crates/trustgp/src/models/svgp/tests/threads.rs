//! `one_thread`: products run on the calling thread inside it, and the previous setting comes
//! back after it, also when nested or when the closure panics.

use faer::Par;

use super::super::state::{one_thread, par_for};

/// Far above the parallel threshold.
const BIG: usize = 1 << 30;

#[test]
fn one_thread_forces_sequential_products_and_restores_the_setting() {
    let outside = par_for(BIG);
    // Under rayon with more than one thread a big product is split; with one it is not.
    assert_eq!(
        matches!(outside, Par::Seq),
        rayon::current_num_threads() == 1
    );
    one_thread(|| {
        assert!(matches!(par_for(BIG), Par::Seq));
        one_thread(|| assert!(matches!(par_for(BIG), Par::Seq)));
        // The inner call restored "on", not "off".
        assert!(matches!(par_for(BIG), Par::Seq));
    });
    assert_eq!(
        matches!(par_for(BIG), Par::Seq),
        matches!(outside, Par::Seq)
    );
    let caught = std::panic::catch_unwind(|| one_thread(|| panic!("inside")));
    assert!(caught.is_err());
    assert_eq!(
        matches!(par_for(BIG), Par::Seq),
        matches!(outside, Par::Seq)
    );
    // Small products never split.
    assert!(matches!(par_for(10), Par::Seq));
}
