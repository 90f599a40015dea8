//! Switch models that give up a cage for a breakout.
//!
//! On some NVIDIA Spectrum switches a cage broken out into four or eight
//! lanes takes the lanes of the cage after it, which must be disabled:
//! breaking out cage 1 disables cage 2, cage 3 disables cage 4, and so on.
//! NVUE disables that cage itself when the breakout is applied, so a plan
//! that cables an even-numbered cage of such a switch would lose those
//! links on the first `nv config apply`. The source is NVIDIA's Cumulus
//! Linux 5.12 user guide, "Switch Port Attributes", Breakout Ports:
//! - the note under "Configure a Breakout Port": the SN2700, SN4600 and
//!   SN4600C must disable "the subsequent even-numbered port" for a 4x or
//!   8x breakout (the SN3700, SN3700C, SN2201, SN2010 and SN2100 need not);
//! - the per-platform port tables: on the SN4700 and SN5600 an 8x breakout
//!   needs "the adjacent" cage disabled, and the SN5400's 8x breakouts are
//!   of its 32 odd cages only.
//!
//! A model is recognised by a word of the plan's `model` text, with or
//! without the `M` of NVIDIA's order codes (`NVIDIA SN4600C`,
//! `MSN4600C-CS2FC`); a model not in the table is not checked.

use crate::plan::{Plan, PlanSwitch, PortRole};

/// (model, the fewest lanes per cage that disable the next cage).
const GIVES_UP_NEXT_CAGE: [(&str, u32); 6] = [
    ("SN2700", 4),
    ("SN4600", 4),
    ("SN4600C", 4),
    ("SN4700", 8),
    ("SN5400", 8),
    ("SN5600", 8),
];

/// The model of `model` text in [`GIVES_UP_NEXT_CAGE`], and its lane
/// threshold.
fn limited_model(model: &str) -> Option<(&'static str, u32)> {
    model
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|word| !word.is_empty())
        .find_map(|word| {
            let word = word.to_ascii_uppercase();
            let bare = word.strip_prefix('M').filter(|w| w.starts_with("SN"));
            GIVES_UP_NEXT_CAGE
                .iter()
                .find(|(name, _)| *name == word || Some(*name) == bare)
                .copied()
        })
}

/// Each broken-out switch whose model disables the cage after a broken-out
/// one, and which cables an even-numbered cage: (object, message). One per
/// physical switch (the VLAN halves of one share their cages).
pub(super) fn disabled_cages_used(plan: &Plan) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for s in &plan.switch_list {
        let Some(b) = s.breakout else { continue };
        let Some((model, lanes)) = limited_model(&s.model) else {
            continue;
        };
        if b.lanes < lanes || !seen.insert(s.physical.as_str()) {
            continue;
        }
        let halves = plan.switch_list.iter().filter(|h| h.physical == s.physical);
        let mut cages: Vec<u32> = halves
            .flat_map(|h: &PlanSwitch| h.ports.iter())
            .filter(|p| !matches!(p.role, PortRole::Free))
            .map(|p| b.cage_lane(p.port).0)
            .filter(|cage| cage % 2 == 0)
            .collect();
        cages.sort_unstable();
        cages.dedup();
        if cages.is_empty() {
            continue;
        }
        let shown: Vec<String> = cages.iter().take(6).map(u32::to_string).collect();
        let more = match cages.len() {
            n if n > shown.len() => format!(" and {} more", n - shown.len()),
            _ => String::new(),
        };
        out.push((
            format!("switch {}", s.physical),
            format!(
                "is an {model} broken out {}, and an {model} disables the cage after each cage broken out into {lanes} or more lanes (NVUE does it on `nv config apply`; Cumulus Linux 5.12 user guide, Switch Port Attributes, Breakout Ports), but the plan cables even-numbered cages {}{more}",
                b.describe(),
                shown.join(", "),
            ),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::limited_model;
    use crate::design::{DesignOptions, bundled_text, design};
    use crate::inventory::Inventory;
    use crate::plan::Topology;

    /// The bundled breakout inventory with leaves of `model`, `cages`
    /// cages of `cage_gbps` broken out `breakout`, designed as a fat tree.
    fn leaves_of(model: &str, cages: u32, cage_gbps: u32, breakout: &str) -> crate::Result<()> {
        let text = bundled_text("breakout-200g").replacen(
            "model = \"sw-16x400\"\nports = 16\nport_gbps = 400\nbreakout = \"2x200G\"",
            &format!(
                "model = \"{model}\"\nports = {cages}\nport_gbps = {cage_gbps}\nbreakout = \"{breakout}\""
            ),
            1,
        );
        assert!(text.contains(model), "the leaf table was not replaced");
        let inv = Inventory::from_toml(&text, "leaves.toml")?;
        let opts = DesignOptions {
            topology: Topology::FatTree,
            ..DesignOptions::default()
        };
        design(&inv, &opts).map(drop)
    }

    #[test]
    fn a_design_that_cables_a_cage_the_model_gives_up_is_refused() {
        // 8 cages of 4 x 200G: the leaves use all 8, so cages 2, 4, 6, 8.
        let e = leaves_of("NVIDIA SN4600", 8, 800, "4x200G")
            .unwrap_err()
            .to_string();
        assert!(e.contains("switch leaf01"), "{e}");
        assert!(e.contains("is an SN4600 broken out 4x200G"), "{e}");
        assert!(e.contains("cables even-numbered cages 2, 4, 6, 8"), "{e}");
        assert!(e.contains("Switch Port Attributes"), "{e}");
        assert!(e.contains("break out into fewer lanes"), "{e}");
        // An 8x breakout gives up the next cage on an SN5600 ...
        let e = leaves_of("MSN5600", 4, 1600, "8x200G")
            .unwrap_err()
            .to_string();
        assert!(e.contains("is an SN5600 broken out 8x200G"), "{e}");
        assert!(e.contains("cages 2, 4"), "{e}");
    }

    #[test]
    fn models_and_breakouts_that_keep_every_cage_design() {
        // ... a 4x one does not, nor does any on a model not listed.
        leaves_of("NVIDIA SN5600", 8, 800, "4x200G").unwrap();
        leaves_of("NVIDIA SN3700", 8, 800, "4x200G").unwrap();
        leaves_of("NVIDIA SN4600C", 16, 400, "2x200G").unwrap();
    }

    #[test]
    fn models_are_recognised_by_a_word_of_the_model_text() {
        assert_eq!(limited_model("NVIDIA SN4600C"), Some(("SN4600C", 4)));
        assert_eq!(limited_model("MSN4600C-CS2FC"), Some(("SN4600C", 4)));
        assert_eq!(limited_model("nvidia sn4600"), Some(("SN4600", 4)));
        assert_eq!(limited_model("Spectrum-4 SN5600"), Some(("SN5600", 8)));
        assert_eq!(limited_model("NVIDIA SN3700C"), None);
        assert_eq!(limited_model("SN46000"), None);
        assert_eq!(limited_model("MSN"), None);
        assert_eq!(limited_model("sw-16x400"), None);
    }
}
