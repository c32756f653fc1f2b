//! Key-range helpers of Cornerstone trees: cell sizes, starts, levels, parents, child
//! slots and common ancestors, consistent with each other and with decoding, for
//! octree, quadtree and binary layouts of both key widths; and their error paths.

use orrery_core::Error;
use orrery_core::sfc::{Curve, KeyLayout, SfcKey, morton};
use proptest::prelude::*;

/// Checks every helper at one `(key, level)` against the definitions and each other.
fn check_cell<K: SfcKey>(layout: KeyLayout, key: K, level: u32) -> Result<(), TestCaseError> {
    let bpl = layout.bits_per_level();
    let k = key.to_u64();
    let size = layout.cell_size::<K>(level)?.to_u64();
    prop_assert_eq!(size, 1u64 << (bpl * (layout.levels() - level)));
    let start = layout.cell_start(key, level)?.to_u64();
    prop_assert!(start <= k && k < start + size);
    prop_assert_eq!(start % size, 0);
    let (s, e) = (K::from_u64(start), K::from_u64(start + size));
    prop_assert_eq!(layout.level_of_range(s, e), Some(level));
    prop_assert!(layout.is_cell(s, e));
    prop_assert_eq!(layout.common_level(s, K::from_u64(start + size - 1)), level);
    prop_assert!(layout.common_level(key, s) >= level);

    let slot = layout.child_slot(key, level)?;
    prop_assert!(slot < layout.children());
    if level == 0 {
        prop_assert_eq!(slot, 0);
    } else {
        let parent = layout.parent_start(key, level)?.to_u64();
        prop_assert_eq!(parent, layout.cell_start(key, level - 1)?.to_u64());
        prop_assert_eq!(start - parent, u64::from(slot) * size);
        prop_assert_eq!(
            layout.level_of_range(K::from_u64(parent), K::from_u64(parent + size * u64::from(layout.children()))),
            Some(level - 1)
        );
        prop_assert_eq!(layout.parent_start_unchecked(key, level).to_u64(), parent);
    }
    prop_assert_eq!(layout.cell_start_unchecked(key, level), s);
    prop_assert_eq!(layout.child_slot_unchecked(key, level), slot);
    Ok(())
}

/// The digits of a key, coarsest first, rebuild it.
fn check_digits<K: SfcKey>(layout: KeyLayout, key: K) -> Result<(), TestCaseError> {
    let rebuilt = (1..=layout.levels())
        .try_fold(0u64, |acc, l| layout.child_slot(key, l).map(|d| (acc << layout.bits_per_level()) | u64::from(d)))?;
    prop_assert_eq!(rebuilt, key.to_u64());
    Ok(())
}

/// `common_level` against its definition: the deepest level whose cells agree.
fn check_common<K: SfcKey>(layout: KeyLayout, a: K, b: K) -> Result<(), TestCaseError> {
    let expected = (0..=layout.levels())
        .rev()
        .find(|&l| layout.cell_start_unchecked(a, l) == layout.cell_start_unchecked(b, l))
        .unwrap_or(0);
    prop_assert_eq!(layout.common_level(a, b), expected);
    prop_assert_eq!(layout.common_level(b, a), expected);
    Ok(())
}

/// `level_of_range` against its definition on arbitrary (mostly non-cell) intervals.
fn check_range<K: SfcKey>(layout: KeyLayout, start: K, end: K) -> Result<(), TestCaseError> {
    let (s, e) = (start.to_u64(), end.to_u64());
    let expected = (0..=layout.levels()).find(|&l| {
        let size = 1u64 << (layout.bits_per_level() * (layout.levels() - l));
        e > s && e - s == size && s % size == 0 && e <= 1u64 << layout.key_bits()
    });
    prop_assert_eq!(layout.level_of_range(start, end), expected);
    Ok(())
}

fn layouts_u64() -> [KeyLayout; 3] {
    [KeyLayout::octree::<u64>(), KeyLayout::quadtree::<u64>(), KeyLayout::binary::<u64>()]
}

fn layouts_u32() -> [KeyLayout; 3] {
    [KeyLayout::octree::<u32>(), KeyLayout::quadtree::<u32>(), KeyLayout::binary::<u32>()]
}

proptest! {
    // Each case checks six layouts; cheap enough for more samples.
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn cell_helpers_agree_for_every_layout_and_level(a: u64, b: u64, level_seed: u32, span in 0u32..64) {
        for layout in layouts_u64() {
            let end = 1u64 << layout.key_bits();
            let (ka, kb) = (a % end, b % end);
            let level = level_seed % (layout.levels() + 1);
            check_cell(layout, ka, level)?;
            check_digits(layout, ka)?;
            check_common(layout, ka, kb)?;
            // An interval near a cell (same start, length a power of two or off by one).
            let len = (1u64 << (span % layout.key_bits())) + u64::from(span % 3) - 1;
            check_range(layout, layout.cell_start_unchecked(ka, level), ka.saturating_add(len).min(end))?;
            check_range(layout, ka.min(kb), ka.max(kb))?;
        }
        for layout in layouts_u32() {
            let end = 1u64 << layout.key_bits();
            let (ka, kb) = ((a % end) as u32, (b % end) as u32);
            let level = level_seed % (layout.levels() + 1);
            check_cell(layout, ka, level)?;
            check_digits(layout, ka)?;
            check_common(layout, ka, kb)?;
            check_range(layout, ka.min(kb), ka.max(kb))?;
        }
    }

    #[test]
    fn octree_cells_are_the_cubes_that_decoding_finds(key in 0u64..1 << 63, level in 0..=21u32) {
        let layout = KeyLayout::octree::<u64>();
        let start = layout.cell_start(key, level)?;
        let size = layout.cell_size::<u64>(level)?;
        for curve in [Curve::Morton, Curve::Hilbert] {
            let (corner, side) = curve.cell_box_3d(key, level)?;
            prop_assert_eq!(side, 1 << (21 - level));
            prop_assert_eq!(curve.cell_box_3d(start, level)?, (corner, side));
            prop_assert_eq!(curve.cell_box_3d(start + size - 1, level)?, (corner, side));
            if start + size < 1 << 63 {
                prop_assert_ne!(curve.cell_box_3d(start + size, level)?.0, corner);
            }
        }
        // On the Morton curve the first key of a cell decodes to its lower corner.
        prop_assert_eq!(morton::decode_3d(start)?, Curve::Morton.cell_box_3d(key, level)?.0);
    }
}

