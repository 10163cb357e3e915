//! The profiles as a set: every plan's sizes, names and order.

use super::*;

/// `ProfileName::ALL` is an array the compiler cannot check against the
/// enum, and `--profile` only finds what is in it. This match is
/// checked: a new profile fails to compile here until it gets the next
/// index, and then belongs at that place in `ALL`.
#[test]
fn every_plan_says_which_io_sizes_it_uses() {
    let settings = ProfileSettings {
        engine: Some(EngineKind::Psync),
        ..ProfileSettings::default()
    };
    for name in ProfileName::ALL {
        let takes_engine = name.settings().contains(&Setting::Engine);
        let s = if takes_engine {
            settings.clone()
        } else {
            ProfileSettings::default()
        };
        let Ok(plan) = plan(name, &s) else {
            // iometer without io_uring on this kernel: nothing to check.
            continue;
        };
        let sizes = plan.io_sizes();
        assert!(!sizes.is_empty(), "{name}");
        // PTS lists 0.5 KiB, which a device of 4 KiB sectors refuses
        // (the alignment check names --sizes); every other profile's
        // sizes suit any device.
        let unit = if matches!(name, ProfileName::PtsIops | ProfileName::PtsLat) {
            512
        } else {
            4096
        };
        assert!(
            sizes
                .iter()
                .all(|b| b.get() > 0 && b.get().is_multiple_of(unit)),
            "{name}: {sizes:?}"
        );
    }
}

#[test]
fn every_profile_is_listed_once_and_parses_back() {
    let index = |p: ProfileName| match p {
        ProfileName::Cdm => 0,
        ProfileName::CdmNvme => 1,
        ProfileName::CdmPeak => 2,
        ProfileName::CdmReal => 3,
        ProfileName::Cdm3 => 4,
        ProfileName::Iometer => 5,
        ProfileName::Gnome => 6,
        ProfileName::Macbench => 7,
        ProfileName::Sweep => 8,
        ProfileName::Artefacts => 9,
        ProfileName::Sustained => 10,
        ProfileName::Verify => 11,
        ProfileName::PtsIops => 12,
        ProfileName::PtsWsat => 13,
        ProfileName::PtsTp => 14,
        ProfileName::PtsLat => 15,
    };
    for (i, p) in ProfileName::ALL.into_iter().enumerate() {
        assert_eq!(index(p), i, "{p} is out of place in ProfileName::ALL");
        assert_eq!(p.as_str().parse::<ProfileName>(), Ok(p));
    }
    assert_eq!(ProfileName::ALL.len(), index(ProfileName::PtsLat) + 1);
}

#[test]
fn every_profile_name_round_trips() {
    for p in ProfileName::ALL {
        assert_eq!(p.as_str().parse::<ProfileName>().unwrap(), p);
    }
    let err = "crystal".parse::<ProfileName>().unwrap_err();
    assert!(err.contains("cdm, cdm-nvme"), "{err}");
}

#[test]
fn powers_of_two_include_both_ends() {
    assert_eq!(powers_of_two(1, 32), vec![1, 2, 4, 8, 16, 32]);
    assert_eq!(powers_of_two(4096, 4 << 20).len(), 11);
}
