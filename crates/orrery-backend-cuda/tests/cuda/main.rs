//! The CUDA executor's tests, one binary (every extra test binary links the whole
//! dependency tree again): NVRTC compile checks (`compile`), the primitives against the
//! CPU (`conformance`, `new_primitives`) and timing runs (`bench`, ignored by default).
//! Device tests skip on stderr without a device and fail with `ORRERY_REQUIRE_CUDA=1`.

#[macro_use]
mod common;

mod bench;
mod compile;
mod conformance;
mod external;
mod new_primitives;
