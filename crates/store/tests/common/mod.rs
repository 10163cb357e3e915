// Shared by the store's integration tests.
#![allow(dead_code)]

#[path = "../../src/synthetic.rs"]
pub mod synthetic;

use iomark_model::RunDocument;
use iomark_store::StoredRun;

/// The stored document must be the one written, field for field.
pub fn assert_same_document(stored: &StoredRun, doc: &RunDocument) {
    let back = stored.document().expect("stored document reads back");
    assert_eq!(&back, doc);
    assert_eq!(stored.figures, doc.body.figures());
}
