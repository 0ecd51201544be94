//! Hot loops compiled for several x86-64 instruction sets, the widest one the CPU has
//! chosen at run time.
//!
//! The default target is baseline x86-64 (SSE2), so a loop the compiler could widen to 4
//! or 8 lanes stays at 2 unless it is also compiled with AVX2 or AVX-512 enabled. The
//! loops dispatched this way use only exactly rounded operations or integer arithmetic
//! (never a fused multiply-add), so every build gives the same bits; each user has a test
//! that compares them all ([`multiversion!`]'s `each`).

/// Defines a module `$name` whose `run` calls `$portable` compiled for the widest of
/// AVX-512 (with the features listed after `avx512`), AVX2 and baseline x86-64 that the
/// CPU reports, and whose `each` (tests only) calls every build the CPU can run.
/// `$portable` must be `#[inline(always)]`, so that each build compiles its own copy.
/// The features enabled and the features checked come from the same list, so the two
/// cannot disagree.
macro_rules! multiversion {
    (
        $(#[$meta:meta])*
        mod $name:ident {
            fn($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)?;
            portable = $portable:path;
            avx512 = [$($feature:tt),+];
        }
    ) => {
        $(#[$meta])*
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            /// `$portable` in the widest build this CPU runs.
            #[inline]
            pub(super) fn run($($arg: $ty),*) $(-> $ret)? {
                #[cfg(target_arch = "x86_64")]
                {
                    if true $(&& std::arch::is_x86_feature_detected!($feature))+ {
                        // SAFETY: every feature `avx512` enables was detected just above.
                        return unsafe { avx512($($arg),*) };
                    }
                    if std::arch::is_x86_feature_detected!("avx2") {
                        // SAFETY: AVX2 was detected just above.
                        return unsafe { avx2($($arg),*) };
                    }
                }
                $portable($($arg),*)
            }

            /// Calls `f` with the name of every build this CPU runs and a function that
            /// runs it: baseline first, then AVX2 and AVX-512 where reported.
            #[cfg(test)]
            pub(super) fn each(mut f: impl FnMut(&str, &dyn Fn($($ty),*) $(-> $ret)?)) {
                f("baseline", &|$($arg: $ty),*| $portable($($arg),*));
                #[cfg(target_arch = "x86_64")]
                {
                    if std::arch::is_x86_feature_detected!("avx2") {
                        // SAFETY: AVX2 was detected just above.
                        f("avx2", &|$($arg: $ty),*| unsafe { avx2($($arg),*) });
                    }
                    if true $(&& std::arch::is_x86_feature_detected!($feature))+ {
                        // SAFETY: every feature `avx512` enables was detected just above.
                        f("avx512", &|$($arg: $ty),*| unsafe { avx512($($arg),*) });
                    }
                }
            }

            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2")]
            unsafe fn avx2($($arg: $ty),*) $(-> $ret)? {
                $portable($($arg),*)
            }

            #[cfg(target_arch = "x86_64")]
            #[target_feature($(enable = $feature),+)]
            unsafe fn avx512($($arg: $ty),*) $(-> $ret)? {
                $portable($($arg),*)
            }
        }
    };
}
