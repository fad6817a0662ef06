//! The host's cores for the harness's CPU work on large problems: the inputs, the float64
//! reference and the comparisons, spread over a GPU node's cores (16 on the H200 machines).

/// The cores this process may use, asked once (the standard library reads the cgroup's quota
/// from files on every call).
pub fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// `f(0)`, ..., `f(count - 1)` in that order, made by up to `threads` threads that each take the
/// next index as they finish one (on the calling thread alone when `threads` is 1).
pub fn map_on_cores<T: Send>(count: usize, threads: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let threads = threads.clamp(1, count.max(1));
    if threads == 1 {
        return (0..count).map(f).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut done: Vec<(usize, T)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if i >= count {
                            return mine;
                        }
                        mine.push((i, f(i)));
                    }
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().expect("a harness thread panicked")).collect()
    });
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, x)| x).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_in_order_whatever_the_threads() {
        for threads in [1, 2, 3, 16] {
            assert_eq!(map_on_cores(10, threads, |i| i * i), (0..10).map(|i| i * i).collect::<Vec<_>>());
            assert!(map_on_cores(0, threads, |i| i).is_empty());
        }
    }
}
