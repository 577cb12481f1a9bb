//! Asking the processor to fetch memory into its cache before it is read.
//!
//! A stage that visits records in an order of its own rather than the order they lie in memory
//! (the solve builds each island's rows from its contact pairs, which lie wherever the pair list
//! put them) waits on every record it reaches: the processor's own prefetching follows only
//! addresses that step evenly. Naming the next record while the current one is worked on hides
//! most of that wait. A prefetch is a hint: it reads nothing the program sees, cannot fault, and
//! changes no result (where the processor has no such instruction it does nothing).

/// Bytes of one cache line, the unit a prefetch fetches.
const LINE: usize = 64;

/// Asks the processor to bring every cache line of `value` into its caches ahead of a read;
/// changes nothing the program computes.
#[inline]
pub fn prefetch<T: ?Sized>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let start = (value as *const T).cast::<i8>();
        for offset in (0..size_of_val(value)).step_by(LINE) {
            #[allow(unsafe_code)]
            // SAFETY: a prefetch reads nothing the program sees and never faults, whatever the
            // address; these lie within `value`, a live reference, and SSE (whose instruction
            // this is) is part of every x86-64 processor.
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(start.wrapping_add(offset));
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
