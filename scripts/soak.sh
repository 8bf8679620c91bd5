#!/usr/bin/env bash
# Soak run: `spatix sim` for a long time on the structures people leave running for hours,
# with a brute-force recount of 1000 sampled agents' pairs and a len() check every K frames.
# It fails (exit 1) on the first difference; the table at the end says whether the index's
# memory and the process's resident memory stayed flat over the second half of the run.
#
#   scripts/soak.sh [FRAMES] [AGENTS] [INDEX...]    (default 100000 100000 loose-grid quadtree)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
frames=${1:-100000}
agents=${2:-100000}
shift $(( $# > 2 ? 2 : $# ))
indexes=("$@")
if [[ ${#indexes[@]} -eq 0 ]]; then
    indexes=(loose-grid quadtree)
fi
cargo build --release -p spatix-cli
for index in "${indexes[@]}"; do
    echo "== soak: $index, $agents agents, $frames frames"
    ./target/release/spatix sim --index "$index" --agents "$agents" --frames "$frames" \
        --verify-every 1000
done
