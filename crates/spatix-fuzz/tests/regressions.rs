//! Regression inputs: each was a fuzzer finding, kept so that it stays fixed. (An integration
//! test, not the library's unit tests: those would compile every driver a second time.)

use spatix_fuzz::{TARGETS, drive_built, run};

/// Runs target number `target` on `ops` (the first byte of an input picks the target).
fn run_target(target: usize, ops: &[u8]) {
    let pick = u8::try_from(target).expect("fewer than 256 targets");
    run(&[&[pick], ops].concat());
}

/// Every target runs the empty input and a short mixed one.
#[test]
fn every_target_runs() {
    for target in 0..TARGETS.len() {
        run_target(target, &[]);
        run_target(
            target,
            &[
                0, 10, 10, 20, 20, 9, 0, 0, 30, 30, 7, 14, 0, 0, 1, 1, 2, 2, 15,
            ],
        );
    }
}

/// Every structure of `spatix::for_each_structure!` but the oracle has a target, named by its
/// short name (`-` for `_`) and its set-up. (The table is not made from the list: a target's
/// position is what the first byte of every corpus file picks.)
#[test]
fn every_structure_is_a_target() {
    macro_rules! names {
        (oracle { $($oracle:tt)* } dynamic { parallel { $($name:ident: $ty:ident),* } serial { $($serial:ident: $serial_ty:ident),* } }
            fixed { boxes { $($boxes:ident: $boxes_ty:ident),* } points { $($points:ident: $points_ty:ident),* } }) => {
            [
                $(stringify!($name),)* $(stringify!($serial),)*
                $(stringify!($boxes),)* $(stringify!($points),)*
            ]
        };
    }
    for name in spatix::for_each_structure!(names) {
        let prefix = format!("{}-", name.replace('_', "-"));
        assert!(
            TARGETS.iter().any(|t| t.starts_with(&prefix)),
            "{name}: no fuzz target"
        );
    }
}

/// The static driver catches a structure that loses an element at build time.
#[test]
#[should_panic(expected = "iter after build")]
fn static_driver_catches_a_lost_element() {
    drive_built::<f32, _, _>(
        &[0, 10, 10, 20, 20, 0, 30, 30, 40, 40, 9, 0, 0, 99, 99],
        false,
        |data| spatix::PackedIndex::build(data.iter().skip(1).copied()),
    );
}

/// The static driver catches a build that accepts an invalid data set.
#[test]
#[should_panic(expected = "got Ok(()), the oracle Err(InvalidAabb)")]
fn static_driver_catches_invalid_data_accepted() {
    // The second element's first coordinate is NaN (hard value 0).
    drive_built::<f64, _, _>(&[0, 10, 10, 20, 20, 0, 200, 10, 20, 20, 7], false, |data| {
        spatix::PackedIndex::build(data.iter().filter(|(b, _)| b.is_valid()).copied())
    });
}

/// kdtree-f64-bucket-2-cycle: a point at (-10, -10), then `within` from (f32::MAX, 94.25)
/// with radius f32::MAX. The point's distance rounds to the radius, but it lies outside the
/// area `point ± radius` that `BruteForce` searches: the kd-tree reported it.
#[test]
fn kdtree_within_where_the_distance_rounds_to_the_radius() {
    let kdtree = TARGETS
        .iter()
        .position(|t| *t == "kdtree-f64-bucket-2-cycle");
    run_target(
        kdtree.expect("a target"),
        &[0, 0, 0, 0x8b, 0xcd, 0x8b, 0xcd],
    );
}
