//! Counts over one part of a view's data (a partition of a Spark DataFrame), merged into
//! the counts of the whole. Sums add up; sampled rows carry a key whose byte order is
//! the order every sample query sorts by, so the merged sample is the one a single query
//! over all the data would pick, whatever the split and the order parts arrive in.
//!
//! Duplicates and stale keys add up only when every entity key's rows are in one part:
//! the caller splits the data by the entity keys (by the event time for a view without
//! keys).

use arrowfeat_validator::checks::data::{DataColumn, DataCounts, Matched};
use serde::{Deserialize, Serialize};

/// A sampled row as shown, and its sort key (hex of the Arrow row format, ascending,
/// nulls first, over every shown column).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SampledRow {
    pub key: String,
    pub text: String,
}

/// Rows a predicate matched in a part, and its first sampled rows.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartMatched {
    pub rows: u64,
    pub sample: Vec<SampledRow>,
}

impl PartMatched {
    /// The rows of both, and the first `limit` rows of both samples in key order.
    pub fn merge(self, other: PartMatched, limit: usize) -> PartMatched {
        PartMatched {
            rows: self.rows.saturating_add(other.rows),
            sample: merge_sample(self.sample, other.sample, limit),
        }
    }

    /// The sample sorted and cut to `limit` (a part from elsewhere may be longer).
    pub fn cut(mut self, limit: usize) -> PartMatched {
        self.sample.sort_by(|x, y| x.key.cmp(&y.key));
        self.sample.truncate(limit);
        self
    }

    /// As findings show it: the rows, and the sample's text.
    pub fn finish(self) -> Matched {
        Matched {
            rows: self.rows,
            sample: self.sample.into_iter().map(|r| r.text).collect(),
        }
    }
}

/// `text` as the `T` a worker sent, `what` naming it in the error.
pub(crate) fn from_json<T: serde::de::DeserializeOwned>(
    text: &str,
    what: &str,
) -> Result<T, String> {
    serde_json::from_str(text)
        .map_err(|e| format!("not {what} (line {}, column {})", e.line(), e.column()))
}

/// What the engine counted over one part of the data: [`DataCounts`] with sort keys.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PartCounts {
    pub rows: u64,
    pub columns: Vec<DataColumn>,
    pub checks: Vec<Option<PartMatched>>,
    pub exact_duplicates: Option<PartMatched>,
    pub conflicting: Option<PartMatched>,
    /// Keys (one for a view without entity keys), and those whose latest event is older
    /// than the TTL.
    pub keys: Option<u64>,
    pub stale_keys: Option<PartMatched>,
    /// The view has no entity keys: its one "key" is stale when every part's latest event
    /// is, so stale keys do not add up.
    pub keyless: bool,
    /// Some key has a latest event (a part of only null event times has none: for a view
    /// without keys it neither freshens nor stales the one key).
    #[serde(default)]
    pub has_latest: bool,
    /// The part could not be counted (a worker's error): the data is unreadable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unreadable: Option<String>,
}

/// The first `limit` rows of both samples in key order.
fn merge_sample(mut a: Vec<SampledRow>, b: Vec<SampledRow>, limit: usize) -> Vec<SampledRow> {
    a.extend(b);
    a.sort_by(|x, y| x.key.cmp(&y.key));
    a.truncate(limit);
    a
}

fn merge_matched(
    what: &str,
    a: Option<PartMatched>,
    b: Option<PartMatched>,
    limit: usize,
) -> Result<Option<PartMatched>, String> {
    match (a, b) {
        (None, None) => Ok(None),
        (Some(a), Some(b)) => Ok(Some(a.merge(b, limit))),
        _ => Err(format!(
            "the parts of the data were counted with different checks ({what})"
        )),
    }
}

impl PartCounts {
    /// A part that could not be counted, and why.
    pub fn unreadable(message: String) -> PartCounts {
        PartCounts {
            unreadable: Some(message),
            ..PartCounts::default()
        }
    }

