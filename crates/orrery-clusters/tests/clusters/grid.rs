//! The flat grids' index math, and clusters of very different sizes side by side.

use orrery_clusters::grid::{ChunkGrid, PAIR_TILE, TileGrid};
use orrery_clusters::{CentroidParams, Clusters, cluster_statistics};

use crate::common::{TOL, assert_close, members, pair_distances};

#[test]
fn tile_grid_decode_is_the_inverse_of_the_prefix_sum() {
    // Sizes around the tile boundaries, empty clusters between.
    let sizes = [0usize, 1, 63, 64, 65, 0, 128, 129, 3, 200];
    let mut offsets = vec![0u32];
    for s in sizes {
        offsets.push(offsets[offsets.len() - 1] + s as u32);
    }
    let grid = TileGrid::new(&offsets, PAIR_TILE);
    let mut g = 0u64;
    for (c, &s) in sizes.iter().enumerate() {
        let t = s.div_ceil(PAIR_TILE);
        assert_eq!(grid.tiles_of(c), t);
        assert_eq!(grid.prefix()[c], g);
        for ti in 0..t {
            for tj in 0..t {
                let p = grid.decode(g);
                assert_eq!((p.cluster, p.ti, p.tj), (c, ti, tj), "g = {g}");
                g += 1;
            }
        }
        let rows: Vec<usize> = (0..t).flat_map(|ti| grid.tile_rows(c, ti)).collect();
        assert_eq!(rows, (offsets[c] as usize..offsets[c + 1] as usize).collect::<Vec<_>>());
    }
    assert_eq!(grid.len(), g);
    let chunks = ChunkGrid::new(&offsets, 50);
    let rows: Vec<usize> = (0..chunks.len()).flat_map(|i| chunks.decode(i).rows).collect();
    assert_eq!(rows.len(), offsets[offsets.len() - 1] as usize);
}

#[test]
fn ten_thousand_clusters_of_three_beside_one_large_cluster() {
    // 10,000 clusters of 3 members and one of 300 in 2-D: every family in one pass each.
    let mut v = Vec::new();
    let mut offsets = vec![0u32];
    for c in 0..10_000u32 {
        for m in 0..3u32 {
            let x = (c % 100) as f32 + 0.1 * m as f32;
            v.extend([x, (c / 100) as f32 + 0.05 * (m * m) as f32]);
        }
        offsets.push(offsets[offsets.len() - 1] + 3);
    }
    for m in 0..300u32 {
        v.extend([(m as f32 * 0.37).sin(), (m as f32 * 0.11).cos()]);
    }
    offsets.push(offsets[offsets.len() - 1] + 300);
    let c = Clusters::new(&v, 2, &offsets).unwrap();
    let s = cluster_statistics(&c, &CentroidParams::default()).unwrap();
    for k in [0usize, 1, 4_567, 9_999, 10_000] {
        let d = pair_distances(&members(&c, k));
        let mean = d.iter().sum::<f64>() / d.len() as f64;
        assert_close("mean pairwise distance", k, s.diversity.mean_distance[k], mean, TOL);
        assert_eq!(s.scale.pair_count[k], d.len() as u64);
    }
    // Translated copies of one shape agree to the f32 rounding of their coordinates.
    assert!((s.centroid.cohesion[5] - s.centroid.cohesion[6]).abs() < 1e-5);
    assert!((s.substructure.silhouette[5] - s.substructure.silhouette[77]).abs() < 1e-4);
}