#[test]
fn the_root_spans_all_keys_and_the_leaves_single_keys() {
    for layout in layouts_u64() {
        assert_eq!(layout.level_of_range(0u64, layout.key_end::<u64>()), Some(0));
        assert_eq!(layout.cell_size::<u64>(layout.levels()), Ok(1));
        assert_eq!(layout.level_of_range(41u64, 42), Some(layout.levels()));
        assert_eq!(layout.common_level(7u64, 7), layout.levels());
        let last = layout.key_end::<u64>() - 1;
        assert_eq!(layout.common_level(0u64, last), 0);
        assert_eq!(layout.child_slot(last, 1), Ok(layout.children() - 1));
    }
    assert_eq!(KeyLayout::octree::<u32>().key_end::<u32>(), 1 << 30);
    assert_eq!(KeyLayout::binary::<u32>().key_end::<u32>(), 1 << 31);
}

#[test]
fn ranges_that_are_not_cells_have_no_level() {
    let octree = KeyLayout::octree::<u64>();
    assert_eq!(octree.level_of_range(0u64, 2), None); // not a power of 8
    assert_eq!(octree.level_of_range(8u64, 8), None); // empty
    assert_eq!(octree.level_of_range(9u64, 8), None); // reversed
    assert_eq!(octree.level_of_range(4u64, 12), None); // misaligned
    assert_eq!(octree.level_of_range(1u64 << 63, (1 << 63) + 1), None); // past the end
    let binary = KeyLayout::binary::<u64>();
    assert_eq!(binary.level_of_range(2u64, 4), Some(62));
    assert_eq!(binary.level_of_range(0u64, 1 << 63), Some(0));
    assert!(!binary.is_cell(0u64, u64::MAX));
}

#[test]
fn level_out_of_range_names_the_level_and_the_layout() {
    let octree = KeyLayout::octree::<u64>();
    assert_eq!(octree.cell_size::<u64>(22), Err(Error::LevelOutOfRange { level: 22, max: 21, what: "an octree key" }));
    assert_eq!(octree.cell_start(5u64, 99), Err(Error::LevelOutOfRange { level: 99, max: 21, what: "an octree key" }));
    assert_eq!(
        KeyLayout::quadtree::<u32>().child_slot(5u32, 16),
        Err(Error::LevelOutOfRange { level: 16, max: 15, what: "a quadtree key" })
    );
    assert_eq!(
        KeyLayout::binary::<u32>().cell_size::<u32>(32),
        Err(Error::LevelOutOfRange { level: 32, max: 31, what: "a binary key" })
    );
    assert!(matches!(octree.parent_start(5u64, 0), Err(Error::LevelOutOfRange { level: 0, max: 21, .. })));
    assert_eq!(
        octree.parent_start(5u64, 22),
        Err(Error::LevelOutOfRange { level: 22, max: 21, what: "an octree key" })
    );
}

#[test]
fn keys_past_the_end_are_out_of_range() {
    let octree = KeyLayout::octree::<u32>();
    assert_eq!(
        octree.cell_start(1u32 << 30, 3),
        Err(Error::KeyOutOfRange { key: 1 << 30, max: (1 << 30) - 1, bits: 32, curve: "octree" })
    );
    assert_eq!(
        KeyLayout::quadtree::<u64>().child_slot(u64::MAX, 3),
        Err(Error::KeyOutOfRange { key: u64::MAX, max: (1 << 62) - 1, bits: 64, curve: "quadtree" })
    );
    assert_eq!(
        KeyLayout::binary::<u64>().parent_start(1u64 << 63, 3),
        Err(Error::KeyOutOfRange { key: 1 << 63, max: (1 << 63) - 1, bits: 64, curve: "binary" })
    );
}

#[test]
fn unchecked_helpers_clamp_bad_levels_instead_of_panicking() {
    let octree = KeyLayout::octree::<u64>();
    assert_eq!(octree.cell_size_unchecked::<u64>(99), 1);
    assert_eq!(octree.cell_start_unchecked(12345u64, 99), 12345);
    assert_eq!(octree.parent_start_unchecked(12345u64, 0), 0);
    assert_eq!(octree.child_slot_unchecked(0o7u64, 99), 7);
    assert_eq!(octree.common_level(0u64, u64::MAX), 0);
}

#[test]
fn custom_layouts_follow_the_same_rules() {
    let layout = KeyLayout::new(4, 15).unwrap();
    assert_eq!(layout.children(), 16);
    assert_eq!(layout.key_end::<u64>(), 1 << 60);
    assert_eq!(layout.level_of_range(0x100u64, 0x200), Some(13));
    assert_eq!(KeyLayout::new(3, 21), Ok(KeyLayout::octree::<u64>()));
    assert_eq!(KeyLayout::binary_levels(40).levels(), 40);
    assert_eq!(KeyLayout::binary_levels(99).levels(), 63);
}
