#!/usr/bin/env bash
# Fuzz lumo-protocol's L0 probe parser and probe → host state machine.
#
# Usage: fuzz/run.sh [SECONDS] [libFuzzer args...]   (default: 60 seconds)
#
# Works on stable Rust: cargo-fuzz needs nightly flags, which
# RUSTC_BOOTSTRAP=1 unlocks. The seeds are copied into a scratch corpus so
# the run never writes into the repository's seed directory; the new corpus
# entries and any crash artifacts stay in that scratch directory.
set -euo pipefail

seconds="${1:-60}"
shift || true
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

if ! command -v cargo-fuzz >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
fi

scratch="$(mktemp -d "${TMPDIR:-/tmp}/lumo-fuzz.XXXXXX")"
mkdir -p "$scratch/corpus" "$scratch/artifacts"
cp "$here/seeds/probe_response/"* "$scratch/corpus/"

cd "$here/.."
RUSTC_BOOTSTRAP=1 cargo fuzz run probe_response "$scratch/corpus" -- \
    -max_total_time="$seconds" -artifact_prefix="$scratch/artifacts/" "$@"
echo "corpus and artifacts: $scratch"
