//! With both proposed fixes (the generation fence, and a live-lease poison that spares a
//! terminal execution) every safety property holds over the whole CI bound.

mod common;

use steadfast_model::ModelConfig;

#[test]
fn with_both_fences_every_safety_property_holds() {
    for m in [1, 2] {
        let label = format!("new ceiling, both fences, M = {m}");
        common::assert_all_hold(&label, ModelConfig::ci(m).fenced());
    }
}
