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

/// Defines `$name`, generic over one type parameter, that calls `$portable` compiled with
/// the bit-manipulation instructions (LZCNT, BMI1, BMI2) when the CPU has them, else
/// compiled for baseline x86-64.
///
/// Baseline x86-64 counts leading zeros with `bsr` and a correction, and shifts 128-bit
/// integers by a variable amount through flags; the exact sums of the window kernels do
/// both for every row. The instructions change no result: they are integer operations
/// with the same meaning. `$portable` must be `#[inline(always)]`, and everything it
/// calls per row too, so that the build compiles its own copy of the loop.
macro_rules! with_bit_instructions {
    (
        $(#[$meta:meta])*
        fn $name:ident<$param:ident: $bound:path>($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)?
            = $portable:path;
    ) => {
        $(#[$meta])*
        fn $name<$param: $bound>($($arg: $ty),*) $(-> $ret)? {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "lzcnt,bmi1,bmi2")]
                fn with_bits<$param: $bound>($($arg: $ty),*) $(-> $ret)? {
                    $portable($($arg),*)
                }
                if $crate::kernels::simd::bit_instructions() {
                    // SAFETY: the CPU reported every feature `with_bits` enables.
                    return unsafe { with_bits($($arg),*) };
                }
            }
            $portable($($arg),*)
        }
    };
}

/// Whether the CPU has LZCNT, BMI1 and BMI2 (see [`with_bit_instructions!`]); in tests,
/// also that [`portable_only`] is not in force.
#[inline]
pub(crate) fn bit_instructions() -> bool {
    #[cfg(test)]
    if PORTABLE_ONLY.load(std::sync::atomic::Ordering::Relaxed) {
        return false;
    }
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("lzcnt")
            && std::arch::is_x86_feature_detected!("bmi1")
            && std::arch::is_x86_feature_detected!("bmi2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

#[cfg(test)]
static PORTABLE_ONLY: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Runs `f` with every [`with_bit_instructions!`] function in its baseline build. Tests
/// that run meanwhile may get either build, which is harmless: both give the same bits.
#[cfg(test)]
pub(crate) fn portable_only<R>(f: impl FnOnce() -> R) -> R {
    use std::sync::atomic::Ordering;
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    PORTABLE_ONLY.store(true, Ordering::Relaxed);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    PORTABLE_ONLY.store(false, Ordering::Relaxed);
    result.unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}
