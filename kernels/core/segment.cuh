// kernels/core/segment.cuh — the segment of a position, by binary search in the starts of
// contiguous segments (a snippet: modules concatenate it into their text after a prelude
// that defines `u32`, e.g. kernels/core/common.cuh or kernels/balltree/common.cuh).
//
// What it computes
//   segment_upper_bound(sorted, count, q)   the first i < count with sorted[i] > q, or count:
//                                           the halving loop (first, count) of
//                                           orrery_core::executor::upper_bound_one, so an
//                                           unsorted input gives the same index everywhere
//   segment_of(starts, segments, p)         the last s < segments with starts[s] <= p, for
//                                           starts[0] <= p: segment_upper_bound over
//                                           starts[1..segments] (0 when segments <= 1)
//   segment_end(starts, segments, s, n)     starts[s + 1], or n for the last segment
//   segment_tile(starts, segments, b, e)    the segments of positions b and e - 1 of a tile
//                                           [b, e): a tile with first == last lies in one
//                                           segment (the one-segment fast path of a tiled
//                                           pass: one reduction per tile, one atomic)
//   shaders/core/segment.wgsl is the WGSL twin (same loop, same names).
//
// Launch shape: device functions, any thread.
//
// Buffers: `starts` read, `segments` u32 first positions of contiguous segments in position
//   order (a view: the caller adds its level offset to the pointer).
//
// Invariants: nothing is read outside starts[0..segments); p < starts[0] gives segment 0
//   (the clamp of an out-of-range position, never a fault).
//
// Measured cost: not measured yet (log2(segments) dependent loads per call).

__device__ __forceinline__ u32 segment_upper_bound(const u32* __restrict__ sorted, u32 count, u32 query) {
    u32 first = 0u;
    while (count > 0u) {
        const u32 step = count >> 1;
        const u32 probe = first + step;
        if (sorted[probe] <= query) {
            first = probe + 1u;
            count -= step + 1u;
        } else {
            count = step;
        }
    }
    return first;
}

__device__ __forceinline__ u32 segment_of(const u32* __restrict__ starts, u32 segments, u32 p) {
    return segments > 1u ? segment_upper_bound(starts + 1, segments - 1u, p) : 0u;
}

__device__ __forceinline__ u32 segment_end(const u32* __restrict__ starts, u32 segments, u32 s, u32 n) {
    return (s + 1u < segments) ? starts[s + 1u] : n;
}

struct SegmentTile {
    u32 first;  // segment of the tile's first position
    u32 last;   // segment of its last position (first == last: one segment)
};

__device__ __forceinline__ SegmentTile segment_tile(const u32* __restrict__ starts, u32 segments, u32 begin,
                                                    u32 end) {
    SegmentTile t;
    t.first = segment_of(starts, segments, begin);
    t.last = segment_of(starts, segments, end - 1u);
    return t;
}
