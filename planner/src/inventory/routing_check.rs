//! Checking the inventory's `[routing]` table value by value, each problem with its line; the ASN range against the switches is checked by `design`.

use toml::Spanned;

use super::Checker;
use super::raw::RawRouting;
use crate::routing::{BFD_MS, BFD_MULTIPLIER, MAX_ASN, Routing, RoutingMode};

impl Checker {
    /// The `[routing]` table into `out` (which starts at the defaults).
    pub(super) fn routing(&mut self, r: &Spanned<RawRouting>, out: &mut Routing) {
        let raw = r.get_ref();
        if let Some(m) = &raw.mode {
            match RoutingMode::named(m.get_ref()) {
                Some(mode) => out.mode = mode,
                None => self.problem(
                    self.line(m),
                    "routing",
                    format!(
                        "mode `{}` is not a routing mode",
                        crate::names::escape(m.get_ref())
                    ),
                    "write mode = \"static\" or mode = \"bgp\"",
                ),
            }
        }
        if let Some(v) = self.number(
            "routing",
            "asn_base",
            raw.asn_base.as_ref(),
            1..=i64::from(MAX_ASN),
            "use a private ASN, e.g. 4200000000 (RFC 6996 4-byte range) or 64512",
        ) {
            out.asn_base = v as u32;
        }
        let Some(bfd) = &raw.bfd else { return };
        let bfd = bfd.get_ref();
        let ms = i64::from(*BFD_MS.start())..=i64::from(*BFD_MS.end());
        let fix = "give a BFD interval every vendor takes, in ms (default 300)";
        if let Some(v) = self.number("routing bfd", "tx_ms", bfd.tx_ms.as_ref(), ms.clone(), fix) {
            out.bfd.tx_ms = v as u32;
        }
        if let Some(v) = self.number("routing bfd", "rx_ms", bfd.rx_ms.as_ref(), ms, fix) {
            out.bfd.rx_ms = v as u32;
        }
        if let Some(v) = self.number(
            "routing bfd",
            "multiplier",
            bfd.multiplier.as_ref(),
            i64::from(*BFD_MULTIPLIER.start())..=i64::from(*BFD_MULTIPLIER.end()),
            "give a detect multiplier every vendor takes (default 3)",
        ) {
            out.bfd.multiplier = v as u32;
        }
    }
}
