// core/segment — the segment of a position, by binary search in the starts of contiguous
// segments (an //#include snippet, not a module): the WGSL twin of
// kernels/core/segment.cuh, with the same loop and names.
//
// What it computes
//   segment_upper_bound(base, count, q)   the first i < count with segment_start(base + i)
//                                         > q, or count: the halving loop (first, count)
//                                         of orrery_core::executor::upper_bound_one, so an
//                                         unsorted input gives the same index everywhere
//   segment_of(base, segments, p)         the last s < segments with
//                                         segment_start(base + s) <= p, for a first start
//                                         <= p (0 when segments <= 1)
//   segment_end(base, segments, s, n)     segment_start(base + s + 1), or n for the last
//   segment_tile(base, segments, b, e)    vec2(segment of b, segment of e - 1) of a tile
//                                         [b, e): x == y means the tile lies in one segment
//
// The including module defines `fn segment_start(i: u32) -> u32`, returning element i of
// the buffer that holds the starts (WGSL passes no storage pointers to functions; `base`
// is the offset of the searched starts in it, e.g. a level offset). Every entry point that
// calls these functions thereby uses that binding.
//
// Launch shape: functions, any invocation. Buffers: the includer's starts, read.
// Invariants: nothing outside [base, base + segments) is read; a position before the first
// start gives segment 0 (a clamp, never a fault).
// Measured cost: not measured yet (log2(segments) dependent loads per call).

fn segment_upper_bound(base: u32, count_in: u32, query: u32) -> u32 {
    var first = 0u;
    var count = count_in;
    while count > 0u {
        let step = count / 2u;
        let probe = first + step;
        if segment_start(base + probe) <= query {
            first = probe + 1u;
            count -= step + 1u;
        } else {
            count = step;
        }
    }
    return first;
}

fn segment_of(base: u32, segments: u32, p: u32) -> u32 {
    if segments <= 1u {
        return 0u;
    }
    return segment_upper_bound(base + 1u, segments - 1u, p);
}

fn segment_end(base: u32, segments: u32, s: u32, n: u32) -> u32 {
    if s + 1u < segments {
        return segment_start(base + s + 1u);
    }
    return n;
}

fn segment_tile(base: u32, segments: u32, begin: u32, end: u32) -> vec2<u32> {
    return vec2<u32>(segment_of(base, segments, begin), segment_of(base, segments, end - 1u));
}
