// shaders/tree/passes.wgsl — the criterion-independent steps of a rebalance pass
// (crates/orrery-tree-build/src/gpu/passes.rs), the WGSL twin of kernels/tree/passes.cu:
// same entry points, same arguments, same integers. Module "tree/passes": common.wgsl, then
// this file.
//
// What it computes (see passes.cu; L = min(status[LEAF_COUNT], capacity))
//   tb_leaf_counts  counts[i] = lower_bound(keys, K[i + 1]) - lower_bound(keys, K[i]), i < L,
//                   by lower_bound_one's halving loop; unless the run is done.
//   tb_scatter      new boundaries at next[offsets[i] + c], key_end at next[offsets[L]];
//                   in state RUN when the decide changed something; a proposal of more
//                   than `capacity` leaves writes nothing but OVERFLOW and NEEDED.
//   tb_finish       one invocation ends the pass in the status block.
//   tb_begin        one invocation starts a run (update, resume after growth, or build
//                   from the root leaf).
//
// Launch shapes: tb_leaf_counts and tb_scatter one invocation per leaf of the capacity
//   (workgroups of THREADS over a 2D dispatch, item_index); invocations past L, and all of
//   them once the run is done, return at once: sized for the capacity so that a recorded
//   pass needs no host-known leaf count, and a fixed pass budget costs little once the run
//   is done. tb_finish, tb_begin: one workgroup, only invocation 0 works (a few status
//   words, written in order by one invocation: no atomics, no races).
//
// Buffers (binding: direction, length, layout)
//   tb_leaf_counts: 0 keys (r, n vec2<u32>), 1 leaves (r, capacity + 1 vec2<u32>),
//                   2 status (r, STATUS_WORDS), 3 counts (rw, capacity), 4 params {n, capacity}
//   tb_scatter:     0 leaves (r), 1 ops (r, capacity), 2 offsets (r, capacity + 1),
//                   3 next (rw, capacity + 1 vec2<u32>), 4 status (rw atomic),
//                   5 params {capacity, bits, levels}
//   tb_finish:      0 offsets (r), 1 status (rw), 2 params {capacity, max_passes}
//   tb_begin:       0 leaves (rw), 1 status (rw), 2 params {mode, bits, levels}
//
// Invariants: as passes.cu.
//
// Measured cost: not measured yet.

// ---- tb_leaf_counts -------------------------------------------------------------------

struct CountsParams {
    n: u32,
    capacity: u32,
}

@group(0) @binding(0) var<storage, read> lc_keys: array<vec2<u32>>;
@group(0) @binding(1) var<storage, read> lc_leaves: array<vec2<u32>>;
@group(0) @binding(2) var<storage, read> lc_status: array<u32>;
@group(0) @binding(3) var<storage, read_write> lc_counts: array<u32>;
@group(0) @binding(4) var<uniform> lc_p: CountsParams;

