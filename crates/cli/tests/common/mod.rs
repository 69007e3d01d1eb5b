//! Shared helpers of the `lumo` integration tests: the workspace's test kit
//! (`crates/testkit`), re-exported so every test file can `mod common;` and
//! `use common::…`. New helpers belong in the kit; append here only what is
//! specific to this crate's tests.

#![allow(dead_code, unused_imports)] // Each test file uses its own subset.

pub(crate) use lumo_testkit::{
    Answer, AnswerView, FixtureServer, HttpLumo, INITIALIZE, Lumo, Route, assert_answer, browser_pid, children_of,
    copy_dir, fixtures_dir, free_port, header, http_session, lumo_command, post_mcp, ref_in, try_ref_in,
};
