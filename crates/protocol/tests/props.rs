//! Property tests of the public rules: names, probe parsing, rate window.

use std::time::Duration;

use lumo_protocol::{
    HostState, MAX_QUALIFIED_LEN, ProbeReply, ProbeResponse, ProbeStatus, ProtocolFailure, QualifiedName, RateLimiter,
    ServiceInfo, is_extension_id, is_model_function_name, parse_probe_response, qualified_name, split_qualified,
    validate_namespace, validate_tool_name,
};
use proptest::prelude::*;
use serde_json::Value;

proptest! {
    #[test]
    fn valid_qualified_names_are_function_names_and_split_back(
        ns in "[a-z][a-z0-9]{0,20}",
        tool in "[A-Za-z0-9][A-Za-z0-9_-]{0,45}",
    ) {
        match qualified_name(&ns, &tool) {
            Ok(q) => {
                prop_assert!(is_model_function_name(q.as_str()));
                prop_assert!(q.as_str().len() <= MAX_QUALIFIED_LEN);
                prop_assert_eq!(split_qualified(q.as_str()), Some((ns.as_str(), tool.as_str())));
                prop_assert_eq!(QualifiedName::parse(q.as_str()), Ok(q.clone()));
            }
            // Refused only when a part is over budget.
            Err(_) => prop_assert!(ns.len() > 16 || tool.len() > 40),
        }
    }

    #[test]
    fn arbitrary_strings_never_panic_and_splits_are_exact(s in any::<String>(), t in "[ -~]{0,80}") {
        for s in [s.as_str(), t.as_str()] {
            let _ = (validate_namespace(s), validate_tool_name(s), is_extension_id(s));
            let _ = QualifiedName::parse(s);
            if let Some((ns, tool)) = split_qualified(s) {
                let q = qualified_name(ns, tool);
                prop_assert_eq!(q.as_ref().map(QualifiedName::as_str), Ok(s));
            }
            if let Some(ns) = s.split('_').next() {
                let _ = qualified_name(ns, s);
            }
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic_the_probe_path(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        let state = HostState::from_probe(parse_probe_response(&bytes).into());
        let _ = state.with_tool_count(3).user_message();
    }

    #[test]
    fn arbitrary_json_never_panics_the_probe_path(value in json_value()) {
        let _ = HostState::from_probe(ProbeResponse::from_value(&value).into()).user_message();
        let mut object = serde_json::Map::new();
        object.insert("ok".into(), Value::Bool(true));
        object.insert("status".into(), value.clone());
        object.insert("service".into(), value);
        let _ = HostState::from_probe(ProbeResponse::from_value(&object.into()).into());
    }

    #[test]
    fn probe_responses_round_trip(response in probe_response()) {
        let wire = serde_json::to_vec(&response.to_json()).expect("serialize");
        prop_assert_eq!(parse_probe_response(&wire), Ok(response));
    }

    #[test]
    fn limiter_matches_a_naive_model(
        limit in 0usize..5,
        window_ms in 0u64..100,
        steps in proptest::collection::vec((0usize..3, 0u64..40), 0..200),
    ) {
        let window = Duration::from_millis(window_ms);
        let mut limiter = RateLimiter::<String>::new(limit, window);
        let mut admitted: Vec<(usize, Duration)> = Vec::new();
        let mut now = Duration::ZERO;
        for (caller, dt) in steps {
            now += Duration::from_millis(dt);
            // Admitted calls of this caller inside (now - window, now].
            let in_window: Vec<Duration> = admitted
                .iter()
                .filter(|&&(c, s)| c == caller && s + window > now)
                .map(|&(_, s)| s)
                .collect();
            let expected = if in_window.len() < limit {
                Ok(())
            } else {
                let oldest = in_window.iter().min().copied();
                Err(oldest.map_or(window, |s| s + window - now))
            };
            let got = limiter.check(&caller.to_string(), now).map_err(|e| e.retry_after);
            prop_assert_eq!(got, expected);
            if got.is_ok() {
                admitted.push((caller, now));
            }
        }
        // Never more than `limit` admissions of one caller in any window.
        for &(caller, end) in &admitted {
            let count = admitted
                .iter()
                .filter(|&&(c, s)| c == caller && s <= end && s + window > end)
                .count();
            prop_assert!(count <= limit);
        }
    }

    #[test]
    fn limiter_memory_stays_bounded(
        max_callers in 1usize..8,
        steps in proptest::collection::vec((0usize..50, 0u64..30), 0..300),
    ) {
        let mut limiter = RateLimiter::<String>::new(3, Duration::from_millis(100))
            .with_max_callers(max_callers);
        let mut now = Duration::ZERO;
        for (caller, dt) in steps {
            now += Duration::from_millis(dt);
            let _ = limiter.check(&caller.to_string(), now);
            prop_assert!(limiter.tracked_callers() <= max_callers);
        }
    }
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        "[a-z ]{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::btree_map(
                prop_oneof![
                    Just("ok".to_owned()),
                    Just("enabled".to_owned()),
                    Just("namespace".to_owned()),
                    Just("error".to_owned()),
                    "[a-z]{1,6}",
                ],
                inner,
                0..6
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn probe_response() -> impl Strategy<Value = ProbeResponse> {
    let text = || proptest::option::of(".{0,12}");
    let service =
        proptest::option::of((".{0,12}", ".{0,12}", ".{0,12}").prop_map(|(namespace, name, version)| ServiceInfo {
            namespace,
            name,
            version,
        }));
    let status = proptest::option::of(any::<[bool; 4]>().prop_map(|[enabled, authorized, ready, pending_approval]| {
        ProbeStatus { enabled, authorized, ready, pending_approval }
    }));
    prop_oneof![
        (service, status, text())
            .prop_map(|(service, status, reason)| { ProbeResponse::Reply(ProbeReply { service, status, reason }) }),
        (text(), text()).prop_map(|(code, message)| ProbeResponse::Failure(ProtocolFailure { code, message })),
    ]
}
