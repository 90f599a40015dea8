//! The data check: an f32 pattern whose sum over ranks is exact in any order (small integers), and the count of wrong elements.
//!
//! Element `i` of rank `r` in iteration `t` holds `((3r + 5i + 7t) mod 17) - 8`,
//! an integer from -8 to 8. Every partial sum of P such values is an
//! integer of magnitude at most 8P, exact in f32 while 8P < 2^24, so the
//! result does not depend on the order of the additions. The expected sum
//! of element `i` depends only on `(5i + 7t) mod 17`: 17 values per world
//! size, so the check costs one comparison per element.

const MODULUS: u64 = 17;

/// Most ranks the pattern sums exactly (8P < 2^24).
pub const MAX_RANKS: usize = 1 << 21;

fn residue(rank: usize, iteration: u64) -> u64 {
    (3 * (rank as u64 % MODULUS) + 7 * (iteration % MODULUS)) % MODULUS
}

/// Fills `buf` with rank `rank`'s contribution for iteration `iteration`.
pub fn fill(buf: &mut [f32], rank: usize, iteration: u64) {
    let mut k = residue(rank, iteration);
    for x in buf {
        *x = k as f32 - 8.0;
        k += 5;
        if k >= MODULUS {
            k -= MODULUS;
        }
    }
}

/// The sums every rank must hold after an allreduce over `world` ranks.
#[derive(Debug, Clone)]
pub struct Expected {
    /// Sum of element `i` is `sums[(5i + 7t) mod 17]`.
    sums: [f32; MODULUS as usize],
}

impl Expected {
    /// The expected sums for `world` ranks (at most [`MAX_RANKS`]).
    pub fn new(world: usize) -> Self {
        let mut sums = [0f32; MODULUS as usize];
        // Ranks r and r + 17 contribute alike: count ranks per residue of r.
        let mut per = [0i64; MODULUS as usize];
        for (r, n) in per.iter_mut().enumerate() {
            *n = ((world + MODULUS as usize - 1 - r) / MODULUS as usize) as i64;
        }
        for (k, s) in sums.iter_mut().enumerate() {
            let total: i64 = per
                .iter()
                .enumerate()
                .map(|(r, &n)| n * (((3 * r as u64 + k as u64) % MODULUS) as i64 - 8))
                .sum();
            *s = total as f32;
        }
        Self { sums }
    }

    /// Elements of `buf` that differ from the sum for iteration
    /// `iteration` (a NaN is wrong too).
    pub fn wrong(&self, buf: &[f32], iteration: u64) -> u64 {
        let mut k = (7 * (iteration % MODULUS)) % MODULUS;
        let mut wrong = 0;
        for &x in buf {
            wrong += u64::from(x != self.sums[k as usize]);
            k += 5;
            if k >= MODULUS {
                k -= MODULUS;
            }
        }
        wrong
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sum of the ranks' fills, added in rank order and in reverse.
    fn reference(world: usize, len: usize, t: u64) -> Vec<f32> {
        let mut sum = vec![0f32; len];
        let mut part = vec![0f32; len];
        for r in (0..world).rev() {
            fill(&mut part, r, t);
            for (s, p) in sum.iter_mut().zip(&part) {
                *s += p;
            }
        }
        sum
    }

    #[test]
    fn expected_sums_match_a_direct_sum_for_many_world_sizes() {
        for world in [1, 2, 3, 5, 16, 17, 18, 35, 100] {
            for t in [0, 1, 16, 17, 40] {
                let sum = reference(world, 50, t);
                assert_eq!(
                    Expected::new(world).wrong(&sum, t),
                    0,
                    "{world} ranks, t {t}"
                );
            }
        }
    }

    #[test]
    fn a_changed_contribution_or_a_stale_iteration_is_wrong() {
        let e = Expected::new(5);
        let mut sum = reference(5, 40, 3);
        sum[7] += 1.0;
        sum[8] = f32::NAN;
        assert_eq!(e.wrong(&sum, 3), 2);
        let stale = reference(5, 40, 2);
        assert!(e.wrong(&stale, 3) > 30);
        // A rank counted twice or missing changes most elements.
        assert!(e.wrong(&reference(4, 40, 3), 3) > 30);
        assert!(e.wrong(&reference(6, 40, 3), 3) > 30);
    }

    #[test]
    fn values_are_small_integers() {
        let mut b = vec![0f32; 100];
        fill(&mut b, 12345, 99);
        assert!(
            b.iter()
                .all(|x| x.fract() == 0.0 && (-8.0..=8.0).contains(x))
        );
    }
}
