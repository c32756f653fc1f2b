//! Synchronisation, markers (never timing assertions: only that they work) and the
//! batching of commands: dispatches sharing one compute pass, other commands ending it.

use orrery_backend_wgpu::{WgpuExecutor, WgpuOptions};
use orrery_core::{Executor, ExecutorKind, Reserve, Slice};

use crate::common::{cpu, each, executor};

fn some_work(e: &WgpuExecutor) {
    let mut keys = e.upload(&(0..100_000u64).rev().collect::<Vec<_>>()).unwrap();
    let mut values = e.alloc::<u32>(100_000).unwrap();
    e.iota(&mut values, 0).unwrap();
    e.sort_pairs(&mut keys, &mut values, 0..17).unwrap();
}

#[test]
fn markers_measure_device_time_or_fall_back_to_the_host_clock() {
    each(|label, e| {
        let start = e.mark().unwrap();
        some_work(e);
        let end = e.mark().unwrap();
        assert_eq!(start.is_device_timestamp(), e.capabilities().timestamps, "{label}");
        let first = e.elapsed(&start, &end).unwrap();
        // Asking twice gives the same answer (the ticks are read once).
        assert_eq!(e.elapsed(&start, &end).unwrap(), first, "{label}");
        e.synchronize().unwrap();
    });
    if executor().is_some() {
        let e =
            WgpuExecutor::with_options(&WgpuOptions { timestamps: false, ..WgpuOptions::from_env().unwrap() }).unwrap();
        let start = e.mark().unwrap();
        some_work(&e);
        let end = e.mark().unwrap();
        assert!(!start.is_device_timestamp());
        assert!(e.elapsed(&start, &end).unwrap() > std::time::Duration::ZERO);
    }
}

#[test]
fn the_executor_names_its_device_and_kind() {
    each(|label, e| {
        assert_eq!(e.kind(), ExecutorKind::Wgpu);
        assert!(e.name().starts_with("wgpu:"), "{label}");
        assert!(e.name().contains(&e.capabilities().adapter), "{label}");
    });
}

#[test]
fn many_primitives_without_a_read_are_batched_and_flushed() {
    each(|label, e| {
        // More dispatches than one batch holds (1024 commands, or a full parameter arena:
        // 512 slots on lavapipe).
        let mut a = e.alloc::<u32>(10).unwrap();
        e.fill(&mut a, 0).unwrap();
        let one = e.upload(&[1u32; 10]).unwrap();
        let mut b = e.alloc::<u32>(10).unwrap();
        for i in 0..700u32 {
            e.iota(&mut b, i).unwrap();
            e.gather(&one, &b, &mut a).unwrap_or(());
        }
        assert_eq!(e.download(&b).unwrap(), (699..709).collect::<Vec<u32>>(), "{label}");
    });
}

#[test]
fn an_executor_is_usable_from_several_threads() {
    let Some(e) = executor() else { return };
    std::thread::scope(|s| {
        for t in 0..4u32 {
            s.spawn(move || {
                for _ in 0..20 {
                    let mut buf = e.alloc::<u32>(3000).unwrap();
                    e.iota(&mut buf, t * 1000).unwrap();
                    let got = e.download(&buf).unwrap();
                    assert!(got.iter().enumerate().all(|(i, &v)| v == t * 1000 + i as u32));
                }
            });
        }
    });
}

/// A chain of dependent primitives with no read in between, interleaving dispatches (one
/// shared compute pass) with commands that end the pass (clears, copies, timestamps):
/// `n` values through iota, a scan, a clear, a copy, a gather and a compaction.
fn a_dependent_chain<E: Executor>(e: &E, n: usize, timestamps: bool) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
    let mut a = e.alloc::<u32>(n).unwrap();
    e.iota(&mut a, 3).unwrap();
    let mut offsets = e.alloc::<u32>(n + 1).unwrap();
    e.exclusive_scan(&a, &mut offsets).unwrap();
    let start = timestamps.then(|| e.mark().unwrap());
    let mut b = e.alloc::<u32>(n).unwrap();
    e.fill(&mut b, 0).unwrap(); // a clear: ends the pass
    e.copy(offsets.slice(1..n + 1).unwrap(), b.slice_mut(0..n).unwrap()).unwrap();
    let mut idx = e.alloc::<u32>(n).unwrap();
    e.iota(&mut idx, 0).unwrap();
    let mut flags = e.alloc::<u32>(n).unwrap();
    e.fill(&mut flags, 0).unwrap();
    e.fill(flags.slice_mut(n / 3..n).unwrap(), 1).unwrap();
    let mut gathered = e.alloc::<u32>(n).unwrap();
    e.gather(&b, &idx, &mut gathered).unwrap();
    let mut kept = e.alloc::<u32>(n).unwrap();
    let mut count = e.alloc::<u32>(1).unwrap();
    e.compact(&gathered, &flags, &mut kept, &mut count).unwrap();
    if let Some(start) = start {
        let end = e.mark().unwrap();
        e.elapsed(&start, &end).unwrap();
    }
    (e.download(&offsets).unwrap(), e.download(&kept).unwrap(), e.download(&count).unwrap())
}

#[test]
fn dependent_dispatches_sharing_a_pass_see_each_others_writes() {
    each(|label, e| {
        for n in [1usize, 1000, 70_000] {
            assert_eq!(a_dependent_chain(e, n, true), a_dependent_chain(&cpu(), n, false), "{label} n={n}");
        }
    });
}

#[test]
fn a_recording_mixing_dispatches_clears_and_copies_replays_like_the_cpu() {
    each(|label, e| {
        let n = 3000usize;
        e.reserve(&Reserve { scan: n, ..Reserve::default() }).unwrap();
        let src = e.upload(&(0..n as u32).map(|i| i % 7).collect::<Vec<_>>()).unwrap();
        let mut scanned = e.alloc::<u32>(n + 1).unwrap();
        let mut copied = e.alloc::<u32>(n + 1).unwrap();
        let mut again = e.alloc::<u32>(n + 1).unwrap();
        let recording = e
            .record(&mut || {
                e.fill(&mut copied, 0)?; // a clear between dispatches
                e.exclusive_scan(&src, &mut scanned)?;
                e.copy(&scanned, &mut copied)?;
                e.fill(copied.slice_mut(0..1)?, 0)?;
                e.inclusive_scan(copied.slice(1..n + 1)?, again.slice_mut(0..n)?)
            })
            .unwrap();
        let c = cpu();
        let cs = c.upload(&(0..n as u32).map(|i| i % 7).collect::<Vec<_>>()).unwrap();
        let mut cscanned = c.alloc::<u32>(n + 1).unwrap();
        c.exclusive_scan(&cs, &mut cscanned).unwrap();
        let mut cagain = c.alloc::<u32>(n + 1).unwrap();
        c.inclusive_scan(cscanned.slice(1..n + 1).unwrap(), cagain.slice_mut(0..n).unwrap()).unwrap();
        for round in 0..2 {
            e.fill(&mut again, 9).unwrap();
            e.replay(&recording).unwrap();
            assert_eq!(e.download(&copied).unwrap(), c.download(&cscanned).unwrap(), "{label} round {round}");
            let mut want = c.download(&cagain).unwrap();
            want[n] = 9;
            assert_eq!(e.download(&again).unwrap(), want, "{label} round {round}");
        }
    });
}