fn lc_lower_bound(q: vec2<u32>) -> u32 {
    var first = 0u;
    var count = lc_p.n;
    while count > 0u {
        let step = count / 2u;
        let probe = first + step;
        if u64_lt(lc_keys[probe], q) {
            first = probe + 1u;
            count -= step + 1u;
        } else {
            count = step;
        }
    }
    return first;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn tb_leaf_counts(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                  @builtin(num_workgroups) nwg: vec3<u32>) {
    if lc_status[ST_STATE] == DONE {
        return;
    }
    let i = item_index(wid, nwg, lid);
    if i >= min(lc_status[ST_LEAF_COUNT], lc_p.capacity) {
        return;
    }
    lc_counts[i] = lc_lower_bound(lc_leaves[i + 1u]) - lc_lower_bound(lc_leaves[i]);
}

// ---- tb_scatter -----------------------------------------------------------------------

struct ScatterParams {
    capacity: u32,
    bits: u32,
    levels: u32,
}

@group(0) @binding(0) var<storage, read> sc_leaves: array<vec2<u32>>;
@group(0) @binding(1) var<storage, read> sc_ops: array<u32>;
@group(0) @binding(2) var<storage, read> sc_offsets: array<u32>;
@group(0) @binding(3) var<storage, read_write> sc_next: array<vec2<u32>>;
@group(0) @binding(4) var<storage, read_write> sc_status: array<atomic<u32>>;
@group(0) @binding(5) var<uniform> sc_p: ScatterParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn tb_scatter(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
              @builtin(num_workgroups) nwg: vec3<u32>) {
    if atomicLoad(&sc_status[ST_STATE]) != RUN || atomicLoad(&sc_status[ST_CHANGED]) == 0u {
        return;
    }
    let live = min(atomicLoad(&sc_status[ST_LEAF_COUNT]), sc_p.capacity);
    let total = sc_offsets[live];
    let i = item_index(wid, nwg, lid);
    if total > sc_p.capacity {
        if i == 0u {
            atomicStore(&sc_status[ST_OVERFLOW], 1u);
            atomicStore(&sc_status[ST_NEEDED], total);
        }
        return;
    }
    if i > live {
        return;
    }
    if i == live {
        sc_next[total] = key_end(sc_p.bits, sc_p.levels);
        return;
    }
    let op = sc_ops[i];
    if op == 0u {
        return;
    }
    let base = sc_offsets[i];
    let key = sc_leaves[i];
    if op == 1u {
        sc_next[base] = key;
        return;
    }
    let level = leaf_level(key, sc_leaves[i + 1u], sc_p.bits, sc_p.levels);
    let jump = countTrailingZeros(op) / sc_p.bits;
    let shift = sc_p.bits * (sc_p.levels - level - jump);
    for (var c = 0u; c < op; c++) {
        sc_next[base + c] = u64_add(key, shl64(vec2<u32>(c, 0u), shift));
    }
}

// ---- tb_finish ------------------------------------------------------------------------

struct FinishParams {
    capacity: u32,
    max_passes: u32,
}

@group(0) @binding(0) var<storage, read> fi_offsets: array<u32>;
@group(0) @binding(1) var<storage, read_write> fi_status: array<u32>;
@group(0) @binding(2) var<uniform> fi_p: FinishParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn tb_finish(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
             @builtin(num_workgroups) nwg: vec3<u32>) {
    if lid != 0u || linear_block(wid, nwg) != 0u {
        return;
    }
    let state = fi_status[ST_STATE];
    if state == DONE {
        return;
    }
    if state == COUNT_ONLY || fi_status[ST_OVERFLOW] != 0u {
        fi_status[ST_STATE] = DONE;
        fi_status[ST_SCAN_COUNT] = 0u;
        return;
    }
    let passes = fi_status[ST_PASSES] + 1u;
    fi_status[ST_PASSES] = passes;
    if fi_status[ST_CHANGED] == 0u {
        fi_status[ST_CONVERGED] = 1u;
        fi_status[ST_STATE] = DONE;
        fi_status[ST_SCAN_COUNT] = 0u;
        return;
    }
    let total = fi_offsets[min(fi_status[ST_LEAF_COUNT], fi_p.capacity)];
    fi_status[ST_LEAF_COUNT] = total;
    fi_status[ST_CURRENT] = fi_status[ST_CURRENT] ^ 1u;
    fi_status[ST_CHANGED] = 0u;
    if passes - fi_status[ST_RUN_BASE] >= fi_p.max_passes {
        fi_status[ST_STATE] = COUNT_ONLY;
        fi_status[ST_SCAN_COUNT] = 0u;
    } else {
        fi_status[ST_SCAN_COUNT] = total;
    }
}

// ---- tb_begin -------------------------------------------------------------------------

struct BeginParams {
    mode: u32,
    bits: u32,
    levels: u32,
}

@group(0) @binding(0) var<storage, read_write> bg_leaves: array<vec2<u32>>;
@group(0) @binding(1) var<storage, read_write> bg_status: array<u32>;
@group(0) @binding(2) var<uniform> bg_p: BeginParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn tb_begin(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
            @builtin(num_workgroups) nwg: vec3<u32>) {
    if lid != 0u || linear_block(wid, nwg) != 0u {
        return;
    }
    if bg_p.mode == BEGIN_BUILD {
        bg_leaves[0] = vec2<u32>(0u, 0u);
        bg_leaves[1] = key_end(bg_p.bits, bg_p.levels);
        bg_status[ST_LEAF_COUNT] = 1u;
        bg_status[ST_CURRENT] = 0u;
    }
    if bg_p.mode != BEGIN_RESUME {
        bg_status[ST_PASSES] = 0u;
    }
    bg_status[ST_RUN_BASE] = bg_status[ST_PASSES];
    bg_status[ST_STATE] = RUN;
    bg_status[ST_CHANGED] = 0u;
    bg_status[ST_CONVERGED] = 0u;
    bg_status[ST_OVERFLOW] = 0u;
    bg_status[ST_NEEDED] = 0u;
    bg_status[ST_SCAN_COUNT] = bg_status[ST_LEAF_COUNT];
}
