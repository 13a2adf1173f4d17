//! The exposition formats, chosen by the scraper's `Accept` header: the Prometheus text
//! format 0.0.4 by default (what every scraper reads), OpenMetrics 1.0.0 when the header
//! prefers `application/openmetrics-text` (as Prometheus itself sends it). Both are encoded by
//! `prometheus-client`, never by hand.

use prometheus_client::encoding::{prometheus_text, text};
use prometheus_client::registry::Registry;

/// The `Content-Type` of the Prometheus text format 0.0.4.
pub const PROMETHEUS_TEXT: &str = prometheus_text::CONTENT_TYPE;

/// The `Content-Type` of the OpenMetrics text format.
pub const OPENMETRICS_TEXT: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Whether `accept` prefers OpenMetrics to the Prometheus text format: its quality for
/// `application/openmetrics-text` is above zero and at least that of `text/plain` (or of
/// `*/*` when `text/plain` is not named).
pub fn wants_openmetrics(accept: Option<&str>) -> bool {
    let Some(accept) = accept else {
        return false;
    };
    let (mut openmetrics, mut plain, mut any) = (None::<f32>, None::<f32>, None::<f32>);
    for range in accept.split(',') {
        let mut parts = range.split(';');
        let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
        let q = parts
            .filter_map(|p| p.trim().strip_prefix("q="))
            .find_map(|q| q.trim().parse::<f32>().ok())
            .unwrap_or(1.0);
        let slot = match media.as_str() {
            "application/openmetrics-text" => &mut openmetrics,
            "text/plain" | "text/*" => &mut plain,
            "*/*" => &mut any,
            _ => continue,
        };
        // The best quality a range of that type was given.
        *slot = Some(slot.map_or(q, |s| s.max(q)));
    }
    match openmetrics {
        Some(q) if q > 0.0 => q >= plain.or(any).unwrap_or(0.0),
        _ => false,
    }
}

/// The metrics in `registry` in the format `accept` prefers: `(Content-Type, body)`.
pub fn encode(registry: &Registry, accept: Option<&str>) -> (&'static str, String) {
    let mut body = String::new();
    // Writing to a String cannot fail; an encoder error would be a bug in a metric's name.
    if wants_openmetrics(accept) {
        let _ = text::encode(&mut body, registry);
        (OPENMETRICS_TEXT, body)
    } else {
        let _ = prometheus_text::encode(&mut body, registry);
        (PROMETHEUS_TEXT, body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prometheus_client::metrics::counter::Counter;
    use prometheus_client::metrics::family::Family;

    #[test]
    fn the_scraper_chooses_the_format() {
        // What Prometheus 2.x and 3.x send.
        let prometheus = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;\
                          version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        assert!(wants_openmetrics(Some(prometheus)));
        assert!(!wants_openmetrics(None));
        assert!(!wants_openmetrics(Some("*/*")));
        assert!(!wants_openmetrics(Some("text/plain")));
        assert!(!wants_openmetrics(Some(
            "text/plain;version=0.0.4,application/openmetrics-text;q=0.5"
        )));
        assert!(!wants_openmetrics(Some("application/openmetrics-text;q=0")));
        assert!(wants_openmetrics(Some("application/openmetrics-text")));
    }

    #[test]
    fn both_formats_carry_the_same_samples() {
        let mut registry = Registry::default();
        let polls = Family::<[(&'static str, &'static str); 1], Counter>::default();
        registry.register("perago_test_polls", "Polls", polls.clone());
        polls.get_or_create(&[("outcome", "tasks")]).inc_by(3);

        let (content_type, plain) = encode(&registry, None);
        assert_eq!(content_type, "text/plain; version=0.0.4; charset=utf-8");
        assert!(!plain.contains("# EOF"), "{plain}");
        let scrape = prometheus_parse::Scrape::parse(plain.lines().map(|l| Ok(l.to_owned())))
            .expect("the text format parses");
        let sample = &scrape.samples[0];
        assert_eq!(sample.metric, "perago_test_polls_total");
        assert_eq!(sample.labels.get("outcome"), Some("tasks"));
        assert_eq!(sample.value, prometheus_parse::Value::Counter(3.0));

        let (content_type, open) = encode(&registry, Some("application/openmetrics-text"));
        assert_eq!(content_type, OPENMETRICS_TEXT);
        assert!(open.ends_with("# EOF\n"), "{open}");
        assert!(open.contains("perago_test_polls_total{outcome=\"tasks\"} 3"));
    }
}