    /// The counts of both parts together; `limit`: the rows a sample keeps.
    pub fn merge(self, other: PartCounts, limit: usize) -> Result<PartCounts, String> {
        if self.columns != other.columns {
            return Err(format!(
                "the parts of the data have different columns: {} and {}",
                columns_text(&self.columns),
                columns_text(&other.columns)
            ));
        }
        if self.checks.len() != other.checks.len() || self.keyless != other.keyless {
            return Err("the parts of the data were counted with different checks".into());
        }
        let checks = self
            .checks
            .into_iter()
            .zip(other.checks)
            .map(|(a, b)| merge_matched("values", a, b, limit))
            .collect::<Result<Vec<_>, _>>()?;
        let (keys, stale_keys) = if self.keyless {
            // One key over all the data: stale when the latest event of every non-empty
            // part is.
            match (self.has_latest, other.has_latest) {
                (false, _) => (other.keys, other.stale_keys),
                (_, false) => (self.keys, self.stale_keys),
                _ => {
                    let stale = |m: &Option<PartMatched>| m.as_ref().is_some_and(|m| m.rows > 0);
                    let both = stale(&self.stale_keys) && stale(&other.stale_keys);
                    let merged = merge_matched("stale keys", self.stale_keys, other.stale_keys, 0)?;
                    (
                        self.keys.zip(other.keys).map(|_| 1),
                        merged.map(|_| PartMatched {
                            rows: u64::from(both),
                            sample: Vec::new(),
                        }),
                    )
                }
            }
        } else {
            let keys = match (self.keys, other.keys) {
                (Some(a), Some(b)) => Some(a.saturating_add(b)),
                (None, None) => None,
                _ => return Err("the parts of the data were counted with different checks".into()),
            };
            (
                keys,
                merge_matched("stale keys", self.stale_keys, other.stale_keys, limit)?,
            )
        };
        Ok(PartCounts {
            rows: self.rows.saturating_add(other.rows),
            columns: self.columns,
            checks,
            exact_duplicates: merge_matched(
                "duplicates",
                self.exact_duplicates,
                other.exact_duplicates,
                limit,
            )?,
            conflicting: merge_matched("duplicates", self.conflicting, other.conflicting, limit)?,
            keys,
            stale_keys,
            keyless: self.keyless,
            has_latest: self.has_latest || other.has_latest,
            unreadable: None,
        })
    }

    /// Every part merged; `None` for no part. A part that could not be counted makes the
    /// whole unreadable (the first reason in text order, whatever the order of parts).
    pub fn merge_all(
        parts: impl IntoIterator<Item = PartCounts>,
        limit: usize,
    ) -> Result<Option<PartCounts>, String> {
        let parts: Vec<PartCounts> = parts.into_iter().collect();
        if let Some(reason) = parts.iter().filter_map(|p| p.unreadable.as_ref()).min() {
            return Err(reason.clone());
        }
        let mut merged: Option<PartCounts> = None;
        for part in parts {
            merged = Some(match merged {
                None => PartCounts {
                    checks: part
                        .checks
                        .into_iter()
                        .map(|m| m.map(|m| m.cut(limit)))
                        .collect(),
                    exact_duplicates: part.exact_duplicates.map(|m| m.cut(limit)),
                    conflicting: part.conflicting.map(|m| m.cut(limit)),
                    stale_keys: part.stale_keys.map(|m| m.cut(limit)),
                    ..part
                },
                Some(merged) => merged.merge(part, limit)?,
            });
        }
        Ok(merged)
    }

    /// The counts for [`arrowfeat_validator::checks::data::findings`].
    pub fn finish(self) -> DataCounts {
        let done = PartMatched::finish;
        DataCounts {
            rows: self.rows,
            columns: self.columns,
            checks: self.checks.into_iter().map(|m| m.map(done)).collect(),
            exact_duplicates: self.exact_duplicates.map(done),
            conflicting: self.conflicting.map(done),
            keys: self.keys,
            stale_keys: self.stale_keys.map(done),
        }
    }

    /// The part as text, to send from a worker to the driver.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// A part [`PartCounts::to_json`] wrote.
    pub fn from_json(text: &str) -> Result<PartCounts, String> {
        from_json(text, "the counts of a part of the data")
    }
}

