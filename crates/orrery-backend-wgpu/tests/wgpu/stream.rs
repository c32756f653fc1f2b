//! Synchronisation and markers (never timing assertions: only that they work).

use orrery_backend_wgpu::{WgpuExecutor, WgpuOptions};
use orrery_core::{Executor, ExecutorKind};

use crate::common::{each, executor};

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
