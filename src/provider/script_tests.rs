//! The `script` provider's scenarios: panes of one scenario share it.

use std::sync::Arc;

use super::Scenario;

const ONE: &str = "[[turn]]\n[[turn.step]]\ntext = \"one\"\n";
const TWO: &str = "[[turn]]\n[[turn.step]]\ntext = \"two\"\n";

/// Two loads of one text are one scenario in memory; a changed file is
/// parsed afresh, and one no pane holds any more is not kept.
#[test]
fn panes_of_one_scenario_share_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.toml");
    std::fs::write(&path, ONE).unwrap();
    let a = Scenario::load_shared(&path).unwrap();
    let b = Scenario::load_shared(&path).unwrap();
    assert!(Arc::ptr_eq(&a, &b));
    std::fs::write(&path, TWO).unwrap();
    let c = Scenario::load_shared(&path).unwrap();
    assert!(!Arc::ptr_eq(&a, &c));
    assert_eq!(c.turns[0].steps[0].text.as_deref(), Some("two"));
    let weak = Arc::downgrade(&c);
    drop(c);
    assert!(
        weak.upgrade().is_none(),
        "the cache keeps no scenario alive"
    );
    let demo = Scenario::load_shared(std::path::Path::new("demo:tour")).unwrap();
    assert!(Arc::ptr_eq(
        &demo,
        &Scenario::load_shared(std::path::Path::new("demo:tour")).unwrap()
    ));
}
