//! PNG charts: the same SVG, rasterised by resvg with the system's fonts.

use resvg::{tiny_skia, usvg};

use crate::{Chart, ReportError};

/// The options (and the font database) every chart is rendered with.
pub struct Fonts {
    opt: usvg::Options<'static>,
}

impl Fonts {
    /// Load the system's fonts; text needs at least one.
    pub fn load() -> Result<Fonts, ReportError> {
        let mut opt = usvg::Options {
            font_family: "DejaVu Sans".into(),
            ..usvg::Options::default()
        };
        let db = opt.fontdb_mut();
        db.load_system_fonts();
        if db.is_empty() {
            return Err(ReportError::Png {
                chart: "(all)".into(),
                reason: "no fonts found for the chart text: install one, e.g. \
                         `apt-get install fonts-dejavu-core`"
                    .into(),
            });
        }
        db.set_sans_serif_family("DejaVu Sans");
        Ok(Fonts { opt })
    }

    /// The chart at `scale` times its SVG size.
    pub fn render(&self, chart: &Chart, scale: u32) -> Result<Vec<u8>, ReportError> {
        let err = |reason: String| ReportError::Png {
            chart: chart.id.clone(),
            reason,
        };
        let tree = usvg::Tree::from_str(&chart.svg, &self.opt).map_err(|e| err(e.to_string()))?;
        let scale = scale.max(1);
        // A chart with its legend under the plot is taller than the rest.
        let size = tree.size().to_int_size();
        let mut pixmap = tiny_skia::Pixmap::new(size.width() * scale, size.height() * scale)
            .ok_or_else(|| err("image too large: use a smaller --png-scale".into()))?;
        resvg::render(
            &tree,
            tiny_skia::Transform::from_scale(scale as f32, scale as f32),
            &mut pixmap.as_mut(),
        );
        pixmap.encode_png().map_err(|e| err(e.to_string()))
    }
}