fn columns_text(columns: &[DataColumn]) -> String {
    let names: Vec<String> = columns
        .iter()
        .take(8)
        .map(|c| format!("{} {}", arrowfeat_common::quote(&c.name, 60), c.arrow))
        .collect();
    let more = columns.len().saturating_sub(8);
    match more {
        0 => format!("({})", names.join(", ")),
        _ => format!("({}, and {more} more)", names.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(key: &str) -> SampledRow {
        SampledRow {
            key: key.into(),
            text: format!("row {key}"),
        }
    }

    fn part(rows: u64, matched: u64, sample: &[&str], keyless: bool, stale: u64) -> PartCounts {
        let m = |rows| {
            Some(PartMatched {
                rows,
                sample: sample.iter().map(|k| row(k)).collect(),
            })
        };
        PartCounts {
            rows,
            columns: vec![DataColumn {
                name: "a".into(),
                read_as: None,
                arrow: "Int16".into(),
            }],
            checks: vec![m(matched), None],
            exact_duplicates: m(0),
            conflicting: m(matched),
            keys: Some(if keyless { 1 } else { rows }),
            stale_keys: Some(PartMatched {
                rows: stale,
                sample: Vec::new(),
            }),
            keyless,
            has_latest: rows > 0,
            unreadable: None,
        }
    }

    #[test]
    fn sums_add_and_samples_keep_the_first_rows_in_key_order() {
        let merged = PartCounts::merge_all(
            [
                part(10, 2, &["0b", "0d"], false, 1),
                part(5, 3, &["0a", "0c", "ff"], false, 2),
            ],
            3,
        )
        .unwrap()
        .unwrap();
        assert_eq!(merged.rows, 15);
        assert_eq!(merged.keys, Some(15));
        assert_eq!(merged.stale_keys.as_ref().unwrap().rows, 3);
        let first = merged.checks[0].as_ref().unwrap();
        assert_eq!(first.rows, 5);
        let keys: Vec<&str> = first.sample.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(keys, ["0a", "0b", "0c"]);
        assert_eq!(merged.checks[1], None);
        // The order parts arrive in changes nothing.
        let reversed = PartCounts::merge_all(
            [
                part(5, 3, &["0a", "0c", "ff"], false, 2),
                part(10, 2, &["0b", "0d"], false, 1),
            ],
            3,
        )
        .unwrap()
        .unwrap();
        assert_eq!(merged, reversed);
    }

    #[test]
    fn one_part_is_cut_to_the_sample_size() {
        let one = PartCounts::merge_all([part(3, 3, &["03", "01", "02"], false, 0)], 2)
            .unwrap()
            .unwrap();
        let keys: Vec<&str> = one.checks[0]
            .as_ref()
            .unwrap()
            .sample
            .iter()
            .map(|r| r.key.as_str())
            .collect();
        assert_eq!(keys, ["01", "02"]);
        assert_eq!(PartCounts::merge_all([], 2).unwrap(), None);
    }

    #[test]
    fn a_view_without_keys_has_one_key_stale_only_when_every_part_is() {
        let merge = |parts: Vec<PartCounts>| PartCounts::merge_all(parts, 5).unwrap().unwrap();
        let stale = merge(vec![part(4, 0, &[], true, 1), part(2, 0, &[], true, 1)]);
        assert_eq!((stale.keys, stale.stale_keys.unwrap().rows), (Some(1), 1));
        let fresh = merge(vec![part(4, 0, &[], true, 1), part(2, 0, &[], true, 0)]);
        assert_eq!((fresh.keys, fresh.stale_keys.unwrap().rows), (Some(1), 0));
        // An empty part has no latest event: it neither freshens nor stales the key; nor
        // does a part of null event times.
        let empty = merge(vec![part(0, 0, &[], true, 0), part(2, 0, &[], true, 1)]);
        assert_eq!((empty.keys, empty.stale_keys.unwrap().rows), (Some(1), 1));
        let mut null_times = part(3, 0, &[], true, 0);
        null_times.has_latest = false;
        let nulls = merge(vec![part(2, 0, &[], true, 1), null_times]);
        assert_eq!((nulls.keys, nulls.stale_keys.unwrap().rows), (Some(1), 1));
    }

    #[test]
    fn parts_that_disagree_are_refused_and_text_round_trips() {
        let mut other = part(1, 0, &[], false, 0);
        other.columns[0].arrow = "Int32".into();
        let err = part(1, 0, &[], false, 0).merge(other, 5).unwrap_err();
        assert!(err.contains("different columns"), "{err}");
        let p = part(7, 1, &["00"], false, 0);
        assert_eq!(PartCounts::from_json(&p.to_json()).unwrap(), p);
        let err = PartCounts::merge_all(
            [
                p.clone(),
                PartCounts::unreadable("b".into()),
                PartCounts::unreadable("a".into()),
            ],
            5,
        )
        .unwrap_err();
        assert_eq!(err, "a");
        let err = PartCounts::from_json("{\"rows\": -1}").unwrap_err();
        assert!(err.starts_with("not the counts of a part"), "{err}");
    }
}
