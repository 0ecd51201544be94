//! "Did you mean" suggestions.

/// The candidate closest to `input` by Jaro-Winkler similarity, if it is close enough to
/// be a plausible typo.
pub fn closest<'a>(input: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let input = input.to_ascii_lowercase();
    candidates
        .into_iter()
        .map(|candidate| {
            (
                strsim::jaro_winkler(&input, &candidate.to_ascii_lowercase()),
                candidate,
            )
        })
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, candidate)| candidate)
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
    }
}
