//! FP8's accumulation lesson: `results/fp8-promotion/<gpu>.json`, written by the `table` trial of
//! `steps/tests/promotion.rs` (`SGEMM_FP8_TABLE=FILE`): step 14's relative errors with its
//! promotion into FP32 every 128 of K and without it, per kind of data and K. The book shows it as
//! a table (`generated/<gpu>/fp8-promotion.md`), and the chapters' prose names its figures
//! (`promotion_DATA_K_FIELD`, `values.rs`).

use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

/// One GPU's table.
#[derive(Deserialize)]
pub struct Promotion {
    pub gpu: String,
    pub step: String,
    pub rows: Vec<Row>,
}

/// One kind of data at one K: relative Frobenius errors against float64 of the FP8 values, and
/// how many sigmas of the FP8 bound they are (over 1 fails).
#[derive(Deserialize)]
pub struct Row {
    pub data: String,
    pub k: u64,
    pub promoted: f64,
    pub promoted_sigmas: f64,
    pub plain: f64,
    pub plain_sigmas: f64,
    /// The promoted kernel against the exact product of the FP32 inputs, before quantization.
    pub vs_fp32_inputs: f64,
}

/// The tables, by GPU slug.
pub type Promotions = BTreeMap<String, Promotion>;

/// The fields of a row a value may name, and what each is.
pub const FIELDS: &[(&str, &str)] = &[
    ("promoted", "the step's error against float64 of the FP8 values"),
    ("plain", "the error of the experiment without the promotion"),
    ("promoted-sigmas", "the step's error in sigmas of the FP8 bound"),
    ("plain-sigmas", "the experiment's, in sigmas of the bound"),
    ("fp32", "the step's error against the exact product of the FP32 inputs"),
    ("x", "the experiment's error over the step's"),
];

/// Every `results/fp8-promotion/<gpu>.json` (none: an empty map); an error names the file.
pub fn load_all(root: &Path) -> Result<Promotions, String> {
    let dir = root.join("results/fp8-promotion");
    let Ok(files) = crate::results::json_files(&dir) else { return Ok(Promotions::new()) };
    files
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
            let table = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", p.display()))?;
            Ok((p.file_stem().unwrap_or_default().to_string_lossy().into_owned(), table))
        })
        .collect()
}

/// `fp8-promotion.md`: both kernels' errors over K, signed data first.
pub fn table(p: &Promotion) -> String {
    let mut s = format!(
        "`{}` on one {} at 255 x 257 x K (alpha 1, beta 0): relative Frobenius error against float64 of \
         the FP8 values, with the promotion into FP32 every 128 of K and without it (in brackets: sigmas of \
         the FP8 bound; over 1 fails), and with the promotion against the exact product of the FP32 inputs. \
         From `results/fp8-promotion/`, written by `cargo test -p steps --test promotion -- --ignored table` \
         with `SGEMM_FP8_TABLE=FILE`.\n\n\
         | data | K | promoted | not promoted | not promoted / promoted | promoted vs the FP32 inputs |\n\
         |---|---:|---:|---:|---:|---:|\n",
        p.step, p.gpu
    );
    for r in &p.rows {
        let _ = writeln!(
            s,
            "| {} | {} | {:.1e} ({:.2}) | {:.1e} ({:.2}) | {} | {:.1e} |",
            r.data,
            r.k,
            r.promoted,
            r.promoted_sigmas,
            r.plain,
            r.plain_sigmas,
            times(r.plain / r.promoted),
            r.vs_fp32_inputs
        );
    }
    s
}

/// The value `promotion_DATA_K_FIELD` names: FIELD (one of [`FIELDS`]) of the row of DATA
/// (`signed`, `non-negative`) at K.
pub fn value(p: &Promotion, data: &str, k: &str, field: &str) -> Result<String, String> {
    let row = p.rows.iter().find(|r| r.data == data && r.k.to_string() == k);
    let row = row.ok_or_else(|| format!("the promotion table of {} has no {data} data at K = {k}", p.gpu))?;
    Ok(match field {
        "promoted" => format!("{:.1e}", row.promoted),
        "plain" => format!("{:.1e}", row.plain),
        "promoted-sigmas" => format!("{:.2}", row.promoted_sigmas),
        "plain-sigmas" => format!("{:.2}", row.plain_sigmas),
        "fp32" => format!("{:.1e}", row.vs_fp32_inputs),
        "x" => times(row.plain / row.promoted),
        _ => {
            let names: Vec<&str> = FIELDS.iter().map(|f| f.0).collect();
            return Err(format!("no field `{field}` of the promotion table (one of {})", names.join(", ")));
        }
    })
}

/// A ratio as the book prints ratios (three significant figures at most, `x` after it), here
/// rather than taken from `values`, which reads this module.
fn times(v: f64) -> String {
    format!(
        "{:.*}x",
        if v >= 100.0 {
            0
        } else if v >= 10.0 {
            1
        } else {
            2
        },
        v
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_table_and_its_values_come_from_the_file() {
        let all = super::load_all(&crate::bundle::root()).unwrap();
        let p = &all[crate::book::BOOK_GPU];
        let row = p.rows.iter().find(|r| r.data == "non-negative" && r.k == 16384).unwrap();
        assert_eq!(super::value(p, "non-negative", "16384", "plain").unwrap(), format!("{:.1e}", row.plain));
        assert!(super::table(p).contains(&format!("| non-negative | 16384 | {:.1e}", row.promoted)));
        for (data, k, field, why) in
            [("signed", "100", "plain", "no signed data at K = 100"), ("signed", "256", "speed", "no field `speed`")]
        {
            let e = super::value(p, data, k, field).unwrap_err();
            assert!(e.contains(why), "{e}");
        }
    }
}
