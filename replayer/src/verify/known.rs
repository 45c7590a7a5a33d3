//! The differences from NVK 25.0.7 that verify explains itself: what no trace can
//! carry (NAK's register counts, NVK's queue set-up), NVK 25.0.7's own uninitialised
//! data, and where the model follows a later NVK on purpose — each a class of
//! `nvk-25.0.7.known` beside this file, in the allow-file form. GPU addresses are not
//! among them: [`super::addresses`] checks those for consistency. A user's allow file
//! is for the user's own known differences.

use super::allow::AllowList;

/// The list's text.
const NVK_25_0_7: &str = include_str!("nvk-25.0.7.known");

/// The differences verify explains itself against NVK 25.0.7.
pub fn nvk_25_0_7() -> AllowList {
    // The list is part of this build and parsed by its tests: a line that does not
    // parse is a build defect, which the empty list then shows as unexplained.
    AllowList::parse(NVK_25_0_7).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::allow::Kind;

    #[test]
    fn every_line_parses_and_no_rule_is_a_gap_or_an_address() {
        let list = AllowList::parse(NVK_25_0_7).expect("the built-in list parses");
        assert!(list.len() >= 10, "{} rules", list.len());
        for i in 0..list.len() {
            let line = NVK_25_0_7.lines().nth(list.line(i) - 1).unwrap_or("");
            let reason = line.split_once(" -- ").map_or("", |(_, r)| r);
            assert!(
                ["compile:", "queue:", "nvk bug:", "version:"]
                    .iter()
                    .any(|class| reason.starts_with(class)),
                "{line}"
            );
        }
        assert!(list
            .reason(Kind::Data, "SET_PIPELINE_REGISTER_COUNT(j)")
            .is_some());
        assert!(list.reason(Kind::Data, "SET_COLOR_TARGET_B(j)").is_none());
    }
}
