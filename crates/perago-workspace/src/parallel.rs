//! Running one fallible job per item on a few threads.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Calls `job` on every item, at most `threads` at a time; the first error stops the threads
/// from taking more items and is returned.
pub(crate) fn try_for_each<T: Sync, E: Send>(
    items: &[T],
    threads: usize,
    job: impl Fn(usize, &T) -> Result<(), E> + Sync,
) -> Result<(), E> {
    try_map(items, threads, || (), |(), i, item| job(i, item)).map(drop)
}

/// Calls `job` on every item, at most `threads` at a time, each thread with its own `state`
/// (made by `state()` when the thread starts: a buffer, say); returns the results in `items`'
/// order. The first error stops the threads from taking more items and is returned.
pub(crate) fn try_map<T: Sync, S, R: Send, E: Send>(
    items: &[T],
    threads: usize,
    state: impl Fn() -> S + Sync,
    job: impl Fn(&mut S, usize, &T) -> Result<R, E> + Sync,
) -> Result<Vec<R>, E> {
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let first_error: Mutex<Option<E>> = Mutex::new(None);
    let done: Vec<Vec<(usize, R)>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.max(1).min(items.len()))
            .map(|_| {
                scope.spawn(|| {
                    let mut state = state();
                    let mut done = Vec::new();
                    while !failed.load(Ordering::Relaxed) {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(i) else { break };
                        match job(&mut state, i, item) {
                            Ok(result) => done.push((i, result)),
                            Err(e) => {
                                failed.store(true, Ordering::Relaxed);
                                first_error
                                    .lock()
                                    .unwrap_or_else(|p| p.into_inner())
                                    .get_or_insert(e);
                                break;
                            }
                        }
                    }
                    done
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|worker| {
                worker
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });
    if let Some(e) = first_error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    // No error: every item was taken by one thread and its result kept.
    let mut results: Vec<Option<R>> = (0..items.len()).map(|_| None).collect();
    for (i, result) in done.into_iter().flatten() {
        results[i] = Some(result);
    }
    Ok(results.into_iter().flatten().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_keep_the_items_order_and_each_thread_has_its_own_state() {
        let items: Vec<usize> = (0..100).collect();
        let squares = try_map(&items, 4, Vec::new, |seen: &mut Vec<usize>, i, item| {
            assert_eq!(i, *item);
            seen.push(i);
            assert!(
                seen.windows(2).all(|w| w[0] < w[1]),
                "one thread's items in order"
            );
            Ok::<_, ()>(item * item)
        })
        .unwrap();
        assert_eq!(squares, items.iter().map(|i| i * i).collect::<Vec<_>>());
        assert_eq!(
            try_map(&[] as &[u8], 4, || (), |(), _, _| Ok::<u8, ()>(0)).unwrap(),
            Vec::<u8>::new()
        );
    }

    #[test]
    fn the_first_error_stops_the_work() {
        let items: Vec<usize> = (0..1000).collect();
        let ran = AtomicUsize::new(0);
        let result = try_for_each(&items, 3, |i, _| {
            ran.fetch_add(1, Ordering::Relaxed);
            if i == 0 {
                return Err(i);
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
            Ok(())
        });
        assert_eq!(result, Err(0));
        assert!(ran.into_inner() < 100);
    }
}
