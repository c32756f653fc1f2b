//! Error paths: limits, lengths, ranges.

use orrery_backend_wgpu::{WgpuExecutor, WgpuOptions};
use orrery_core::{Error, Executor, ReduceOp};

use crate::common::{each, executor};

#[test]
fn buffers_beyond_the_device_limits_are_buffer_too_large() {
    each(|label, e| {
        let max = e.capabilities().max_storage_binding.min(e.capabilities().max_buffer_size);
        let elements = (max / 4 + 1) as usize;
        match e.alloc::<u32>(elements) {
            Err(Error::BufferTooLarge { requested_bytes, max_bytes, .. }) => {
                assert_eq!(requested_bytes, elements as u64 * 4);
                assert_eq!(max_bytes, max);
            }
            other => panic!("{label}: {other:?}"),
        }
        let mut small = e.alloc::<u32>(4).unwrap();
        assert!(matches!(e.resize(&mut small, elements), Err(Error::BufferTooLarge { .. })), "{label}");
        // The failed resize left the buffer as it was.
        assert_eq!(orrery_core::DeviceBuffer::len(&small), 4);
    });
}

#[test]
fn length_mismatches_are_rejected_before_any_work() {
    each(|label, e| {
        let a = e.alloc::<u32>(5).unwrap();
        let mut wrong = e.alloc::<u32>(5).unwrap();
        assert!(matches!(e.exclusive_scan(&a, &mut wrong), Err(Error::LengthMismatch { .. })), "{label}");
        assert!(matches!(e.reduce(&a, ReduceOp::Sum, &mut wrong), Err(Error::LengthMismatch { .. })), "{label}");
        let mut one = e.alloc::<u32>(1).unwrap();
        let mut four = e.alloc::<u32>(4).unwrap();
        assert!(matches!(e.compact(&a, &a, &mut four, &mut one), Err(Error::LengthMismatch { .. })), "{label}");
        assert!(matches!(e.copy(&a, &mut four), Err(Error::LengthMismatch { .. })), "{label}");
        assert!(matches!(e.gather(&a, &a, &mut four), Err(Error::LengthMismatch { .. })), "{label}");
        assert!(matches!(e.scatter(&a, &four, &mut wrong), Err(Error::LengthMismatch { .. })), "{label}");
        assert!(matches!(e.write(&mut four, 3, &[1, 2]), Err(Error::LengthMismatch { .. })), "{label}");
        let mut out = [0u32; 2];
        assert!(matches!(e.read(&a, 4, &mut out), Err(Error::LengthMismatch { .. })), "{label}");
    });
}

#[test]
fn an_adapter_that_does_not_exist_is_device_unavailable() {
    let options = WgpuOptions { adapter: Some("no such adapter 7f3a".into()), ..WgpuOptions::default() };
    match WgpuExecutor::with_options(&options) {
        Err(Error::DeviceUnavailable { backend, reason }) => {
            assert_eq!(backend, "wgpu");
            assert!(reason.contains("no such adapter 7f3a") || reason.contains("no adapter"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn f64_disabled_by_the_options_is_unsupported() {
    if executor().is_none() {
        return;
    }
    let e = WgpuExecutor::with_options(&WgpuOptions { f64: false, ..WgpuOptions::from_env().unwrap() }).unwrap();
    assert!(!e.capabilities().f64);
    let input = e.upload(&[1.0f64, 2.0]).unwrap();
    let mut out = e.alloc::<f64>(1).unwrap();
    assert!(matches!(e.reduce(&input, ReduceOp::Sum, &mut out), Err(Error::Unsupported { .. })));
    // Moving f64 data needs no f64 arithmetic.
    let mut copy = e.alloc::<f64>(2).unwrap();
    e.copy(&input, &mut copy).unwrap();
    e.fill(&mut out, 2.5).unwrap();
    assert_eq!(e.download(&copy).unwrap(), [1.0, 2.0]);
    assert_eq!(e.download(&out).unwrap(), [2.5]);
}
