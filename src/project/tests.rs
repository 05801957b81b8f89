#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

use std::path::Path;

use super::*;

fn project_at(dir: &Path) -> Project {
    std::fs::create_dir_all(dir).unwrap();
    let file = dir.join("hive.toml");
    std::fs::write(&file, "").unwrap();
    Project::of(&ConfigSource::File(file))
}

/// What an older hive left: `echo`'s history and state, and the layouts of
/// the servers named in `layouts` (oldest first).
fn older(data: &Path, layouts: &[&str]) {
    std::fs::create_dir_all(data.join("history/echo")).unwrap();
    std::fs::write(data.join("history/echo/s1.jsonl"), "{}\n").unwrap();
    std::fs::create_dir_all(data.join("state")).unwrap();
    std::fs::write(data.join("state/echo.json"), "{}").unwrap();
    std::fs::create_dir_all(data.join("layouts")).unwrap();
    for (i, name) in layouts.iter().enumerate() {
        let path = data.join(format!("layouts/{name}.json"));
        std::fs::write(&path, "{}").unwrap();
        let when =
            std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1000 + i as u64);
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(when)
            .unwrap();
    }
}

#[test]
fn one_config_is_one_project_wherever_it_is_named_from() {
    let tmp = tempfile::tempdir().unwrap();
    let a = project_at(&tmp.path().join("work/app"));
    let b = project_at(&tmp.path().join("oss/app"));
    assert_eq!(a.label(), "app");
    assert_eq!(b.label(), "app");
    assert_ne!(a.key(), b.key(), "same-named directories are two projects");
    assert_ne!(a.tagged_label(), b.tagged_label());
    // The same file reached through `..` is the same project.
    let again = Project::of(&ConfigSource::File(
        tmp.path().join("work/app/../app/hive.toml"),
    ));
    assert_eq!(again, a);
    assert_eq!(Project::builtin().key(), "default");
    assert_eq!(a.describe(), a.config_path().unwrap().display().to_string());
}

#[test]
fn older_data_goes_to_the_project_of_the_newest_layout() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    older(&data, &["other", "app"]);
    let other = project_at(&tmp.path().join("x/other"));
    let app = project_at(&tmp.path().join("work/app"));
    let twin = project_at(&tmp.path().join("oss/app"));

    // `other` used hive before `app` did: it gets its layout, not the
    // conversations `app` left last.
    let dir = other.prepare_in(&data, &["echo"]);
    assert!(dir.join(MARKER).is_file());
    assert!(dir.join("layout.json").is_file());
    assert!(!dir.join("history").exists());
    assert!(data.join("history/echo/s1.jsonl").is_file());

    let dir = app.prepare_in(&data, &["echo"]);
    assert!(dir.join("history/echo/s1.jsonl").is_file());
    assert!(dir.join("state/echo.json").is_file());
    assert!(dir.join("layout.json").is_file());
    assert!(!data.join("history").exists() && !data.join("state").exists());

    // A second project of the same name finds nothing left to take.
    let dir = twin.prepare_in(&data, &["echo"]);
    assert!(dir.join(MARKER).is_file());
    assert!(!dir.join("history").exists());
    // Opened again, a project is as it was.
    let dir = app.prepare_in(&data, &["echo"]);
    assert!(dir.join("history/echo/s1.jsonl").is_file());
}

#[test]
fn without_layouts_older_data_goes_to_a_project_with_its_agents() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    older(&data, &[]);
    let stranger = project_at(&tmp.path().join("elsewhere"));
    let dir = stranger.prepare_in(&data, &["claude"]);
    assert!(!dir.join("history").exists(), "no agent of it kept state");
    let owner = project_at(&tmp.path().join("app"));
    let dir = owner.prepare_in(&data, &["echo"]);
    assert!(dir.join("history/echo/s1.jsonl").is_file());
}

#[test]
fn a_migration_cut_short_is_finished_and_nothing_is_lost() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    older(&data, &["app"]);
    let app = project_at(&tmp.path().join("work/app"));
    let twin = project_at(&tmp.path().join("oss/app"));
    // As a crash leaves it: the claim written, the state moved, the
    // history and the layout not yet.
    let projects = data.join("projects");
    let staging = projects.join(format!("{}.migrating", app.key()));
    std::fs::create_dir_all(&staging).unwrap();
    let claim = serde_json::json!({
        "key": app.key(), "label": app.label(), "all": true, "marker": app.marker_json(),
    });
    std::fs::write(staging.join("claim.json"), claim.to_string()).unwrap();
    std::fs::rename(data.join("state"), staging.join("state")).unwrap();

    // Whichever project opens next finishes the claim first: the twin gets
    // nothing of it, the claimant all of it.
    let dir = twin.prepare_in(&data, &["echo"]);
    assert!(!dir.join("history").exists() && !dir.join("state").exists());
    let dir = app.dir_in(&data);
    assert!(dir.join(MARKER).is_file());
    assert!(dir.join("state/echo.json").is_file());
    assert!(dir.join("history/echo/s1.jsonl").is_file());
    assert!(dir.join("layout.json").is_file());
    assert!(!staging.exists());
    assert!(!dir.join("claim.json").exists());
    // A staging dir cut before its claim was written held nothing.
    let empty = projects.join("x-1.migrating");
    std::fs::create_dir_all(&empty).unwrap();
    project_at(&tmp.path().join("third")).prepare_in(&data, &[]);
    assert!(!empty.exists());
}
