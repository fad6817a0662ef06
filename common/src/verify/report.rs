//! The outcome of a comparison, and the line that reports it.

use std::fmt;

/// The worst element of a comparison.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Worst {
    pub row: usize,
    pub col: usize,
    pub got: f64,
    pub expected: f64,
    pub bound: f64,
}

/// The outcome of comparing a result with a reference.
#[derive(Clone, Debug)]
pub struct Check {
    pub against: &'static str,
    /// ||got - expected||_F / ||expected||_F over the finite expected elements: the usual
    /// relative error, recorded with results. Not the pass/fail criterion (see `scaled_error`).
    pub rel_frobenius: f64,
    /// ||got - expected||_F / ||sigma||_F, each element's difference less its tie slack: what
    /// [`Tolerance::frobenius`](super::bound::Tolerance::frobenius) bounds.
    pub scaled_error: f64,
    pub frobenius_limit: f64,
    /// Finite elements that differ from the reference at all (the precision probes, whose
    /// answer FP32 arithmetic gets exactly, require none).
    pub inexact_elements: usize,
    /// Largest |got - expected| / bound over the compared elements (<= 1 passes).
    pub worst_ratio: f64,
    pub worst: Option<Worst>,
    pub bad_elements: usize,
    /// Elements whose finiteness differs from the reference: NaN or inf where the reference is
    /// finite (an unwritten element of a NaN-poisoned C, say), finite where it is not, or
    /// another kind of non-finite value (NaN for inf, or the wrong sign of inf).
    pub nan_elements: usize,
    /// Expected non-finite elements the kernel matched (inputs with inf or NaN).
    pub nonfinite_matched: usize,
    pub compared: usize,
}

impl Check {
    pub fn passed(&self) -> bool {
        self.bad_elements == 0 && self.nan_elements == 0 && self.scaled_error <= self.frobenius_limit
    }
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verdict = if self.passed() { "ok" } else { "FAILED" };
        write!(
            f,
            "vs {}: {verdict}: Frobenius error {:.2} sigma (limit {:.2}; {:.2e} of the result), \
             {} of {} elements out of bounds, {} NaN/inf mismatches",
            self.against,
            self.scaled_error,
            self.frobenius_limit,
            self.rel_frobenius,
            self.bad_elements,
            self.compared,
            self.nan_elements
        )?;
        if self.nonfinite_matched > 0 {
            write!(f, ", {} non-finite elements as expected", self.nonfinite_matched)?;
        }
        if let Some(w) = self.worst {
            write!(
                f,
                "; worst C[{}][{}] = {} expected {} (|diff| {:.2e}, bound {:.2e})",
                w.row,
                w.col,
                w.got,
                w.expected,
                (w.got - w.expected).abs(),
                w.bound
            )?;
        }
        Ok(())
    }
}
