//! The consistency checker of a view's arrays ([`TreeViewParts::check`]).
//!
//! It trusts nothing: every index is bounds-checked before it is followed, so garbage
//! arrays (a GPU kernel's bug) give an [`Error::InvalidTree`], never a panic. The checks
//! are structural (each relation against its inverse, each range against its children),
//! not a rebuild, so a construction bug and a checker bug would have to agree to hide.
//! Passes run in order, each relying on the previous ones: cells and their order,
//! levels, nodes, leaves, particles.

use orrery_core::executor::check_len;
use orrery_core::sfc::KeyLayout;
use orrery_core::{Error, Real, Result};
use rayon::prelude::*;

use super::geometry::BoxRule;
use super::steps::placeholder_key;
use super::{NF_INTERNAL, NONE, TreeViewParts};

fn bad(index: usize, reason: impl Into<String>) -> Error {
    Error::InvalidTree { index, reason: reason.into() }
}

/// The first error of `f` over `0..n`, by index.
fn first_error(n: usize, f: impl Fn(usize) -> Result<()> + Sync + Send) -> Result<()> {
    match (0..n).into_par_iter().with_min_len(1024).find_map_first(|i| f(i).err()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// `v[i]` as an index below `len`, or an error naming `node` and `what`.
fn index(v: &[u32], i: usize, len: usize, node: usize, what: &str) -> Result<usize> {
    match v.get(i) {
        Some(&x) if (x as usize) < len => Ok(x as usize),
        Some(&x) => Err(bad(node, format!("{what} {x} is out of range (< {len})"))),
        None => Err(bad(node, format!("{what}: index {i} is past the array"))),
    }
}

/// Nodes in a subtree of `leaves >= 1` leaves.
fn subtree(leaves: u32, layout: KeyLayout) -> Option<u64> {
    let l = u64::from(leaves);
    l.checked_sub(1).map(|m| l + m / u64::from(layout.children() - 1))
}

/// Whether `(key, level)` is a cell of `layout`.
fn is_cell(key: u64, level: u32, layout: KeyLayout) -> bool {
    level <= layout.levels()
        && key < layout.key_end::<u64>()
        && key & (layout.cell_size_unchecked::<u64>(level) - 1) == 0
}

pub(super) fn check<T: Real>(p: &TreeViewParts<T>) -> Result<()> {
    let layout = p.layout();
    let n = p.keys.len();
    if n == 0 {
        return Err(bad(0, "a view has at least its root"));
    }
    if n >= NONE as usize {
        return Err(Error::TooManyPoints { count: n, max: NONE as usize - 1, what: "tree nodes" });
    }
    for (what, len) in [
        ("levels", p.levels.len()),
        ("parents", p.parents.len()),
        ("first children", p.first_children.len()),
        ("leaf begins", p.leaf_begins.len()),
        ("leaf counts", p.leaf_counts.len()),
        ("particle begins", p.particle_begins.len()),
        ("particle counts", p.particle_counts.len()),
        ("centres", p.centres.len()),
        ("half extents", p.half_extents.len()),
        ("escapes", p.escapes.len()),
        ("DFS positions", p.dfs_positions.len()),
        ("DFS order", p.dfs_order.len()),
        ("child-centric positions", p.child_centric_positions.len()),
        ("child-centric nodes", p.child_centric_nodes.len()),
        ("child indices", p.child_indices.len()),
        ("NF values", p.nf.as_ref().map_or(n, Vec::len)),
    ] {
        check_len(what, n, len)?;
    }
    let l = p.leaf_nodes.len();
    let gaps = layout.children() as usize - 1;
    if l == 0 || !(l - 1).is_multiple_of(gaps) || n != l + (l - 1) / gaps {
        return Err(bad(0, format!("{n} nodes and {l} leaves: a tree has L + (L - 1) / {gaps} nodes")));
    }
    check_len("particle leaves", p.particle_counts[0] as usize, p.particle_leaves.len())?;

    // Cells, in strictly increasing placeholder-key order: level order, key order.
    let pkey =
        |i: usize| is_cell(p.keys[i], p.levels[i], layout).then(|| placeholder_key(p.keys[i], p.levels[i], layout));
    first_error(n, |i| {
        let Some(here) = pkey(i) else {
            return Err(bad(i, format!("key {:#x} at level {} is not a cell", p.keys[i], p.levels[i])));
        };
        match i.checked_sub(1).map(pkey) {
            Some(Some(before)) if before >= here => {
                Err(bad(i, "nodes are not in level order, then key order (placeholder keys must increase)"))
            }
            _ => Ok(()),
        }
    })?;
    let depth = p.levels[n - 1] as usize;
    check_len("level offsets", depth + 2, p.level_offsets.len())?;
    check_len("parents per level", depth + 1, p.parents_per_level.len())?;
    check_levels(p, depth)?;

    let rule = BoxRule::new(&p.geometry);
    first_error(n, |i| check_node(p, &rule, i))?;
    check_leaves(p)?;
    first_error(p.particle_leaves.len(), |q| {
        let leaf = index(&p.particle_leaves, q, l, q, "particle leaf")?;
        let node = index(&p.leaf_nodes, leaf, n, q, "leaf node")?;
        let (begin, count) = (p.particle_begins[node] as usize, p.particle_counts[node] as usize);
        if q < begin || q >= begin + count {
            return Err(bad(
                q,
                format!("particle {q} is mapped to leaf {leaf}, which holds {begin}..{}", begin + count),
            ));
        }
        Ok(())
    })
}

/// Level offsets (each level a non-empty range, in order) and parents per level (level
/// `l + 1` has `2^b` nodes per internal node of level `l`, counted).
fn check_levels<T: Real>(p: &TreeViewParts<T>, depth: usize) -> Result<()> {
    let n = p.keys.len();
    let c = p.layout().children();
    let o = &p.level_offsets;
    if o[0] != 0 || o[depth + 1] as usize != n || o.windows(2).any(|w| w[0] >= w[1]) {
        return Err(bad(0, format!("level offsets {o:?} must rise strictly from 0 to {n}")));
    }
    let mut internal = vec![0u32; depth + 1];
    for i in 0..n {
        if p.first_children[i] != NONE {
            internal[p.levels[i] as usize] += 1;
        }
    }
    for (level, (&m, &counted)) in p.parents_per_level.iter().zip(&internal).enumerate() {
        let below = if level < depth { o[level + 2] - o[level + 1] } else { 0 };
        if m != counted || u64::from(below) != u64::from(m) * u64::from(c) {
            return Err(bad(
                o[level] as usize,
                format!("level {level}: {m} parents per level, {counted} internal nodes, {below} nodes below"),
            ));
        }
    }
    Ok(())
}

/// Everything about node `i` that its own entries and its children's decide.
#[allow(clippy::too_many_lines)] // One invariant after another; split, it reads worse.
fn check_node<T: Real>(p: &TreeViewParts<T>, rule: &BoxRule<T>, i: usize) -> Result<()> {
    let layout = p.layout();
    let (n, l) = (p.keys.len(), p.leaf_nodes.len());
    let c = layout.children() as usize;
    let (key, level) = (p.keys[i], p.levels[i]);
    let (leaf_begin, leaf_count) = (p.leaf_begins[i], p.leaf_counts[i]);
    let (particle_begin, particle_count) = (u64::from(p.particle_begins[i]), u64::from(p.particle_counts[i]));
    let root_particles = u64::from(p.particle_counts[0]);
    let o = &p.level_offsets;
    let lv = level as usize;
    if i < o[lv] as usize || i >= o[lv + 1] as usize {
        return Err(bad(i, format!("node of level {level} outside that level's range {}..{}", o[lv], o[lv + 1])));
    }
    if leaf_count == 0 || u64::from(leaf_begin) + u64::from(leaf_count) > l as u64 {
        return Err(bad(i, format!("leaf range {leaf_begin} + {leaf_count} is empty or past {l} leaves")));
    }
    if particle_begin + particle_count > root_particles {
        return Err(bad(
            i,
            format!("particle range {particle_begin} + {particle_count} is past the root's {root_particles}"),
        ));
    }

    // Parent.
    if i == 0 {
        if level != 0
            || key != 0
            || p.parents[0] != NONE
            || leaf_begin != 0
            || leaf_count as usize != l
            || particle_begin != 0
        {
            return Err(bad(0, "the root must be node 0: level 0, key 0, no parent, every leaf, particles from 0"));
        }
    } else {
        let parent = index(&p.parents, i, i, i, "parent (must precede the node)")?;
        if p.levels[parent] + 1 != level {
            return Err(bad(i, format!("level {level}, parent {parent} at level {}", p.levels[parent])));
        }
        if p.keys[parent] != layout.cell_start_unchecked(key, level - 1) {
            return Err(bad(i, format!("parent {parent}'s cell does not contain key {key:#x}")));
        }
        let first = p.first_children[parent];
        let slot = layout.child_slot_unchecked(key, level) as usize;
        if first == NONE || (first as usize).checked_add(slot) != Some(i) {
            return Err(bad(i, format!("child slot {slot} of parent {parent}, whose first child is {first}")));
        }
    }

    // Children, or the leaf.
    let first = p.first_children[i];
    let nf = p.nf.as_ref().map(|v| v[i]);
    if first == NONE {
        if leaf_count != 1 || p.leaf_nodes.get(leaf_begin as usize) != Some(&(i as u32)) {
            return Err(bad(
                i,
                format!("a leaf ({leaf_count} leaves from {leaf_begin}) not mapped back from its leaf"),
            ));
        }
        if nf == Some(NF_INTERNAL) {
            return Err(bad(i, "a leaf with the internal-node NF sentinel"));
        }
    } else {
        let first = first as usize;
        if first <= i || first + c > n || level >= layout.levels() {
            return Err(bad(i, format!("first child {first} (must follow the node, with {c} children before {n})")));
        }
        let (mut leaf, mut particle) = (u64::from(leaf_begin), particle_begin);
        for k in first..first + c {
            if p.parents[k] as usize != i {
                return Err(bad(i, format!("child {k} names parent {}", p.parents[k])));
            }
            if u64::from(p.leaf_begins[k]) != leaf || u64::from(p.particle_begins[k]) != particle {
                return Err(bad(i, format!("child {k}'s leaf or particle range does not follow its sibling's")));
            }
            leaf += u64::from(p.leaf_counts[k]);
            particle += u64::from(p.particle_counts[k]);
        }
        if leaf != u64::from(leaf_begin) + u64::from(leaf_count) || particle != particle_begin + particle_count {
            return Err(bad(i, "the children's leaf or particle counts do not sum to the node's"));
        }
        if nf.is_some_and(|v| v != NF_INTERNAL) {
            return Err(bad(i, "an internal node without the NF sentinel NF_INTERNAL"));
        }
    }

    // Box.
    let b = rule.cell_box(key, level);
    if p.centres[i] != b.centre || p.half_extents[i] != b.half {
        return Err(bad(
            i,
            format!("box {:?} +- {:?}, the rule gives {:?} +- {:?}", p.centres[i], p.half_extents[i], b.centre, b.half),
        ));
    }

    // DFS position and escape.
    let pos = index(&p.dfs_positions, i, n, i, "DFS position")?;
    if p.dfs_order[pos] as usize != i || (i == 0 && pos != 0) {
        return Err(bad(i, format!("DFS position {pos} does not map back (or the root is not first)")));
    }
    let size = subtree(leaf_count, layout).unwrap_or(0);
    let next = pos as u64 + size;
    let escape = match next {
        x if x == n as u64 => NONE,
        x if x < n as u64 => p.dfs_order[x as usize],
        _ => return Err(bad(i, format!("subtree of {size} nodes from DFS position {pos} is past {n}"))),
    };
    if p.escapes[i] != escape {
        return Err(bad(i, format!("escape {}, the node after the subtree is {escape}", p.escapes[i])));
    }
    if first != NONE {
        let first = first as usize;
        let mut expected = pos as u64 + 1;
        for k in first..first + c {
            if u64::from(p.dfs_positions[k]) != expected {
                return Err(bad(
                    i,
                    format!("child {k} is at DFS position {}, preorder needs {expected}", p.dfs_positions[k]),
                ));
            }
            let Some(s) = subtree(p.leaf_counts[k], layout) else {
                return Err(bad(k, "no leaves"));
            };
            expected += s;
        }
    }

    // Child-centric layout.
    let q = p.child_centric_positions[i] as usize;
    if q < o[lv] as usize || q >= o[lv + 1] as usize || p.child_centric_nodes[q] as usize != i {
        return Err(bad(i, format!("child-centric position {q} is off its level or does not map back")));
    }
    let child_index = p.child_indices[q];
    if first == NONE {
        if child_index != NONE {
            return Err(bad(i, format!("a leaf with child index {child_index}")));
        }
    } else {
        let m = p.parents_per_level[lv] as usize;
        let row = o[lv + 1] as usize;
        let ci = child_index as usize;
        if child_index == NONE || ci < row || ci >= row + m {
            return Err(bad(i, format!("child index {child_index} is not a position of the next level's first {m}")));
        }
        for k in 0..c {
            if p.child_centric_nodes[ci + k * m] as usize != first as usize + k {
                return Err(bad(i, format!("child-centric child {k} is not child {k} of the node")));
            }
        }
    }
    Ok(())
}

/// The leaf-to-node map (each a leaf naming its index back) and the leaves tiling the
/// key range and the particles in leaf order.
fn check_leaves<T: Real>(p: &TreeViewParts<T>) -> Result<()> {
    let layout = p.layout();
    let n = p.keys.len();
    let (mut key, mut particle) = (0u64, 0u64);
    for (leaf, _) in p.leaf_nodes.iter().enumerate() {
        let node = index(&p.leaf_nodes, leaf, n, leaf, "leaf node")?;
        if p.first_children[node] != NONE || p.leaf_begins[node] as usize != leaf {
            return Err(bad(leaf, format!("leaf {leaf} maps to node {node}, not a leaf of that index")));
        }
        if p.keys[node] != key || u64::from(p.particle_begins[node]) != particle {
            return Err(bad(
                leaf,
                format!("leaf {leaf} starts at key {:#x}, the previous ends at {key:#x}", p.keys[node]),
            ));
        }
        key += layout.cell_size_unchecked::<u64>(p.levels[node]);
        particle += u64::from(p.particle_counts[node]);
    }
    if key != layout.key_end::<u64>() || particle != u64::from(p.particle_counts[0]) {
        return Err(bad(p.leaf_nodes.len(), "the leaves do not end at the key range's end with the root's particles"));
    }
    Ok(())
}
