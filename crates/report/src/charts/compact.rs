//! The compact form of a grouped bar chart with more runs than colours.

use super::slug;
use crate::svg::{BarChart, RankedBars, RankedRow};

/// A grouped bar chart as one ranked chart per category, its id and title
/// suffixed with the category.
pub(super) fn ranked(chart: &BarChart) -> Vec<RankedBars> {
    chart
        .categories
        .iter()
        .enumerate()
        .map(|(ci, cat)| RankedBars {
            id: format!("{}-{}", chart.id, slug(cat)),
            title: format!("{}: {cat}", chart.title),
            x_label: chart.y_label.clone(),
            rows: chart
                .series
                .iter()
                .filter_map(|s| {
                    Some(RankedRow {
                        name: s.name.clone(),
                        bar: s.bars.get(ci)?.clone()?,
                    })
                })
                .collect(),
            reference: chart.reference,
        })
        .filter(|r| !r.rows.is_empty())
        .collect()
}
