//! Which instruction-set level CPU kernels run at: detected once, capped by the user.
//!
//! orrery is built for the target's baseline (on x86-64: SSE2, no AVX), so a binary
//! runs on any machine of its architecture. Hot CPU kernels are compiled a second and
//! third time for the x86-64 microarchitecture levels v3 (AVX2, BMI1/2, LZCNT, FMA)
//! and v4 (v3 plus AVX-512 F/BW/CD/DQ/VL) and pick the best level the running CPU has,
//! as numpy, OpenBLAS and oneDNN do. Every level computes bit-identical results; the
//! levels differ only in speed (each kernel's equivalence tests run every level the test
//! machine has).
//!
//! Set `ORRERY_MAX_CPU_ISA` ([`MAX_CPU_ISA_ENV`]) to `baseline`, `x86-64-v3` or
//! `x86-64-v4` to cap the level (to compare levels, or to rule one out); it is read once
//! per process. See ADR 0009.

use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

use crate::error::{Error, Result};

/// The environment variable that caps the instruction-set level of CPU kernels.
pub const MAX_CPU_ISA_ENV: &str = "ORRERY_MAX_CPU_ISA";

/// An instruction-set level CPU kernels can be compiled for, from least to most capable.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CpuIsa {
    /// The compilation target's baseline (x86-64: SSE2; other architectures: their own).
    #[default]
    Baseline,
    /// x86-64-v3: AVX, AVX2, BMI1, BMI2, LZCNT, POPCNT, FMA.
    X86_64V3,
    /// x86-64-v4: x86-64-v3 plus AVX-512 F, BW, CD, DQ and VL.
    X86_64V4,
}

impl CpuIsa {
    /// Every level, from least to most capable.
    pub const ALL: [CpuIsa; 3] = [CpuIsa::Baseline, CpuIsa::X86_64V3, CpuIsa::X86_64V4];

    /// The level's name, as [`MAX_CPU_ISA_ENV`] spells it.
    pub fn name(self) -> &'static str {
        match self {
            CpuIsa::Baseline => "baseline",
            CpuIsa::X86_64V3 => "x86-64-v3",
            CpuIsa::X86_64V4 => "x86-64-v4",
        }
    }

    /// Whether the running CPU (and its operating system) supports this level.
    pub fn is_supported(self) -> bool {
        match self {
            CpuIsa::Baseline => true,
            #[cfg(target_arch = "x86_64")]
            CpuIsa::X86_64V3 => {
                std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("bmi1")
                    && std::arch::is_x86_feature_detected!("bmi2")
                    && std::arch::is_x86_feature_detected!("lzcnt")
                    && std::arch::is_x86_feature_detected!("popcnt")
                    && std::arch::is_x86_feature_detected!("fma")
            }
            #[cfg(target_arch = "x86_64")]
            CpuIsa::X86_64V4 => {
                CpuIsa::X86_64V3.is_supported()
                    && std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512bw")
                    && std::arch::is_x86_feature_detected!("avx512cd")
                    && std::arch::is_x86_feature_detected!("avx512dq")
                    && std::arch::is_x86_feature_detected!("avx512vl")
            }
            #[cfg(not(target_arch = "x86_64"))]
            CpuIsa::X86_64V3 | CpuIsa::X86_64V4 => false,
        }
    }

    /// The most capable level the running CPU supports (detected once).
    pub fn detected() -> CpuIsa {
        static DETECTED: OnceLock<CpuIsa> = OnceLock::new();
        *DETECTED.get_or_init(|| CpuIsa::ALL.into_iter().rev().find(|isa| isa.is_supported()).unwrap_or_default())
    }

    /// The cap set by [`MAX_CPU_ISA_ENV`], if any (read once per process).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming the variable when it is set to anything but a
    /// level's name (or is not Unicode).
    pub fn cap_from_env() -> Result<Option<CpuIsa>> {
        static CAP: OnceLock<std::result::Result<Option<CpuIsa>, String>> = OnceLock::new();
        let cap = CAP.get_or_init(|| match std::env::var(MAX_CPU_ISA_ENV) {
            Ok(value) => value.parse().map(Some).map_err(|e: Error| e.to_string()),
            Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => Err("is not valid Unicode".to_owned()),
        });
        cap.clone().map_err(|reason| Error::InvalidArgument { what: MAX_CPU_ISA_ENV, reason })
    }

    /// The level CPU kernels run at: [`CpuIsa::detected`], capped by
    /// [`MAX_CPU_ISA_ENV`] when set.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when the variable is set to something unknown.
    pub fn active() -> Result<CpuIsa> {
        Ok(CpuIsa::capped(CpuIsa::detected(), CpuIsa::cap_from_env()?))
    }

    /// `detected`, lowered to `cap` when that is less capable.
    pub fn capped(detected: CpuIsa, cap: Option<CpuIsa>) -> CpuIsa {
        cap.map_or(detected, |cap| detected.min(cap))
    }
}

impl fmt::Display for CpuIsa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for CpuIsa {
    type Err = Error;

    /// Parses a level's [`CpuIsa::name`] (ASCII case ignored).
    fn from_str(s: &str) -> Result<Self> {
        CpuIsa::ALL.into_iter().find(|isa| isa.name().eq_ignore_ascii_case(s.trim())).ok_or_else(|| {
            let names: Vec<_> = CpuIsa::ALL.iter().map(|isa| isa.name()).collect();
            Error::InvalidArgument {
                what: MAX_CPU_ISA_ENV,
                reason: format!("unknown instruction-set level {s:?}; expected one of {}", names.join(", ")),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_and_unknown_names_are_errors() {
        for isa in CpuIsa::ALL {
            assert_eq!(isa.name().parse::<CpuIsa>().unwrap(), isa);
            assert_eq!(isa.name().to_uppercase().parse::<CpuIsa>().unwrap(), isa);
        }
        let err = "avx2".parse::<CpuIsa>().unwrap_err();
        assert!(
            matches!(&err, Error::InvalidArgument { what, reason } if *what == MAX_CPU_ISA_ENV && reason.contains("x86-64-v3")),
            "{err}"
        );
    }

    #[test]
    fn the_cap_only_lowers_the_level() {
        use CpuIsa::{Baseline, X86_64V3, X86_64V4};
        assert_eq!(CpuIsa::capped(X86_64V4, None), X86_64V4);
        assert_eq!(CpuIsa::capped(X86_64V4, Some(X86_64V3)), X86_64V3);
        assert_eq!(CpuIsa::capped(X86_64V3, Some(X86_64V4)), X86_64V3);
        assert_eq!(CpuIsa::capped(X86_64V3, Some(Baseline)), Baseline);
    }

    #[test]
    fn the_detected_level_is_supported_and_so_are_all_below_it() {
        let detected = CpuIsa::detected();
        for isa in CpuIsa::ALL {
            assert_eq!(isa.is_supported(), isa <= detected, "{isa}");
        }
    }
}
