use super::*;
use iomark_model::mem::{Advice, Backing, CheckOutcome};

fn run_fixed(grid: &str, nn: u32, threads: usize) -> HimenoResult {
    let spec = HimenoSpec {
        grid: parse_grid(grid).unwrap(),
        length: HimenoLength::Iterations(nn),
    };
    let mut region = Region::new(&Backing::Heap, Advice::Normal, &sizes(&spec)).unwrap();
    run(&spec, threads, &mut region, &AtomicBool::new(false))
        .unwrap()
        .unwrap()
        .0
}

#[test]
fn xs_and_s_match_the_reference_gosa() {
    for (grid, nn, threads) in [("xs", 3, 1), ("xs", 3, 2), ("s", 3, 2)] {
        let r = run_fixed(grid, nn, threads);
        assert_eq!(
            r.validation.outcome,
            CheckOutcome::Passed,
            "{grid}: {}",
            r.validation.detail
        );
    }
}

#[test]
fn grids_parse_by_name_or_extents() {
    let g = parse_grid("XXL").unwrap();
    assert_eq!((g.i, g.j, g.k), (1025, 1025, 2049));
    let g = parse_grid("65x65x129").unwrap();
    assert_eq!((g.name, g.k), (None, 129));
    assert!(parse_grid("3x64x64").is_err());
    assert!(parse_grid("huge").is_err());
}

#[test]
fn flops_follow_himenos_formula() {
    let g = parse_grid("xxl").unwrap();
    assert!((flops_per_sweep(&g) - 7.27e10).abs() / 7.27e10 < 1e-2);
}

#[test]
fn unknown_combinations_are_unchecked_not_passed() {
    let r = run_fixed("xs", 2, 1);
    assert_eq!(r.validation.outcome, CheckOutcome::Unchecked);
}
