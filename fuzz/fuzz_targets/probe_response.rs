//! Arbitrary bytes → L0 probe parser → probe/host state machine.
//!
//! Checks that nothing panics, that every parsed response survives its own
//! wire form unchanged, and that every state has a user-visible message.

#![no_main]

use libfuzzer_sys::fuzz_target;
use lumo_protocol::{HostState, ProbeOutcome, ProbeResponse, parse_probe_response};

fuzz_target!(|data: &[u8]| {
    let parsed = parse_probe_response(data);
    if let Ok(response) = &parsed {
        assert_eq!(ProbeResponse::from_value(&response.to_json()).as_ref(), Ok(response));
    }
    let state = HostState::from_probe(ProbeOutcome::from(parsed));
    assert!(!state.user_message().is_empty());
    assert!(!state.with_tool_count(data.len()).user_message().is_empty());
});
