//! Step 15's blocks in time, with the timeline probe (`notes/experiments/step15-skinny/timeline.patch`):
//! the SM of every block of every launch and when it entered, was ready, began and ended.
//!
//!     cargo run --release -p step15-skinny --example timeline15 -- 16x11008x4096 fp16-c16 \
//!         --kernel notes/experiments/step15-skinny/timeline.patch --define PDL=1 --back-to-back --out t.csv

fn main() -> std::process::ExitCode {
    common::tools::timeline::main(&step15_skinny::VARIANTS)
}
