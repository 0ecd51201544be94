//! "Did you mean" suggestions.

/// Longest name (in bytes) worth a suggestion; longer is not a typo.
pub const MAX_SUGGESTION_LEN: usize = 64;

/// The candidate closest to `input`, if it is close enough to be a plausible typo: within
/// a small edit distance (transpositions count once, so `tll` finds `ttl`) or similar by
/// Jaro-Winkler (which favours long names with a common prefix). Fewest edits first.
///
/// Inputs and candidates longer than [`MAX_SUGGESTION_LEN`] bytes are never compared: both
/// come from files, and the distances cost their lengths multiplied (a 20 KB hostile type
/// name took half a minute per comparison).
pub fn closest<'a>(input: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    if input.len() > MAX_SUGGESTION_LEN {
        return None;
    }
    let input = input.to_ascii_lowercase();
    // One edit per four characters, at least one: `ttl` -> `tll`, `feautres` -> `features`.
    let max_edits = (input.chars().count() / 4).max(1);
    candidates
        .into_iter()
        .filter(|candidate| candidate.len() <= MAX_SUGGESTION_LEN)
        .filter_map(|candidate| {
            let lower = candidate.to_ascii_lowercase();
            let edits = strsim::osa_distance(&input, &lower);
            let similarity = strsim::jaro_winkler(&input, &lower);
            (edits <= max_edits || similarity >= 0.8).then_some((edits, similarity, candidate))
        })
        .min_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)))
        .map(|(_, _, candidate)| candidate)
}

#[cfg(test)]
mod tests {
    #[test]
    fn suggests_close_names_only() {
        let names = ["features", "entities", "event_timestamp"];
        assert_eq!(super::closest("feautres", names), Some("features"));
        assert_eq!(
            super::closest("event_timestmap", names),
            Some("event_timestamp")
        );
        assert_eq!(super::closest("zzz", names), None);
        // Short names: one edit, a transposition counting as one.
        let keys = ["ttl", "tags", "name", "type"];
        assert_eq!(super::closest("tll", keys), Some("ttl"));
        assert_eq!(super::closest("tlt", keys), Some("ttl"));
        assert_eq!(super::closest("tpye", keys), Some("type"));
        assert_eq!(super::closest("nmae", keys), Some("name"));
        assert_eq!(super::closest("xyz", keys), None);
        assert_eq!(super::closest("a", keys), None);
        // Long hostile strings are not compared at all (either side).
        let long = "e".repeat(100_000);
        assert_eq!(super::closest(&long, keys), None);
        assert_eq!(super::closest("ttl", [long.as_str(), "ttl"]), Some("ttl"));
        // Fewest edits win over a shared prefix.
        assert_eq!(super::closest("tagz", ["tags", "tag_zone"]), Some("tags"));
    }
}
