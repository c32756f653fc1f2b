//! `wrap_external`: device memory owned elsewhere, used in place and never freed by us.

use orrery_core::{Error, Executor};

use crate::common;

#[test]
fn wrapped_memory_is_read_and_written_in_place_and_outlives_the_wrapper() {
    let exec = cuda_or_skip!();
    let owner = exec.upload(&(0..1000u32).collect::<Vec<_>>()).unwrap();
    // SAFETY: `owner` stays alive past every use of the wrapper, and only `exec` writes it.
    let mut wrapped = unsafe { exec.wrap_external::<u32>(owner.device_ptr() + 40, 990) }.unwrap();
    assert_eq!(exec.download(&wrapped).unwrap(), (10..1000u32).collect::<Vec<_>>());
    exec.fill(&mut wrapped, 7u32).unwrap();
    drop(wrapped); // frees nothing
    let all = exec.download(&owner).unwrap();
    assert_eq!(&all[..10], &(0..10u32).collect::<Vec<_>>()[..]);
    assert!(all[10..].iter().all(|&v| v == 7));
    // SAFETY: as above; an empty wrapper touches no memory.
    let empty = unsafe { exec.wrap_external::<u32>(0, 0) }.unwrap();
    assert!(exec.download(&empty).unwrap().is_empty());
}

#[test]
fn bad_external_pointers_are_typed_errors() {
    let exec = cuda_or_skip!();
    let owner = exec.upload(&[0u32; 256]).unwrap();
    let host = [0u32; 16];
    let cases: [(u64, usize, &str); 4] = [
        (0, 4, "null"),
        (owner.device_ptr() + 2, 4, "not aligned"),
        (host.as_ptr() as u64, 16, "host memory"),
        (owner.device_ptr(), 1 << 30, "past the end"),
    ];
    for (ptr, len, what) in cases {
        // SAFETY: every case is rejected before any memory is touched (asserted below).
        let r = unsafe { exec.wrap_external::<u32>(ptr, len) };
        assert!(matches!(r, Err(Error::InvalidArgument { .. })), "{what}: {r:?}");
    }
    assert!(exec.stream_handle() != 0, "the executor runs on its own stream");
}
