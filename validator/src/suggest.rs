//! "Did you mean" suggestions.

/// The candidate closest to `input`, if it is close enough to be a plausible typo: within
/// a small edit distance (transpositions count once, so `tll` finds `ttl`) or similar by
/// Jaro-Winkler (which favours long names with a common prefix). Fewest edits first.
pub fn closest<'a>(input: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let input = input.to_ascii_lowercase();
    // One edit per four characters, at least one: `ttl` -> `tll`, `feautres` -> `features`.
    let max_edits = (input.chars().count() / 4).max(1);
    candidates
        .into_iter()
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
        // Fewest edits win over a shared prefix.
        assert_eq!(super::closest("tagz", ["tags", "tag_zone"]), Some("tags"));
    }
}
